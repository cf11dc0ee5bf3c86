#include "cli/atomic_file.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "cli/errors.hpp"

namespace probkit::cli {
namespace {

// The temporary file a signal handler must remove. One output file is open
// at a time in this program; a fixed buffer keeps the handler async-signal-safe.
char g_temp_path[4096];
volatile std::sig_atomic_t g_temp_active = 0;

extern "C" void remove_temp_and_reraise(int sig) {
  if (g_temp_active) unlink(g_temp_path);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

// The signals whose default action ends the process: each removes the
// temporary file first. (SIGXFSZ is ignored instead, below.)
constexpr int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGALRM,
                                   SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF};

void install_signal_cleanup() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  // Past a file-size limit (ulimit -f) write() then fails with EFBIG, and
  // the error path removes the temporary file, where the signal's default
  // action would have ended the process with the file left behind.
  std::signal(SIGXFSZ, SIG_IGN);
  for (int sig : kCleanupSignals) {
    // A signal ignored when the program started (nohup, a shell's background
    // job) stays ignored: the caller chose to survive it.
    struct sigaction current {};
    if (sigaction(sig, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = remove_temp_and_reraise;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

std::string errno_text() { return std::strerror(errno); }

// The temporary file's name keeps this much of the destination's, so that
// it stays within the 255 bytes a file name may have.
constexpr std::size_t kTempNameKeeps = 200;

// The descriptor a path names as one of this process's own (/dev/stdout,
// /dev/stderr, /dev/fd/N, /proc/self/fd/N), else -1. Such a path means the
// descriptor as it is open, with its offset, O_APPEND or socket: opened again
// by name, a regular file behind it would be replaced (`>> log` lost the
// log) and a socket refused (ENXIO).
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = -1;
    const char* digits = path.c_str() + prefix.size();
    const char* end = path.c_str() + path.size();
    const auto [stop, ec] = std::from_chars(digits, end, fd);
    if (ec == std::errc() && stop == end && fd >= 0) return fd;
  }
  return -1;
}

// A duplicate of `fd` to write in place; InputError naming `name` where it is
// closed, not open for writing, or (for a standard descriptor closed at
// start, tools/main.cc) an unconnected socket.
int writable_duplicate(int fd, const std::string& name) {
  const int flags = fcntl(fd, F_GETFL);
  struct stat st {};
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  const bool unconnected = fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
                           getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 && errno == ENOTCONN;
  if (flags == -1 || (flags & O_ACCMODE) == O_RDONLY || unconnected) {
    throw InputError("cannot write " + name + ": it is closed or not open for writing");
  }
  const int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
  if (dup < 0) throw InputError("cannot write " + name + ": " + errno_text());
  return dup;
}

}  // namespace

std::string resolve_links(const std::string& path) {
  std::string at = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return at;
    char target[4096];
    const ssize_t n = readlink(at.c_str(), target, sizeof target);
    if (n < 0 || static_cast<std::size_t>(n) == sizeof target) return at;
    std::string next(target, static_cast<std::size_t>(n));
    if (next.front() != '/') {
      const auto slash = at.rfind('/');
      next = (slash == std::string::npos ? "" : at.substr(0, slash + 1)) + next;
    }
    at = next;
  }
  throw InputError("cannot write '" + path + "': too many levels of symbolic links");
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), name_("'" + path_ + "'") {
  if (path_.empty()) throw UsageError("output file name is empty");
  if (path_ == "-") {
    // "-" is standard output, as it is standard input for the inputs.
    name_ = "standard output";
    fd_ = writable_duplicate(STDOUT_FILENO, name_);
    in_place_ = true;
    return;
  }
  if (const int own = own_descriptor(path_); own >= 0) {
    fd_ = writable_duplicate(own, name_);
    in_place_ = true;
    return;
  }
  struct stat st {};
  const bool exists = stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) throw UsageError("output file '" + path_ + "' names a folder, not a file");
  if (exists && !S_ISREG(st.st_mode)) {
    // A device, pipe or socket (/dev/stdout, /dev/null, a FIFO) has no
    // contents to keep whole: it is written in place, never replaced.
    fd_ = open(path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) throw InputError("cannot write '" + path_ + "': " + errno_text());
    in_place_ = true;
    return;
  }
  // An existing file is replaced only where it could be written: not a
  // read-only one (as the shell's `>` refuses it).
  if (exists && access(path_.c_str(), W_OK) != 0) throw InputError("cannot write '" + path_ + "': " + errno_text());
  target_ = resolve_links(path_);
  const auto slash = target_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : target_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? target_ : target_.substr(slash + 1);
  if (base.empty()) throw UsageError("output file '" + path_ + "' names a folder, not a file");
  std::string tmpl = dir + "." + base.substr(0, kTempNameKeeps) + ".probkit-XXXXXX";
  if (tmpl.size() >= sizeof(g_temp_path)) throw UsageError("output file name '" + path_ + "' is too long");
  install_signal_cleanup();
  {
    // No signal between the file's creation and its registration with the
    // handler, which would leave it behind.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    fd_ = mkstemp(tmpl.data());
    const int created_errno = errno;
    if (fd_ >= 0) {
      std::memcpy(g_temp_path, tmpl.c_str(), tmpl.size() + 1);
      g_temp_active = 1;
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    errno = created_errno;
  }
  if (fd_ < 0) throw InputError("cannot create a file in the folder of '" + path_ + "': " + errno_text());
  temp_path_ = tmpl;
  if (exists) {
    replaced_ = file_id(st);
    // The replacement keeps the file's owner where allowed (root), else its
    // group where this user is in it (a shared sketch stays writable by the
    // group), then its permissions: updating a private sketch must not make
    // it world-readable. The mode comes last, as a change of owner clears
    // the set-user-ID and set-group-ID bits.
    if (fchown(fd_, st.st_uid, st.st_gid) != 0 && fchown(fd_, static_cast<uid_t>(-1), st.st_gid) != 0) {
      // Neither is allowed: the file is ours, as a new one would be.
    }
    fchmod(fd_, st.st_mode & 07777);
  } else {
    // mkstemp makes the file private (0600); a new output file gets the
    // usual permissions the umask allows, as if created by open(2).
    const mode_t mask = umask(0);
    umask(mask);
    fchmod(fd_, 0666 & ~mask);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) close(fd_);
  if (!committed_ && !temp_path_.empty()) {
    unlink(temp_path_.c_str());
  }
  g_temp_active = 0;
}

void AtomicFile::write(std::span<const std::uint8_t> bytes) {
  const std::uint8_t* p = bytes.data();
  std::size_t left = bytes.size();
  while (left > 0) {
    const ssize_t w = ::write(fd_, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw InputError("cannot write " + name_ + ": " + errno_text());
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

void AtomicFile::commit() {
  if (!in_place_ && fsync(fd_) != 0 && errno != EINVAL) {
    throw InputError("cannot write " + name_ + ": " + errno_text());
  }
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) throw InputError("cannot write " + name_ + ": " + errno_text());
  if (in_place_) {
    committed_ = true;
    return;
  }
  if (std::rename(temp_path_.c_str(), target_.c_str()) != 0) {
    throw InputError("cannot replace '" + path_ + "': " + errno_text());
  }
  committed_ = true;
  g_temp_active = 0;
}

void write_file_atomically(const std::string& path, std::span<const std::uint8_t> bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

}  // namespace probkit::cli
