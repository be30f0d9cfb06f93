// What a saved benchmark result must say about its run: date, commit, machine and load (the
// development machine is shared, so the load average is printed before and after the runs).
#pragma once

#include <cstdio>
#include <ctime>
#include <fstream>
#include <string>

namespace flashproof::bench {

inline std::string shell_line(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a.empty() ? "unknown" : a + " " + b + " " + c + " (1, 5, 15 min)";
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

inline std::string utc_now() {
  char date[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", std::gmtime(&now));
  return date;
}

// The short commit of the source tree at `dir`, marked when the working tree has changes.
inline std::string commit_of(const std::string& dir) {
  std::string commit = shell_line("git -C '" + dir + "' rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  if (!shell_line("git -C '" + dir + "' status --porcelain 2>/dev/null").empty())
    commit += " (working tree has uncommitted changes)";
  return commit;
}

}  // namespace flashproof::bench
