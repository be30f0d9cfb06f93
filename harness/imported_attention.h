// Outputs computed elsewhere, judged here: the implementation "imported:<backend>" answers a call
// with the files <backend>/o.bin, lse.bin, dq.bin, dk.bin, dv.bin of the exchange case
// (harness/exchange.h, docs/exchange.md) whose problem and inputs are the call's. It is judged with
// ArithmeticModel::flash, like the FA kernels, since the backends it stands for are fused kernels.
//
// A call whose problem matches no exported case, or whose inputs differ from the stored ones
// bit for bit, throws std::invalid_argument; a missing or short output file throws
// std::runtime_error naming the file (a fuzz campaign records either as a crash). unsupported_reason
// says "no imported outputs of <backend> for this case" where no exported case of the problem has
// the backend's o.bin (the backend refused it), so checks and campaigns skip such cases.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/attention_impl.h"

namespace flashproof {

std::unique_ptr<AttentionImpl> make_imported_attention(const std::string& root, const std::string& backend);

// Registers "imported:<backend>" for every backend directory found in the root's case directories
// and returns the names. A name already registered for the same root is kept (calling twice is
// harmless); one registered otherwise is an error. Throws std::invalid_argument with one line when
// the root is not a directory or holds no case directory, or a case.json is bad.
std::vector<std::string> register_imported_implementations(const std::string& root);

}  // namespace flashproof
