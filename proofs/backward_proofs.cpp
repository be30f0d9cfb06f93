// Placeholder until the family is written.
#include "proofs/catalog.h"

namespace flashproof::proofs {

std::vector<ProofSpec> backward_proofs() { return {}; }

}  // namespace flashproof::proofs
