// A proof is a list of validity queries (obligations) built from the shipped algorithm pieces, plus
// a twin: the same queries on a deliberately wrong variant, which must yield a counterexample.
// Results are three-valued, as in Alive2: proved / counterexample (validated model printed) /
// unknown (Z3's reason printed). Only "proved" passes; a timeout is unknown, hence a failure.
//
// Z3 stays behind this header (as Alive2 keeps it behind its own expressions): callers such as
// cli/ see the proofs by name and run them; only proofs/ builds obligations (proofs/obligation.h).
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace z3 {
class context;
}  // namespace z3

namespace flashproof::proofs {

enum class Outcome { proved, counterexample, unknown };
enum class Variant { shipped, twin };

const char* to_string(Outcome o);

struct Obligation;  // proofs/obligation.h

struct ProofSpec {
  std::string name;       // the `flashproof prove NAME` name
  std::string statement;  // what is proved, one line
  std::string twin;       // what the twin breaks, one line
  std::function<std::vector<Obligation>(z3::context&, Variant)> build;
};

struct ObligationResult {
  std::string name;
  Outcome outcome = Outcome::unknown;
  std::string detail;  // the model for a counterexample, Z3's reason for unknown
  double seconds = 0;
};

struct ProofResult {
  std::string name;
  Variant variant = Variant::shipped;
  Outcome outcome = Outcome::unknown;  // proved iff every obligation is proved
  std::vector<ObligationResult> parts;
  double seconds = 0;
};

struct RunOptions {
  unsigned timeout_ms = 20000;  // per obligation
  std::string smt2_dir;         // when set, every query is written there as SMT-LIB
};

// All proofs, in the order of docs/proofs.md.
const std::vector<ProofSpec>& all_proofs();

ProofResult run_proof(const ProofSpec& spec, Variant variant, const RunOptions& options);

// The shipped variant proved and the twin refuted.
bool proof_passes(const ProofResult& shipped, const ProofResult& twin);

// Human-readable report of one result (multi-line).
std::string describe(const ProofResult& result);

}  // namespace flashproof::proofs
