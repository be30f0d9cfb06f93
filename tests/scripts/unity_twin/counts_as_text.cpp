// The twin of scripts.unity_collisions (not compiled): report/'s collision of 2026-11-28. In one
// unity batch with counts_as_json.cpp, its count(std::size_t) wins over that file's template.
#include <cstddef>
#include <string>

namespace {

std::string count(std::size_t n) { return std::to_string(n); }

}  // namespace

std::string row_text(std::size_t n) { return count(n); }
