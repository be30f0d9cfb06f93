#include "kernels/emu/diagnostics.h"

#include <sstream>

namespace flashproof::emu::detail {

std::string text(const Dim3& d) {
  std::ostringstream os;
  os << "(" << d.x << "," << d.y << "," << d.z << ")";
  return os.str();
}

std::string text(const emu::SourceSite& s) {
  std::string file = s.file_name();
  if (const auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(s.line());
}

std::string thread_text(const Block& b, unsigned linear) {
  return "thread " + text(unflatten(linear, b.config->block));
}

std::string where(const Block& b, unsigned linear) {
  return std::string("kernel ") + b.config->kernel + ", block " + text(b.idx) + ", " + thread_text(b, linear);
}

}  // namespace flashproof::emu::detail
