#include "harness/case_context_file.h"

#include "harness/case_file.h"
#include "harness/exchange.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace flashproof {
namespace {

constexpr char kMagic[8] = {'F', 'P', 'C', 'T', 'X', '1', '\n', '\0'};

// Everything that determines the prepared context, exactly: the case without its implementation,
// and the options (the reference's among them), in the case-file format.
std::string case_key(const Case& c, const CheckOptions& opt) {
  Case key = c;
  key.impl.clear();
  return case_to_json(key, opt);
}

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  template <class T>
  void pod(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    out_.write(reinterpret_cast<const char*>(&x), sizeof x);
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    out_.write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  }
  void str(const std::string& s) { vec(std::vector<char>(s.begin(), s.end())); }
  void tensor(const reference::CertifiedTensor& t) {
    pod(t.shape);
    vec(t.value), vec(t.bound), vec(t.checked), vec(t.magnitude);
  }
  void stats(const reference::Stats& s) {
    pod(s.rows_computed), pod(s.columns_computed), pod(s.fallback_rows), pod(s.fallback_columns);
    str(s.sampling);
    pod(s.max_abs_logit);
  }
  void host(const HostTensor& t) {  // element bits in logical order (any strides)
    pod(static_cast<std::uint8_t>(!t.empty()));
    if (t.empty()) return;
    pod(static_cast<std::uint8_t>(t.dtype())), pod(static_cast<std::int32_t>(t.rank())), pod(t.shape());
    std::vector<std::uint32_t> bits;
    bits.reserve(static_cast<std::size_t>(t.numel()));
    const Shape& s = t.shape();
    for (std::int64_t a = 0; a < s[0]; ++a)
      for (std::int64_t b = 0; b < s[1]; ++b)
        for (std::int64_t c = 0; c < s[2]; ++c)
          for (std::int64_t d = 0; d < s[3]; ++d) bits.push_back(t.bits(a, b, c, d));
    vec(bits);
  }

 private:
  std::ostream& out_;
};

class Reader {
 public:
  explicit Reader(std::istream& in) : in_(in) {}
  template <class T>
  T pod() {
    T x{};
    in_.read(reinterpret_cast<char*>(&x), sizeof x);
    if (!in_) throw std::runtime_error("truncated");
    return x;
  }
  template <class T>
  std::vector<T> vec() {
    const auto n = pod<std::uint64_t>();
    if (n > (std::uint64_t{1} << 36) / sizeof(T)) throw std::runtime_error("implausible length");
    std::vector<T> v(static_cast<std::size_t>(n));
    in_.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(n * sizeof(T)));
    if (!in_) throw std::runtime_error("truncated");
    return v;
  }
  std::string str() {
    const std::vector<char> v = vec<char>();
    return std::string(v.begin(), v.end());
  }
  reference::CertifiedTensor tensor() {
    reference::CertifiedTensor t;
    t.shape = pod<Shape>();
    t.value = vec<double>(), t.bound = vec<double>(), t.checked = vec<std::uint8_t>(),
    t.magnitude = vec<double>();
    const auto n = static_cast<std::size_t>(t.shape[0] * t.shape[1] * t.shape[2] * t.shape[3]);
    if (t.value.size() != n || t.bound.size() != n || t.checked.size() != n || t.magnitude.size() != n)
      throw std::runtime_error("inconsistent tensor");
    return t;
  }
  reference::Stats stats() {
    reference::Stats s;
    s.rows_computed = pod<std::int64_t>(), s.columns_computed = pod<std::int64_t>();
    s.fallback_rows = pod<std::int64_t>(), s.fallback_columns = pod<std::int64_t>();
    s.sampling = str();
    s.max_abs_logit = pod<double>();
    return s;
  }
  HostTensor host() {
    if (!pod<std::uint8_t>()) return {};
    const auto dtype = pod<std::uint8_t>();
    const auto rank = pod<std::int32_t>();
    const Shape shape = pod<Shape>();
    if (dtype > static_cast<std::uint8_t>(DType::fp32) || rank < 1 || rank > 4)
      throw std::runtime_error("bad tensor header");
    HostTensor t(static_cast<DType>(dtype), shape, rank);
    const std::vector<std::uint32_t> bits = vec<std::uint32_t>();
    if (static_cast<std::int64_t>(bits.size()) != t.numel()) throw std::runtime_error("inconsistent tensor");
    std::size_t x = 0;
    for (std::int64_t a = 0; a < shape[0]; ++a)
      for (std::int64_t b = 0; b < shape[1]; ++b)
        for (std::int64_t c = 0; c < shape[2]; ++c)
          for (std::int64_t d = 0; d < shape[3]; ++d) t.set_bits(a, b, c, d, bits[x++]);
    return t;
  }

 private:
  std::istream& in_;
};

}  // namespace

