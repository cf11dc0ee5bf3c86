#include "cli/atomic_file.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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

void install_signal_cleanup() {
  static bool installed = false;
  if (installed) return;
  installed = true;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
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

// The file a path names once symbolic links are followed (even to a file not
// there yet), so that replacing it keeps the links.
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

// The temporary file's name keeps this much of the destination's, so that
// it stays within the 255 bytes a file name may have.
constexpr std::size_t kTempNameKeeps = 200;

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), name_("'" + path_ + "'") {
  if (path_.empty()) throw UsageError("output file name is empty");
  if (path_ == "-") {
    // "-" is standard output, as it is standard input for the inputs.
    name_ = "standard output";
    // Closed at start, it holds an unconnected socket (tools/main.cc).
    const int flags = fcntl(STDOUT_FILENO, F_GETFL);
    struct stat out {};
    sockaddr_storage peer{};
    socklen_t peer_len = sizeof peer;
    const bool unconnected = fstat(STDOUT_FILENO, &out) == 0 && S_ISSOCK(out.st_mode) &&
                             getpeername(STDOUT_FILENO, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0 &&
                             errno == ENOTCONN;
    if (flags == -1 || (flags & O_ACCMODE) == O_RDONLY || unconnected) {
      throw InputError("cannot write standard output: it is closed or not open for writing");
    }
    fd_ = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) throw InputError("cannot write standard output: " + errno_text());
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
  fd_ = mkstemp(tmpl.data());
  if (fd_ < 0) throw InputError("cannot create a file in the folder of '" + path_ + "': " + errno_text());
  temp_path_ = tmpl;
  std::memcpy(g_temp_path, temp_path_.c_str(), temp_path_.size() + 1);
  g_temp_active = 1;
  if (exists) {
    // The replacement keeps the file's permissions (and, where allowed, its
    // owner): updating a private sketch must not make it world-readable.
    fchmod(fd_, st.st_mode & 07777);
    if (fchown(fd_, st.st_uid, st.st_gid) != 0) {
      // Only the owner's group or root may give the file away: keep ours.
    }
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
