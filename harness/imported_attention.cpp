#include "harness/imported_attention.h"

#include <bit>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>

#include "core/kv_cache.h"
#include "harness/exchange.h"
#include "harness/exchange_info.h"
#include "kernels/registry.h"

namespace flashproof {
namespace {

namespace fs = std::filesystem;
using exchange::StoredCase;
using CaseList = std::vector<StoredCase>;

bool same_problem(const Problem& a, const Problem& b) {
  return a.dtype == b.dtype && a.batch == b.batch && a.heads_q == b.heads_q && a.heads_kv == b.heads_kv &&
         a.seqlen_q == b.seqlen_q && a.seqlen_k == b.seqlen_k && a.head_dim == b.head_dim &&
         a.window_left == b.window_left && a.window_right == b.window_right &&
         a.cu_seqlens_q == b.cu_seqlens_q && a.cu_seqlens_k == b.cu_seqlens_k &&  // a packing of the same sizes differs
         // The score modification and the cache change the outputs, not the inputs' bits.
         a.softcap == b.softcap && a.alibi_slopes == b.alibi_slopes && a.cache_seqlens == b.cache_seqlens &&
         a.page_size == b.page_size && a.num_pages == b.num_pages && a.block_table == b.block_table &&
         a.num_splits == b.num_splits && a.seqlen_new == b.seqlen_new &&
         std::bit_cast<std::uint32_t>(a.softmax_scale()) == std::bit_cast<std::uint32_t>(b.softmax_scale());
}

// fuzz/campaign.cpp asks every implementation about a default Problem of each dtype to learn
// whether it runs that dtype at all. Imported outputs exist per case, not per dtype, so that one
// question is answered per dtype; any other problem without an exported case is unsupported.
bool is_dtype_probe(const Problem& p) {
  Problem probe;
  probe.dtype = p.dtype;
  return !p.scale && same_problem(p, probe);
}

bool same_bits(const HostTensor& given, const HostTensor& stored) {
  if (given.shape() != stored.shape() || given.dtype() != stored.dtype()) return false;
  const Shape& s = given.shape();
  for (std::int64_t a = 0; a < s[0]; ++a)
    for (std::int64_t b = 0; b < s[1]; ++b)
      for (std::int64_t c = 0; c < s[2]; ++c)
        for (std::int64_t d = 0; d < s[3]; ++d)
          if (given.bits(a, b, c, d) != stored.bits(a, b, c, d)) return false;
  return true;
}

// Reads at most 201 bytes: a refused.txt of one huge line must not be read whole.
std::string first_line(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::string head(201, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  const std::string line = head.substr(0, head.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) + "..." : line;
}

// The backend's info.json files (docs/exchange.md), each with its path, to `read`.
template <class Read>
void for_each_info(const CaseList& cases, const std::string& backend, Read read) {
  std::error_code ec;
  for (const StoredCase& sc : cases) {
    const fs::path info = fs::path(sc.dir) / backend / "info.json";
    if (!fs::is_regular_file(info, ec)) continue;
    if (fs::file_size(info, ec) > (1u << 20)) throw std::invalid_argument(info.string() + ": larger than 1 MiB");
    std::ifstream in(info, std::ios::binary);
    read(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()), info.string());
  }
}

// How backend B reduces GQA gradients, from the "gqa_gradients" member of its info.json files
// ("group-sum" or "per-head-rounded"; docs/exchange.md). A backend that says per-head-rounded for any
// case is judged so everywhere (the looser bound); one that never says is judged as a kernel summing
// the group in fp32. A bad info.json or value is a one-line error.
GqaGradientReduction declared_gqa_reduction(const CaseList& cases, const std::string& backend) {
  GqaGradientReduction declared = GqaGradientReduction::group_sum;
  for_each_info(cases, backend, [&](const std::string& text, const std::string& path) {
    if (exchange::declared_gqa_gradients(text, path) == GqaGradientReduction::per_head_rounded)
      declared = GqaGradientReduction::per_head_rounded;
  });
  return declared;
}

// The support the backend declares in its info.json files ("support", docs/exchange.md): the same
// in every case that states one (a backend has one declaration), everything when none does.
Support declared_backend_support(const CaseList& cases, const std::string& backend) {
  std::optional<Support> declared;
  std::string first;
  for_each_info(cases, backend, [&](const std::string& text, const std::string& path) {
    const std::optional<Support> s = exchange::declared_support(text, path);
    if (!s) return;
    if (declared && !(*s == *declared)) throw std::invalid_argument(path + ": \"support\" differs from the one in " + first);
    if (!declared) declared = s, first = path;
  });
  return declared.value_or(Support{});
}

class ImportedAttention final : public AttentionImpl {
 public:
  ImportedAttention(std::string root, std::string backend, std::shared_ptr<const CaseList> cases)
      : root_(std::move(root)), backend_(std::move(backend)), cases_(std::move(cases)),
        gqa_(declared_gqa_reduction(*cases_, backend_)), support_(declared_backend_support(*cases_, backend_)) {}

  const std::string& root() const { return root_; }
  std::string name() const override { return "imported:" + backend_; }
  std::string description() const override {
    return "outputs of " + backend_ + " imported from " + root_ + " (docs/exchange.md)";
  }
  std::string where() const override { return "file"; }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::flash; }
  GqaGradientReduction gqa_gradient_reduction() const override { return gqa_; }
  Support declared_support() const override { return support_; }

