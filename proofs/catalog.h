// The proof families, one per source file; proof.cpp's all_proofs() concatenates them.
#pragma once

#include <vector>

#include "proofs/obligation.h"

namespace flashproof::proofs {

std::vector<ProofSpec> online_softmax_proofs();  // theorems 1-3 (online_softmax_proofs.cpp)
std::vector<ProofSpec> backward_proofs();        // theorem 4 (backward_proofs.cpp)
std::vector<ProofSpec> block_skip_proofs();      // theorem 5 (block_skip_proofs.cpp)
std::vector<ProofSpec> machine_int_proofs();     // theorem 5b (machine_int_proofs.cpp)
std::vector<ProofSpec> fp_proofs();              // theorem 6 (fp_proofs.cpp, its parts fp32_*)
std::vector<ProofSpec> packed_batch_proofs();    // theorem 7 (packed_batch_proofs.cpp)
std::vector<ProofSpec> score_mod_proofs();       // theorem 8 (score_mod_proofs.cpp)
std::vector<ProofSpec> split_kv_proofs();        // theorem 9 (split_kv_proofs.cpp)
std::vector<ProofSpec> paged_kv_proofs();        // theorem 10 (paged_kv_proofs.cpp)

}  // namespace flashproof::proofs