void save_case_context(const std::string& path, const Case& c, const CheckOptions& opt,
                       const CaseContext& ctx) {
  std::ostringstream out;
  {
    Writer w(out);
    w.str(case_key(c, opt));
    w.str(ctx.domain_note);
    w.tensor(ctx.reference.forward.o), w.tensor(ctx.reference.forward.lse);
    w.stats(ctx.reference.forward.stats);
    w.pod(static_cast<std::uint8_t>(ctx.reference.backward.has_value()));
    if (const auto& b = ctx.reference.backward) {
      w.tensor(b->dq), w.tensor(b->dk), w.tensor(b->dv);
      w.stats(b->stats);
    }
    w.pod(static_cast<std::uint8_t>(ctx.baseline.has_value()));
    if (const auto& o = ctx.baseline) w.host(o->o), w.host(o->lse), w.host(o->dq), w.host(o->dk), w.host(o->dv);
  }
  const std::string payload = out.str();
  const std::uint64_t sum = exchange::fnv1a64(payload);
  const std::string tmp = path + ".tmp";
  std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
  file.write(kMagic, sizeof kMagic);
  file.write(payload.data(), static_cast<std::streamsize>(payload.size()));
  file.write(reinterpret_cast<const char*>(&sum), sizeof sum);
  if (!file.flush()) throw std::runtime_error("cannot write " + tmp);
  file.close();
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
}

std::optional<CaseContext> load_case_context(const std::string& path, const Case& c,
                                             const CheckOptions& opt) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::uint64_t sum = 0;
  if (bytes.size() < sizeof kMagic + sizeof sum || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    return std::nullopt;
  const std::string_view payload(bytes.data() + sizeof kMagic, bytes.size() - sizeof kMagic - sizeof sum);
  std::memcpy(&sum, bytes.data() + bytes.size() - sizeof sum, sizeof sum);
  if (exchange::fnv1a64(payload) != sum) return std::nullopt;  // damaged
  std::istringstream in{std::string(payload)};
  try {
    Reader r(in);
    if (r.str() != case_key(c, opt)) return std::nullopt;
    CaseContext ctx;
    ctx.domain_note = r.str();
    ctx.reference.forward.o = r.tensor(), ctx.reference.forward.lse = r.tensor();
    ctx.reference.forward.stats = r.stats();
    if (r.pod<std::uint8_t>()) {
      reference::BackwardResult b;
      b.dq = r.tensor(), b.dk = r.tensor(), b.dv = r.tensor();
      b.stats = r.stats();
      ctx.reference.backward = std::move(b);
    }
    if (ctx.reference.backward.has_value() != c.backward) return std::nullopt;
    if (r.pod<std::uint8_t>()) {
      Outputs o;
      o.o = r.host(), o.lse = r.host(), o.dq = r.host(), o.dk = r.host(), o.dv = r.host();
      ctx.baseline = std::move(o);
    }
    if (in.peek() != std::char_traits<char>::eof()) return std::nullopt;  // trailing bytes
    ctx.inputs = generate_inputs(c.problem, c.dist, c.seed);
    return ctx;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace flashproof
