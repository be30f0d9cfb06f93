// One line in a user's GoogleTest program registers the whole flashproof verdict on their own
// AttentionImpl as ordinary tests (and so, through gtest_discover_tests, as ctest tests):
//
//   FLASHPROOF_TEST_IMPLEMENTATION(MyAttention, [] { return std::make_unique<MyAttention>(); });
//   FLASHPROOF_TEST_IMPLEMENTATION(MyAttention, factory, options);  // a SuiteOptions (below)
//
// registers the implementation (kernels/registry.h: fuzz campaigns find it by its name()) and the
// tests MyAttention.<property> (every property of properties::all_properties() that applies, '-'
// written '_', each a RapidCheck search that shrinks a failure and saves it as a case file) and
// MyAttention.fuzz_campaign (a short campaign, failing on any fail or crash record). With
// FLASHPROOF_REPLAY=FILE in the environment, MyAttention.replay re-runs a case file such a failure
// saved (its property, or the plain check) on the implementation. Run each test
// in its own process (gtest_discover_tests does): a campaign forks, and a process that has already
// used CUDA cannot fork safely (fuzz/child_process.h), so the factory should not touch the GPU.
// The namespace is testkit, not testing, so that it never hides GoogleTest's ::testing.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/attention_impl.h"
#include "core/dtype.h"

namespace flashproof::testkit {

using ImplementationFactory = std::function<std::unique_ptr<AttentionImpl>()>;

struct SuiteOptions {
  // RapidCheck cases per property; 0: RC_PARAMS's max_success (RapidCheck's default 100).
  int property_cases = 6;
  // Cases of the fuzz campaign; 0: no campaign test.
  std::uint64_t campaign_cases = 8;
  // Seed of every property search and of the campaign: fixed, so that a red run is the code's
  // doing. RC_PARAMS="reproduce=..." (printed with a failure) still re-runs one failing search.
  std::uint64_t seed = 1;
  // The dtypes of every case; empty: each of fp16, bf16, fp32 the implementation takes.
  std::vector<DType> dtypes;
  // Properties not to register, by name (e.g. "query-permutation": the bitwise properties assume
  // each query row is computed on its own; properties/properties.h).
  std::vector<std::string> skip_properties;
  // The campaign's largest cases (fuzz::GeneratorSettings): small, so that it stays short.
  std::int64_t campaign_max_seqlen = 128;
  std::int64_t campaign_max_work = std::int64_t{1} << 18;
};

// Registers the implementation and its tests in test suite `suite` (letters, digits, '_').
// Throws std::invalid_argument with one line, having registered nothing, for bad input: a bad or
// taken suite name, a null factory, a factory that throws or makes nothing, an implementation
// without a name or whose name is taken, a dtype it does not take, an unknown property to skip.
void register_implementation_tests(const std::string& suite, const ImplementationFactory& factory,
                                   const SuiteOptions& options = {});

// The same for the macro, which runs before main: bad input prints "flashproof: <the line>" on
// stderr and exits with status 2, so that a test program never runs half registered.
bool register_implementation_tests_or_exit(const std::string& suite, const ImplementationFactory& factory,
                                           const SuiteOptions& options = {});

}  // namespace flashproof::testkit

// FLASHPROOF_TEST_IMPLEMENTATION(Suite, factory[, options]): at namespace scope, once per suite.
// Everything after the suite name goes to the function as written, so a factory or options with
// commas need no extra parentheses.
#define FLASHPROOF_TEST_IMPLEMENTATION(suite, ...)                                                \
  [[maybe_unused]] static const bool flashproof_implementation_tests_##suite =                    \
      ::flashproof::testkit::register_implementation_tests_or_exit(#suite, __VA_ARGS__)
