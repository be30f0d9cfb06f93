// The emulated FA1/FA2 kernels' outputs, bit for bit, against committed digests (label `emulated`).
// A refactor of the kernels (templating, unrolling, register budgets, a tile shape that keeps the
// summation order) must leave every output bit as it was; this test says so for every compiled
// head-dim bucket, both dtypes, forward and backward, with and without masks, GQA and ragged
// blocks. A change that is meant to move results (a new block_n, say) rewrites the digests with
// FLASHPROOF_WRITE_DIGESTS=FILE and says why in its commit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/arch/convert.h"
#include "kernels/fa1/api.h"
#include "kernels/fa2/api.h"
#include "kernels/flash/api.h"

namespace flashproof::kernels {
namespace {

struct DigestCase {
  const char* kernel;
  int head_dim;
  FlashDtype dtype;
  int window_left, window_right;
  std::string name() const {
    std::ostringstream s;
    s << kernel << " d" << head_dim << ' ' << (dtype == FlashDtype::bf16 ? "bf16" : "fp16") << " window "
      << window_left << ',' << window_right;
    return s.str();
  }
};

// FNV-1a over bytes: a change of any bit changes the digest (with overwhelming probability).
std::uint64_t fnv1a(std::uint64_t h, const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

// Deterministic inputs in [-3, 3), rounded to the dtype.
std::vector<std::uint16_t> inputs(std::size_t n, std::uint64_t seed, FlashDtype dtype) {
  std::vector<std::uint16_t> v(n);
  std::uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (auto& e : v) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const float f = static_cast<float>((x >> 40) % 6000) / 1000.0f - 3.0f;
    e = arch::float_to_bits16(dtype == FlashDtype::bf16 ? arch::MmaTag::bf16 : arch::MmaTag::fp16, f);
  }
  return v;
}

FlashTensor tensor(std::vector<std::uint16_t>& data, int seqlen, int heads, int head_dim) {
  return {data.data(), {1, seqlen, heads, head_dim}, {std::int64_t{seqlen} * heads * head_dim, heads * head_dim, head_dim, 1}};
}

// Forward then backward of one case on the emulator; the digest of O, LSE, dQ, dK and dV.
std::uint64_t run_digest(const DigestCase& c) {
  constexpr int kSeqQ = 77, kSeqK = 133, kHeadsQ = 2, kHeadsKv = 1;  // ragged blocks, GQA 2
  const int d = c.head_dim;
  auto q = inputs(std::size_t{kSeqQ} * kHeadsQ * d, 1, c.dtype), dout = inputs(q.size(), 2, c.dtype);
  auto k = inputs(std::size_t{kSeqK} * kHeadsKv * d, 3, c.dtype), v = inputs(k.size(), 4, c.dtype);
  std::vector<std::uint16_t> o(q.size()), dq(q.size()), dk(k.size()), dv(k.size());
  std::vector<float> lse(std::size_t{kSeqQ} * kHeadsQ);
  FlashOptions options;
  options.window_left = c.window_left;
  options.window_right = c.window_right;
  options.deterministic = true;  // FA2's atomic dQ could add in another order under another schedule
  const bool fa2 = std::string(c.kernel) == "fa2";
  FlashForwardTensors f{tensor(q, kSeqQ, kHeadsQ, d), tensor(k, kSeqK, kHeadsKv, d), tensor(v, kSeqK, kHeadsKv, d),
                        tensor(o, kSeqQ, kHeadsQ, d), lse.data()};
  if (fa2)
    fa2_forward(FlashTarget::emulated, c.dtype, f, options);
  else
    fa1_forward(FlashTarget::emulated, c.dtype, f, options);
  FlashBackwardTensors b{f.q, f.k, f.v, f.o, tensor(dout, kSeqQ, kHeadsQ, d), tensor(dq, kSeqQ, kHeadsQ, d),
                         tensor(dk, kSeqK, kHeadsKv, d), tensor(dv, kSeqK, kHeadsKv, d), lse.data()};
  if (fa2)
    fa2_backward(FlashTarget::emulated, c.dtype, b, options);
  else
    fa1_backward(FlashTarget::emulated, c.dtype, b, options);
  std::uint64_t h = 14695981039346656037ull;
  h = fnv1a(h, o.data(), o.size() * 2);
  h = fnv1a(h, lse.data(), lse.size() * 4);
  for (const auto* t : {&dq, &dk, &dv}) h = fnv1a(h, t->data(), t->size() * 2);
  return h;
}

std::vector<DigestCase> digest_cases() {
  std::vector<DigestCase> cases;
  const auto add = [&](const char* kernel, int d, bool built) {
    if (!built) return;
    cases.push_back({kernel, d, FlashDtype::fp16, -1, -1});
    cases.push_back({kernel, d, FlashDtype::fp16, 17, 9});
    cases.push_back({kernel, d, FlashDtype::bf16, -1, 0});
  };
  for (int d : algo::kFa2HeadDimBuckets) add("fa2", d, fa2_bucket_built(d));
  for (int d : algo::kFa1HeadDimBuckets) add("fa1", d, fa1_bucket_built(d));
  return cases;
}

std::map<std::string, std::string> committed_digests() {
  std::map<std::string, std::string> digests;
  std::ifstream in(FLASHPROOF_DIGEST_FILE);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.rfind(": ");
    if (!line.empty() && line[0] != '#' && colon != std::string::npos) digests[line.substr(0, colon)] = line.substr(colon + 2);
  }
  return digests;
}

TEST(EmulatedDigest, EveryOutputBitIsAsCommitted) {
  const auto expected = committed_digests();
  ASSERT_FALSE(expected.empty()) << "no digests in " << FLASHPROOF_DIGEST_FILE;
  std::ostringstream written;
  written << "# Digests (FNV-1a 64) of the emulated kernels' outputs: tests/kernels/flash/test_emulated_digest.cpp\n";
  for (const DigestCase& c : digest_cases()) {
    std::ostringstream hex;
    hex << std::hex << run_digest(c);
    written << c.name() << ": " << hex.str() << '\n';
    const auto it = expected.find(c.name());
    if (it == expected.end())
      ADD_FAILURE() << c.name() << ": no committed digest";
    else
      EXPECT_EQ(hex.str(), it->second) << c.name() << ": the emulated outputs changed";
  }
  if (const char* path = std::getenv("FLASHPROOF_WRITE_DIGESTS")) std::ofstream(path) << written.str();
}

}  // namespace
}  // namespace flashproof::kernels
