// Paths printed as shell commands (the replay line of a saved failure) that paste back exactly.
#pragma once

#include <string>
#include <string_view>

namespace flashproof::fuzz {

// s as one word for a POSIX shell: unchanged when it holds only characters no shell treats
// specially, else in single quotes; with control characters, bash's $'...' with \xNN escapes, so
// that a printed command stays on one line and pastes back exactly.
std::string shell_quoted(std::string_view s);

}  // namespace flashproof::fuzz
