// A narrowed build (-DFLASHPROOF_FA2_HEAD_DIMS, -DFLASHPROOF_FA1_HEAD_DIMS) leaves head-dim buckets
// out; a test that needs one skips with the implementation's reason (docs/testing.md) instead of
// failing. CI builds every bucket, where these never skip.
#pragma once

#include <string>

#include "core/attention_impl.h"
#include "kernels/registry.h"

namespace flashproof::test_impls {

// The implementation's reason when `impl` lacks the head-dim bucket of `p` in this build, else "".
inline std::string bucket_not_built(const std::string& impl, const Problem& p, bool backward) {
  const AttentionImpl* a = find_implementation(impl);
  const std::string why = a == nullptr ? std::string() : a->unsupported_reason(p, backward);
  return why.find("is not built") == std::string::npos ? std::string() : why;
}

}  // namespace flashproof::test_impls

// Skips the calling test when the case's implementation lacks its bucket in this build.
#define FP_SKIP_IF_BUCKET_NOT_BUILT(impl, problem, backward)                                          \
  do {                                                                                                \
    const std::string fp_why_ = ::flashproof::test_impls::bucket_not_built(impl, problem, backward); \
    if (!fp_why_.empty()) GTEST_SKIP() << fp_why_;                                                    \
  } while (0)
