#include "cli/update_lock.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "cli/atomic_file.hpp"

namespace probkit::cli {
namespace {

// flock(2) LOCK_EX, waiting as long as it takes; false where the file system
// refuses it.
bool lock_exclusive(int fd) {
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

}  // namespace

UpdateLock::UpdateLock(const std::string& path) {
  const std::string target = resolve_links(path);
  const auto slash = target.rfind('/');
  const std::string folder = slash == std::string::npos ? "." : slash == 0 ? "/" : target.substr(0, slash);
  // Each pass locks what is there now; another pass follows only when another
  // run replaced or created the file while this one waited.
  for (;;) {
    // O_NONBLOCK: opening a FIFO must not wait for a writer.
    const int file = open(target.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (file >= 0) {
      struct stat held {};
      if (fstat(file, &held) != 0 || !S_ISREG(held.st_mode) || !lock_exclusive(file)) {
        close(file);
        return;
      }
      struct stat now {};
      if (stat(target.c_str(), &now) == 0 && file_id(held) == file_id(now)) {
        fd_ = file;
        return;
      }
      close(file);
      continue;
    }
    // Not readable for another reason than its absence: reading the sketch
    // then fails and says why.
    if (errno != ENOENT) return;
    const int dir = open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;  // the output file then says why the folder is unusable
    if (!lock_exclusive(dir)) {
      close(dir);
      return;
    }
    struct stat now {};
    if (stat(target.c_str(), &now) != 0 && errno == ENOENT) {
      fd_ = dir;
      return;
    }
    close(dir);
  }
}

UpdateLock::~UpdateLock() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace probkit::cli
