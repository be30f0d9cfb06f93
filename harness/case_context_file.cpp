#include "harness/case_context_file.h"

#include "harness/case_file.h"
#include "harness/sample_plan.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace flashproof {
namespace {

constexpr char kMagic[8] = {'F', 'P', 'C', 'T', 'X', '2', '\n', '\0'};

// Everything that determines the prepared context, exactly: the case without its implementation,
// and the options (the reference's among them), in the case-file format.
std::string case_key(const Case& c, const CheckOptions& opt) {
  Case key = c;
  key.impl.clear();
  return case_to_json(key, opt);
}

// FNV-1a's step over 8-byte words (and the last bytes one by one): a damage check fast enough
// for files of megabytes, not a format other tools read.
std::uint64_t mix(std::uint64_t h, const char* p, std::size_t n) {
  constexpr std::uint64_t kPrime = 0x100000001b3ull;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * kPrime;
  }
  for (; i < n; ++i) h = (h ^ static_cast<unsigned char>(p[i])) * kPrime;
  return h;
}
constexpr std::uint64_t kHashStart = 0xcbf29ce484222325ull;

// `mix` over a stream written piece by piece: whole words as they complete, so the result is that
// of mixing all the bytes at once.
class StreamHash {
 public:
  void add(const char* p, std::size_t n) {
    while (n > 0 && fill_ > 0 && fill_ < 8) pending_[fill_++] = *p++, --n;
    if (fill_ == 8) h_ = mix(h_, pending_, 8), fill_ = 0;
    const std::size_t whole = n / 8 * 8;
    h_ = mix(h_, p, whole);
    for (std::size_t i = whole; i < n; ++i) pending_[fill_++] = p[i];
  }
  std::uint64_t value() const { return mix(h_, pending_, fill_); }

 private:
  std::uint64_t h_ = kHashStart;
  char pending_[8] = {};
  std::size_t fill_ = 0;
};

class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) {}
  void bytes(const void* p, std::size_t n) {
    out_.write(static_cast<const char*>(p), static_cast<std::streamsize>(n));
    hash_.add(static_cast<const char*>(p), n);
  }
  template <class T>
  void pod(const T& x) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&x, sizeof x);
  }
  template <class T>
  void vec(const std::vector<T>& v) {
    pod(static_cast<std::uint64_t>(v.size()));
    bytes(v.data(), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod(static_cast<std::uint64_t>(s.size()));
    bytes(s.data(), s.size());
  }
  void tensor(const reference::CertifiedTensor& t) {
    pod(t.shape);
    vec(t.value), vec(t.bound), vec(t.checked), vec(t.magnitude);
  }
  void stats(const reference::Stats& s) {
    pod(s.rows_computed), pod(s.columns_computed), pod(s.fallback_rows), pod(s.fallback_columns);
    str(s.sampling);
    pod(s.max_abs_logit);
  }
  // The elements' storage bytes in logical order (a copy first when the tensor is a view).
  void host(const HostTensor& t) {
    pod(static_cast<std::uint8_t>(!t.empty()));
    if (t.empty()) return;
    pod(static_cast<std::uint8_t>(t.dtype())), pod(static_cast<std::int32_t>(t.rank())), pod(t.shape());
    const HostTensor flat = t.is_contiguous() && t.offset() == 0 ? t : t.contiguous_copy();
    const std::size_t n = static_cast<std::size_t>(flat.numel()) * static_cast<std::size_t>(dtype_bytes(flat.dtype()));
    pod(static_cast<std::uint64_t>(n));
    bytes(flat.storage_data(), n);
  }
  std::uint64_t hash() const { return hash_.value(); }

 private:
  std::ostream& out_;
  StreamHash hash_;
};

// Reads from the file's bytes in memory; every read is bounds-checked.
class Reader {
 public:
  Reader(const char* p, std::size_t n) : p_(p), end_(p + n) {}
  void bytes(void* out, std::size_t n) {
    if (n > static_cast<std::size_t>(end_ - p_)) throw std::runtime_error("truncated");
    std::memcpy(out, p_, n);
    p_ += n;
  }
  template <class T>
  T pod() {
    T x{};
    bytes(&x, sizeof x);
    return x;
  }
  template <class T>
  std::vector<T> vec() {
    const auto n = pod<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(end_ - p_) / sizeof(T)) throw std::runtime_error("truncated");
    std::vector<T> v(static_cast<std::size_t>(n));
    bytes(v.data(), v.size() * sizeof(T));
    return v;
  }
  std::string str() {
    const auto n = pod<std::uint64_t>();
    if (n > static_cast<std::uint64_t>(end_ - p_)) throw std::runtime_error("truncated");
    std::string s(p_, static_cast<std::size_t>(n));
    p_ += n;
    return s;
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
    for (std::int64_t e : shape)
      if (e < 1 || e > Problem::max_elements) throw std::runtime_error("bad tensor header");
    HostTensor t(static_cast<DType>(dtype), shape, rank);
    const auto n = pod<std::uint64_t>();
    if (n != static_cast<std::uint64_t>(t.numel()) * static_cast<std::uint64_t>(dtype_bytes(t.dtype())))
      throw std::runtime_error("inconsistent tensor");
    bytes(t.storage_data(), static_cast<std::size_t>(n));
    return t;
  }
  bool done() const { return p_ == end_; }

 private:
  const char* p_;
  const char* end_;
};

}  // namespace

void save_case_context(const std::string& path, const Case& c, const CheckOptions& opt,
                       const CaseContext& ctx) {
  const std::string tmp = path + ".tmp";
  std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
  if (!file) throw std::runtime_error("cannot write " + tmp);
  file.write(kMagic, sizeof kMagic);
  Writer w(file);
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
  const std::uint64_t sum = w.hash();
  file.write(reinterpret_cast<const char*>(&sum), sizeof sum);
  if (!file.flush()) throw std::runtime_error("cannot write " + tmp);
  file.close();
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
}

std::optional<CaseContext> load_case_context(const std::string& path, const Case& c,
                                             const CheckOptions& opt) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return std::nullopt;
  const std::streamoff size = file.tellg();
  std::uint64_t sum = 0;
  if (size < static_cast<std::streamoff>(sizeof kMagic + sizeof sum)) return std::nullopt;
  std::string bytes(static_cast<std::size_t>(size), '\0');
  file.seekg(0);
  if (!file.read(bytes.data(), size)) return std::nullopt;
  if (std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0) return std::nullopt;
  const char* payload = bytes.data() + sizeof kMagic;
  const std::size_t n = bytes.size() - sizeof kMagic - sizeof sum;
  std::memcpy(&sum, payload + n, sizeof sum);
  if (mix(kHashStart, payload, n) != sum) return std::nullopt;  // damaged
  try {
    Reader r(payload, n);
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
    if (!r.done()) return std::nullopt;  // trailing bytes
    ctx.inputs = generate_inputs(c.problem, c.dist, c.seed);
    // Not stored: the sample is a function of the problem and the options, both in the key.
    ctx.sample = judged_sample(logical_problem(c.problem), opt.reference.sample, opt.reference.sample_seed);
    return ctx;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace flashproof
