// One test per proof: the shipped variant must be proved and its twin (a deliberately wrong
// variant) must yield a validated counterexample.
#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "proofs/proof.h"

namespace flashproof::proofs {
namespace {

class ProofTest : public ::testing::TestWithParam<std::string> {};

const ProofSpec& spec_named(const std::string& name) {
  for (const auto& p : all_proofs()) {
    if (p.name == name) return p;
  }
  throw std::runtime_error("no proof named " + name);
}

TEST_P(ProofTest, ProvedAndTwinRefuted) {
  const ProofSpec& spec = spec_named(GetParam());
  RunOptions options;
  const ProofResult shipped = run_proof(spec, Variant::shipped, options);
  const ProofResult twin = run_proof(spec, Variant::twin, options);
  std::cout << describe(shipped) << describe(twin);
  EXPECT_EQ(shipped.outcome, Outcome::proved) << describe(shipped);
  EXPECT_EQ(twin.outcome, Outcome::counterexample) << describe(twin);
}

std::vector<std::string> proof_names() {
  std::vector<std::string> names;
  for (const auto& p : all_proofs()) names.push_back(p.name);
  return names;
}

std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = info.param;
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

INSTANTIATE_TEST_SUITE_P(All, ProofTest, ::testing::ValuesIn(proof_names()), test_name);

TEST(ProofCatalog, NamesAreUniqueAndEveryProofHasATwin) {
  const auto names = proof_names();
  EXPECT_FALSE(names.empty());
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = i + 1; j < names.size(); ++j) EXPECT_NE(names[i], names[j]);
  }
  for (const auto& p : all_proofs()) {
    EXPECT_FALSE(p.statement.empty()) << p.name;
    EXPECT_FALSE(p.twin.empty()) << p.name;
  }
}

}  // namespace
}  // namespace flashproof::proofs