  std::string unsupported_reason(const Problem& p, bool) const override {
    bool matched = false;
    std::string refusal;
    std::error_code ec;
    for (const StoredCase& sc : *cases_) {
      if (!same_problem(sc.c.problem, p)) continue;
      if (fs::is_regular_file(output_dir(sc) / "o.bin", ec)) return {};
      matched = true;
      if (refusal.empty() && fs::is_regular_file(output_dir(sc) / "refused.txt", ec))
        refusal = first_line(output_dir(sc) / "refused.txt");
    }
    if (!matched && is_dtype_probe(p) && has_outputs_of(p.dtype)) return {};
    std::string why = "no imported outputs of " + backend_ + " for this case";
    if (!matched) return why + " (no exported case has this problem)";
    return refusal.empty() ? why : why + " (refused: " + refusal + ")";
  }

  void forward(const Problem& p, const ForwardArgs& a) override {
    const fs::path dir = output_dir(locate(p, a.q, a.k, a.v, nullptr, a.append));
    exchange::read_tensor_file_into((dir / "o.bin").string(), a.o);
    exchange::read_tensor_file_into((dir / "lse.bin").string(), a.lse);
    // Appended keys: the cache the backend left. Absent, the cache stays as given and the check
    // fails on it (the appended slots hold NaN).
    std::error_code ec;
    if (a.append != nullptr && fs::is_regular_file(dir / "k_cache.bin", ec)) {
      exchange::read_tensor_file_into((dir / "k_cache.bin").string(), a.append->k_cache);
      exchange::read_tensor_file_into((dir / "v_cache.bin").string(), a.append->v_cache);
    }
  }

  void backward(const Problem& p, const BackwardArgs& a) override {
    const fs::path dir = output_dir(locate(p, a.q, a.k, a.v, &a.dout));
    exchange::read_tensor_file_into((dir / "dq.bin").string(), a.dq);
    exchange::read_tensor_file_into((dir / "dk.bin").string(), a.dk);
    exchange::read_tensor_file_into((dir / "dv.bin").string(), a.dv);
  }

 private:
  fs::path output_dir(const StoredCase& sc) const { return fs::path(sc.dir) / backend_; }

  bool has_outputs_of(DType dtype) const {
    std::error_code ec;
    for (const StoredCase& sc : *cases_)
      if (sc.c.problem.dtype == dtype && fs::is_regular_file(output_dir(sc) / "o.bin", ec)) return true;
    return false;
  }

  // The exported case of this problem whose stored inputs equal the given ones bit for bit.
  // A KV-cache case is compared as the implementation received it: Q in its [b, sq, hq, d] rows,
  // K and V the cache, and the appended keys.
  const StoredCase& locate(const Problem& p, const HostTensor& q, const HostTensor& k, const HostTensor& v,
                           const HostTensor* dout, const KvAppend* append = nullptr) const {
    bool matched = false;
    for (const StoredCase& sc : *cases_) {
      if (!same_problem(sc.c.problem, p)) continue;
      matched = true;
      const Inputs stored = exchange::read_inputs(sc.dir, sc.c.problem);
      const KvCacheInputs* c = stored.cache.get();
      const bool same = c == nullptr ? same_bits(q, stored.q) && same_bits(k, stored.k) && same_bits(v, stored.v)
                                     : same_bits(q, cache_rows_view(p, stored.q)) && same_bits(k, c->k) &&
                                           same_bits(v, c->v) &&
                                           (append == nullptr || (same_bits(append->k_new, c->k_new) &&
                                                                  same_bits(append->v_new, c->v_new)));
      if (same && (dout == nullptr || same_bits(*dout, stored.dout))) return sc;
    }
    if (!matched) throw std::invalid_argument(name() + ": no case under " + root_ + " has the problem " + p.describe());
    throw std::invalid_argument(name() + ": the inputs differ from those exported under " + root_ + " for " +
                                p.describe());
  }

  std::string root_, backend_;
  std::shared_ptr<const CaseList> cases_;
  GqaGradientReduction gqa_;
  Support support_;
};

}  // namespace

std::unique_ptr<AttentionImpl> make_imported_attention(const std::string& root, const std::string& backend) {
  return std::make_unique<ImportedAttention>(root, backend,
                                             std::make_shared<const CaseList>(exchange::list_cases(root)));
}

std::vector<std::string> register_imported_implementations(const std::string& root) {
  auto cases = std::make_shared<const CaseList>(exchange::list_cases(root));
  if (cases->empty())
    throw std::invalid_argument("exchange root '" + root + "' holds no case directory (ROOT/<hex>/case.json)");
  std::vector<std::string> names;
  for (const std::string& backend : exchange::list_backends(*cases)) {
    const std::string name = "imported:" + backend;
    if (AttentionImpl* existing = find_implementation(name)) {
      const auto* imported = dynamic_cast<const ImportedAttention*>(existing);
      if (imported == nullptr || imported->root() != root)
        throw std::invalid_argument("an implementation named '" + name + "' is registered already");
    } else {
      register_implementation(std::make_unique<ImportedAttention>(root, backend, cases));
    }
    names.push_back(name);
  }
  return names;
}

}  // namespace flashproof
