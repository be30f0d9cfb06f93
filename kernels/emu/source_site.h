// The source line an emulated barrier or warp collective was called from: the emulator checks that
// all threads meet at one site and names it in its messages. Our own rather than
// std::source_location, which clang 14 (the sanitizer and parser-fuzzing build,
// scripts/sanitized.sh) cannot build from libstdc++ 12: it lacks __builtin_source_location.
// __builtin_FILE/__builtin_LINE in a default argument, as here, take the outermost caller's line in
// GCC and clang alike, also when `current()` is itself a default argument (FP_SITE).
#pragma once

#include <cstdint>

namespace flashproof::emu {

class SourceSite {
 public:
  static constexpr SourceSite current(const char* file = __builtin_FILE(),
                                      std::uint_least32_t line = __builtin_LINE()) noexcept {
    return SourceSite(file, line);
  }
  constexpr SourceSite() noexcept = default;
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr std::uint_least32_t line() const noexcept { return line_; }

 private:
  constexpr SourceSite(const char* file, std::uint_least32_t line) noexcept : file_(file), line_(line) {}
  const char* file_ = "";
  std::uint_least32_t line_ = 0;
};

}  // namespace flashproof::emu
