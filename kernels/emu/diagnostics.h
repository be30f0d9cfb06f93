// The words of the emulator's errors: dimensions, call sites, threads and where a violation
// happened. Internal to the emulator.
#pragma once

#include <cstring>
#include "kernels/emu/source_site.h"
#include <string>

#include "kernels/emu/block.h"

namespace flashproof::emu::detail {

std::string text(const Dim3& d);
std::string text(const emu::SourceSite& s);  // file name without its folders, and line
std::string thread_text(const Block& b, unsigned linear);
// "kernel K, block (x,y,z), thread (x,y,z)".
std::string where(const Block& b, unsigned linear);

// Whether two call sites' texts (kind, file name) are equal: one call site always passes the same
// pointers, so the comparison of the characters is left for the rare mismatch.
inline bool same_text(const char* a, const char* b) { return a == b || std::strcmp(a, b) == 0; }

}  // namespace flashproof::emu::detail
