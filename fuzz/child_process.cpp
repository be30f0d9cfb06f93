#include "fuzz/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace flashproof::fuzz {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The last non-empty line of the child's log (an error message printed before dying).
std::string log_tail(const std::string& path) {
  const std::string log = read_file(path);
  std::size_t end = log.find_last_not_of("\n\r ");
  if (end == std::string::npos) return {};
  const std::size_t begin = log.rfind('\n', end);
  std::string line = log.substr(begin == std::string::npos ? 0 : begin + 1, end + 1 - (begin == std::string::npos ? 0 : begin + 1));
  if (line.size() > 300) line = line.substr(0, 300) + "...";
  return line;
}

// Whether fd is readable or hung up now (the child's end of the pipe is closed).
bool ready(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0;
}

// The child dies with the process that forked it: a campaign killed with SIGKILL cannot end its
// children itself, and a resumed run would start the same case beside a survivor that still uses
// its files. The death signal is armed after fork, so a parent that died in between is caught by
// comparing getppid() with the pid it had before forking. Linux only: elsewhere a killed
// campaign's children run on until they end by themselves.
void die_with_parent(pid_t parent) {
#ifdef __linux__
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(5);
#else
  (void)parent;
#endif
}

[[noreturn]] void run_child(const std::function<std::string()>& work, const std::string& scratch) {
  const int log = ::open((scratch + ".log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (log >= 0) {
    ::dup2(log, STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    ::close(log);
  }
  ::signal(SIGINT, SIG_DFL);
  std::string result;
  try {
    result = work();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    std::fflush(stderr);
    ::_exit(3);
  } catch (...) {
    std::fprintf(stderr, "unknown exception\n");
    std::fflush(stderr);
    ::_exit(3);
  }
  const std::string out = scratch + ".out";
  std::FILE* f = std::fopen(out.c_str(), "wb");
  if (f == nullptr || std::fwrite(result.data(), 1, result.size(), f) != result.size() || std::fclose(f) != 0) ::_exit(4);
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(0);
}

}  // namespace

ChildProcess::ChildProcess(const std::function<std::string()>& work, std::string scratch, double timeout_seconds)
    : scratch_(std::move(scratch)), timeout_(timeout_seconds), start_(std::chrono::steady_clock::now()) {
  std::remove((scratch_ + ".out").c_str());
  std::fflush(nullptr);  // nothing buffered in the parent gets written twice
  // Close-on-exec, and the parent keeps only the read end: no other child holds this write end.
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid_ == 0) {
    die_with_parent(parent);
    ::close(fds[0]);
    run_child(work, scratch_);  // fds[1] stays open until the child's end
  }
  ::close(fds[1]);
  end_fd_ = fds[0];
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  if (end_fd_ >= 0) ::close(end_fd_);
}

double ChildProcess::seconds_left() const {
  if (!(timeout_ > 0)) return INFINITY;
  return timeout_ - std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

ChildEnd ChildProcess::finish(int status, bool timed_out) {
  pid_ = -1;
  ::close(end_fd_);
  end_fd_ = -1;
  ChildEnd end;
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const std::string tail = log_tail(scratch_ + ".log");
  const std::string said = tail.empty() ? "" : ": " + tail;
  if (timed_out) {
    // A timeout says only that the case was slow: a deadlock the emulator detects is an exception.
    char buf[96];
    std::snprintf(buf, sizeof buf, "timed out: exceeded --case-timeout of %g s, killed", timeout_);
    end.problem = buf + said;
  } else if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    end.problem = "killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")" + said;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 3) {
    end.problem = "threw" + said;
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    end.problem = "exited with status " + std::to_string(WEXITSTATUS(status)) + said;
  } else {
    end.normal = true;
    end.result = read_file(scratch_ + ".out");
  }
  std::remove((scratch_ + ".out").c_str());
  std::remove((scratch_ + ".log").c_str());
  return end;
}

std::optional<ChildEnd> ChildProcess::poll() {
  if (pid_ <= 0) throw std::logic_error("ChildProcess::poll after the end");
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  // The pipe closes as the child exits, a moment before it can be reaped: then wait for it.
  if (r == 0 && ready(end_fd_)) r = ::waitpid(pid_, &status, 0);
  if (r == pid_) return finish(status, false);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (timeout_ > 0 && elapsed > timeout_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, &status, 0);
    return finish(status, true);
  }
  return std::nullopt;
}

ChildEnd ChildProcess::wait() {
  for (;;) {
    if (std::optional<ChildEnd> end = poll()) return *end;
    wait_for_any({this}, 1);  // at most 1 s: a grandchild that kept the pipe open delays no more
  }
}

void wait_for_any(const std::vector<ChildProcess*>& children, double max_seconds) {
  std::vector<pollfd> fds;
  double wait = max_seconds;
  for (const ChildProcess* c : children) {
    if (c->end_fd() < 0) return;  // already ended
    fds.push_back(pollfd{c->end_fd(), POLLIN, 0});
    wait = std::min(wait, c->seconds_left());
  }
  if (!(wait > 0)) return;
  // Rounded up, so that a time limit is never polled a moment early and then waited for again.
  const double ms = std::ceil(wait * 1000);
  ::poll(fds.data(), fds.size(), ms > 1e9 ? -1 : static_cast<int>(ms));  // EINTR: the caller polls again
}

ChildEnd run_isolated(const std::function<std::string()>& work, const std::string& scratch, double timeout_seconds) {
  ChildProcess child(work, scratch, timeout_seconds);
  return child.wait();
}

}  // namespace flashproof::fuzz
