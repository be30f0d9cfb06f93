// One query of a proof: "assumptions imply goal", checked by asking Z3 for a model of the
// assumptions and not the goal (proofs/proof.cpp). Only proofs/ includes this header, and with it
// Z3's C++ API; everyone else sees proofs through proofs/proof.h.
#pragma once

#include <z3++.h>

#include <string>
#include <vector>

#include "proofs/proof.h"

namespace flashproof::proofs {

struct Obligation {
  std::string name;
  std::vector<z3::expr> assumptions;
  z3::expr goal;
};

}  // namespace flashproof::proofs
