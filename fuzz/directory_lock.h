// One campaign run per directory: DIR/.lock held for the run, so that a second run on the same
// directory is refused instead of racing this one (both appending the same records, and the first
// to end removing the .work files the other's case processes still use, which then count as
// crashes).
#pragma once

#include <filesystem>
#include <ostream>

namespace flashproof::fuzz {

// A POSIX record lock: not inherited by the forked case processes and released when the process
// ends, killed or not, so a killed campaign's directory is free at once. The file stays (removing
// it would let a third run lock a new file while a second still holds the old one). Where the file
// system cannot lock (ENOLCK), the run goes on unguarded and says so on `notes`.
class DirectoryLock {
 public:
  // Throws std::invalid_argument (one line) when another process holds the lock or the file
  // cannot be opened.
  DirectoryLock(const std::filesystem::path& dir, std::ostream& notes);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace flashproof::fuzz
