#include "cli/atomic_file.hpp"

#include <fcntl.h>
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
    struct sigaction sa {};
    sa.sa_handler = remove_temp_and_reraise;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, nullptr);
  }
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) throw UsageError("output file name is empty");
  const auto slash = path_.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : path_.substr(0, slash + 1);
  const std::string base = slash == std::string::npos ? path_ : path_.substr(slash + 1);
  if (base.empty()) throw UsageError("output file '" + path_ + "' names a folder, not a file");
  std::string tmpl = dir + "." + base + ".probkit-XXXXXX";
  if (tmpl.size() >= sizeof(g_temp_path)) throw UsageError("output file name '" + path_ + "' is too long");
  install_signal_cleanup();
  fd_ = mkstemp(tmpl.data());
  if (fd_ < 0) throw InputError("cannot create a file in the folder of '" + path_ + "': " + errno_text());
  temp_path_ = tmpl;
  std::memcpy(g_temp_path, temp_path_.c_str(), temp_path_.size() + 1);
  g_temp_active = 1;
  // mkstemp makes the file private (0600); an output file gets the usual
  // permissions the umask allows, as if created by open(2).
  const mode_t mask = umask(0);
  umask(mask);
  fchmod(fd_, 0666 & ~mask);
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
      throw InputError("cannot write '" + path_ + "': " + errno_text());
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

void AtomicFile::commit() {
  if (fsync(fd_) != 0 && errno != EINVAL) throw InputError("cannot write '" + path_ + "': " + errno_text());
  const int fd = fd_;
  fd_ = -1;
  if (close(fd) != 0) throw InputError("cannot write '" + path_ + "': " + errno_text());
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
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
