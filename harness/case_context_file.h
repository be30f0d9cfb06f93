// A prepared case (check.h, CaseContext) in a binary file, so that the implementations of one
// case, checked in separate processes, share its reference and baseline instead of each computing
// them. The inputs are not stored: loading regenerates them from the case (deterministic). Nor is
// the time the reference took: a loaded context's seconds_reference is 0, the caller adds its own.
#pragma once

#include <optional>
#include <string>

#include "harness/check.h"

namespace flashproof {

// Written to a temporary file and renamed, so a reader never sees half a file.
// The options are part of the key (the reference's options change its results).
void save_case_context(const std::string& path, const Case& c, const CheckOptions& opt,
                       const CaseContext& ctx);
// nullopt when the file is missing, unreadable, damaged (checksum), or holds another case, other
// options or the other direction.
std::optional<CaseContext> load_case_context(const std::string& path, const Case& c,
                                             const CheckOptions& opt);

}  // namespace flashproof
