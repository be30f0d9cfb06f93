#include "fuzz/directory_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace flashproof::fuzz {

DirectoryLock::DirectoryLock(const std::filesystem::path& dir, std::ostream& notes) {
  const std::string path = (dir / ".lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::invalid_argument("cannot open " + path + ": " + std::strerror(errno));
  struct flock want {};
  want.l_type = F_WRLCK;
  want.l_whence = SEEK_SET;
  if (::fcntl(fd_, F_SETLK, &want) == 0) return;
  const int why = errno;
  if (why != EACCES && why != EAGAIN) {
    notes << "fuzz: note: cannot lock " << path << " (" << std::strerror(why)
          << "); a second run on this directory would not be refused\n";
    return;
  }
  struct flock holder = want;
  std::string who;
  if (::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK && holder.l_pid > 0)
    who = " (pid " + std::to_string(holder.l_pid) + ")";
  ::close(fd_);
  fd_ = -1;
  throw std::invalid_argument(dir.string() + " is in use by another flashproof fuzz run" + who +
                              "; wait for it to end or use another --out");
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace flashproof::fuzz
