#include "fuzz/run_provenance.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <thread>

#ifndef FLASHPROOF_SOURCE_DIR
#define FLASHPROOF_SOURCE_DIR "."
#endif

namespace flashproof::fuzz {
namespace {

std::string command_output(const std::string& command) {
  std::string out;
  if (std::FILE* p = ::popen(command.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

}  // namespace

std::string source_commit() {
  const std::string commit = command_output("git -C '" FLASHPROOF_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null");
  return commit.empty() ? "unknown" : commit;
}

std::string machine_description() {
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  return std::string(host) + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

}  // namespace flashproof::fuzz
