#include "harness/exchange.h"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/json.h"
#include "core/kv_cache.h"
#include "harness/case_file.h"

namespace flashproof::exchange {
namespace fs = std::filesystem;
namespace {

template <class F>
void for_each_element(const Shape& s, F&& f) {
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d) f(a, b, c, d);
}

void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

// The file's bytes when it holds exactly `size` of them. The size is checked before reading, so a
// wrong file (a link to a huge sparse file, say) costs nothing.
std::string read_file_of_size(const std::string& path, std::uintmax_t size, const std::string& what) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw BadExchangeFile(path + ": no such file");
  if (!fs::is_regular_file(path, ec)) throw BadExchangeFile(path + ": not a regular file");
  const std::uintmax_t actual = fs::file_size(path, ec);
  if (ec) throw BadExchangeFile(path + ": cannot read its size: " + ec.message());
  if (actual != size)
    throw BadExchangeFile(path + ": holds " + std::to_string(actual) + " bytes, expected " + std::to_string(size) +
                          " (" + what + ")");
  std::string bytes(size, '\0');
  std::ifstream in(path, std::ios::binary);
  in.read(bytes.data(), static_cast<std::streamsize>(size));
  if (!in || in.gcount() != static_cast<std::streamsize>(size)) throw BadExchangeFile(path + ": cannot read");
  return bytes;
}

// SDPA's is_causal masks top-left aligned, flashproof's causal bottom-right: they agree only when the
// sequence lengths do. null where SDPA's flag cannot express the mask or the problem.
json::Value sdpa_is_causal(const Problem& p) {
  if (p.packed()) return nullptr;     // SDPA has no packed batches
  if (p.kv_cache()) return nullptr;   // nor caches
  if (p.score_mod()) return nullptr;  // nor a soft cap or ALiBi (docs/spec.md "Soft cap and ALiBi")
  if (!p.has_mask()) return false;
  return p.causal() && p.seqlen_q == p.seqlen_k ? json::Value(true) : json::Value(nullptr);
}

// A case's input files in the order of its checksum: q, k, v, dout, then a KV cache's appended k_new,
// v_new. A KV-cache problem's K and V are its cache (kv_shape(): the pool when paged), as an
// implementation receives them; its Q and dO are [b, sq, hq, d], the bytes of the logical ones.
struct InputFile {
  const char* name;
  HostTensor tensor;
};
std::vector<InputFile> input_files(const Problem& p, const Inputs& in) {
  if (!p.kv_cache()) return {{"q", in.q}, {"k", in.k}, {"v", in.v}, {"dout", in.dout}};
  std::vector<InputFile> files{{"q", in.q}, {"k", in.cache->k}, {"v", in.cache->v}, {"dout", in.dout}};
  if (p.appends()) files.push_back({"k_new", in.cache->k_new}), files.push_back({"v_new", in.cache->v_new});
  return files;
}

std::string meta_json(const Case& c, const std::vector<InputFile>& files) {
  const Problem& p = c.problem;
  const float scale = p.softmax_scale();
  std::uint64_t all = kFnvOffsetBasis;
  json::Value checksums = json::Value::object();
  for (const InputFile& f : files) {
    const std::string bytes = tensor_bytes(f.tensor);
    all = fnv1a64(bytes, all);
    checksums[f.name] = hex64(fnv1a64(bytes));
  }
  json::Value j = json::Value::object();
  j["format"] = "flashproof-exchange-case";
  j["version"] = 1;
  j.update(json::Value(p));  // the problem as every record writes it (harness/records.h)
  j["element_bytes"] = dtype_bytes(p.dtype);
  j["q_shape"] = json::Value::array({p.batch, p.seqlen_q, p.heads_q, p.head_dim});
  const auto kv = p.kv_shape();  // a KV cache's: the cache (the pool when paged)
  j["kv_shape"] = json::Value::array({kv[0], kv[1], kv[2], kv[3]});
  if (p.appends()) j["new_kv_shape"] = json::Value::array({p.batch, p.seqlen_new, p.heads_kv, p.head_dim});
  j["lse_shape"] = json::Value::array({p.batch, p.heads_q, p.seqlen_q});
  j["softmax_scale_bits"] = "0x" + hex64(std::bit_cast<std::uint32_t>(scale)).substr(8);
  j["causal"] = p.causal();
  j["mask"] = !p.has_mask() ? "none" : p.causal() ? "causal" : "window";
  j["sdpa_is_causal"] = sdpa_is_causal(p);
  j["backward"] = c.backward;
  j["distribution"] = distribution_name(c.dist);
  j["seed"] = std::to_string(c.seed);
  j["checksum"] = hex64(all);
  j["checksums"] = checksums;
  return json::write(j, json::top_lines()) + "\n";
}

bool valid_backend_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
           ch == '_' || ch == '-';
  });
}

}  // namespace

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h) {
  for (unsigned char b : bytes) h = (h ^ b) * 0x100000001b3ULL;
  return h;
}

