// Crash isolation: one unit of campaign work runs in a forked child process, so a segfault, an
// abort, a CUDA error that kills the process, or a hang (an emulator deadlock) is recorded as the
// failure of that case and the campaign goes on. The child's result string goes through a file;
// its stdout and stderr go to a log whose tail explains an abnormal end. The parent learns of the
// end without polling on a timer: the child alone holds the write end of a pipe, which the kernel
// closes when the child exits, however it exits (wait_for_any).
//
// The parent must not have initialised CUDA before forking (a CUDA context does not survive
// fork()): the campaign runner only forks and never runs an implementation itself.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace flashproof::fuzz {

struct ChildEnd {
  bool normal = false;   // exited with status 0 after writing its result
  std::string result;    // what the work returned (normal ends)
  std::string problem;   // otherwise one line: signal, exit status or time limit, and the log's tail
  double seconds = 0;
};

class ChildProcess {
 public:
  // Forks; the child runs work() and exits. Files: scratch + ".out" (result), scratch + ".log".
  ChildProcess(const std::function<std::string()>& work, std::string scratch, double timeout_seconds);
  ~ChildProcess();  // kills a child still running
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The end once the child has ended (or was killed at its time limit); nullopt while it runs.
  std::optional<ChildEnd> poll();
  // Waits for the end.
  ChildEnd wait();
  // Seconds until the time limit (+inf without one); at most 0 once it has passed.
  double seconds_left() const;
  // The read end of the pipe: readable (end of file) once the child has exited.
  int end_fd() const { return end_fd_; }

 private:
  ChildEnd finish(int status, bool timed_out);
  pid_t pid_ = -1;
  int end_fd_ = -1;
  std::string scratch_;
  double timeout_;
  std::chrono::steady_clock::time_point start_;
};

// Blocks until one of the children has exited or reached its time limit, or max_seconds have
// passed, whichever comes first; then poll() each child. Returns at once when one has already ended.
void wait_for_any(const std::vector<ChildProcess*>& children, double max_seconds);

// Runs work() isolated and waits.
ChildEnd run_isolated(const std::function<std::string()>& work, const std::string& scratch, double timeout_seconds);

}  // namespace flashproof::fuzz