std::string hex64(std::uint64_t x) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(x));
  return buf;
}

std::string case_directory_name(const Case& c) {
  Case key = c;
  key.impl.clear();
  key.backward = false;
  return hex64(fnv1a64(json::write(json::Value(key))));
}

std::string tensor_bytes(const HostTensor& t) {
  const int n = dtype_bytes(t.dtype());
  std::string out;
  out.reserve(static_cast<std::size_t>(t.numel() * n));
  for_each_element(t.shape(), [&](auto a, auto b, auto c, auto d) {
    const std::uint32_t bits = t.bits(a, b, c, d);
    for (int i = 0; i < n; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFF));
  });
  return out;
}

void write_tensor_file(const std::string& path, const HostTensor& t) { write_file(path, tensor_bytes(t)); }

void read_tensor_file_into(const std::string& path, HostTensor& into) {
  const int n = dtype_bytes(into.dtype());
  const std::string bytes = read_file_of_size(path, static_cast<std::uintmax_t>(into.numel() * n), into.describe());
  std::size_t at = 0;
  for_each_element(into.shape(), [&](auto a, auto b, auto c, auto d) {
    std::uint32_t bits = 0;
    for (int i = 0; i < n; ++i) bits |= std::uint32_t{static_cast<unsigned char>(bytes[at++])} << (8 * i);
    into.set_bits(a, b, c, d, bits);
  });
}

HostTensor read_tensor_file(const std::string& path, DType dtype, Shape shape, int rank) {
  HostTensor t(dtype, shape, rank);
  read_tensor_file_into(path, t);
  return t;
}

std::string write_case(const std::string& root, const Case& c, const std::string& note) {
  const ValidProblem valid(c.problem);
  if (valid->kv_cache() && c.backward) throw std::invalid_argument("a KV-cache problem is forward only");
  const std::string name = case_directory_name(c);
  const fs::path dir = fs::path(root) / name;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) throw std::runtime_error("cannot create directory " + dir.string());
  write_case_file((dir / "case.json").string(), c, {}, note);
  const std::vector<InputFile> files = input_files(c.problem, generate_inputs(valid, c.dist, c.seed));
  for (const InputFile& f : files) write_tensor_file((dir / (std::string(f.name) + ".bin")).string(), f.tensor);
  write_file(dir / "meta.json", meta_json(c, files));
  return name;
}

Inputs read_inputs(const std::string& case_dir, const Problem& p) {
  const fs::path dir(case_dir);
  auto read = [&](const char* name, Shape shape) {
    return read_tensor_file((dir / (std::string(name) + ".bin")).string(), p.dtype, shape);
  };
  if (!p.kv_cache()) return {read("q", p.q_shape()), read("k", p.kv_shape()), read("v", p.kv_shape()), read("dout", p.q_shape())};
  // A KV cache: the files' Q and dO are the logical ones' bytes; K and V the cache's.
  const ValidProblem valid(p);
  const Shape logical_q = logical_problem(p).q_shape();
  KvCacheInputs cache{p, read("k", p.kv_shape()), read("v", p.kv_shape()), {}, {}};
  if (p.appends()) cache.k_new = read("k_new", p.new_kv_shape()), cache.v_new = read("v_new", p.new_kv_shape());
  return cache_problem_inputs(valid, read("q", logical_q), read("dout", logical_q), cache);
}

void write_outputs(const std::string& case_dir, const std::string& backend, const Outputs& out) {
  if (!valid_backend_name(backend)) throw std::invalid_argument("invalid backend name " + shown(backend));
  const fs::path dir = fs::path(case_dir) / backend;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir)) throw std::runtime_error("cannot create directory " + dir.string());
  write_tensor_file((dir / "o.bin").string(), out.o);
  write_tensor_file((dir / "lse.bin").string(), out.lse);
  if (out.dq.empty()) return;
  write_tensor_file((dir / "dq.bin").string(), out.dq);
  write_tensor_file((dir / "dk.bin").string(), out.dk);
  write_tensor_file((dir / "dv.bin").string(), out.dv);
}

std::vector<StoredCase> list_cases(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) throw std::invalid_argument("exchange root '" + root + "' is not a directory");
  std::vector<StoredCase> cases;
  for (const fs::directory_entry& e : fs::directory_iterator(root, ec)) {
    const fs::path file = e.path() / "case.json";
    if (e.is_directory(ec) && fs::is_regular_file(file, ec))
      cases.push_back({e.path().string(), read_case_file(file.string()).c});
  }
  std::sort(cases.begin(), cases.end(), [](const StoredCase& a, const StoredCase& b) { return a.dir < b.dir; });
  return cases;
}

std::vector<std::string> list_backends(const std::vector<StoredCase>& cases) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const StoredCase& sc : cases)
    for (const fs::directory_entry& e : fs::directory_iterator(sc.dir, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_directory(ec) && valid_backend_name(name)) names.push_back(name);
    }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

}  // namespace flashproof::exchange
