#include "cli/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace probkit::cli {
namespace {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (b >= 1000 && u < 4) {
    b /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

}  // namespace

Progress::Progress(std::uint64_t total_bytes)
    : total_(total_bytes),
      enabled_(isatty(STDERR_FILENO) == 1 && (total_bytes == 0 || total_bytes >= kMinBytes)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

Progress::~Progress() {
  if (drawn_) std::fputs("\r\033[K", stderr);
}

void Progress::advance(std::uint64_t bytes) {
  if (!enabled_) return;
  std::lock_guard lock(mutex_);
  done_ += bytes;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(200)) return;
  if (total_ == 0 && done_ < kMinBytes) return;
  last_draw_ = now;
  draw();
}

void Progress::draw() {
  const double secs = std::chrono::duration<double>(last_draw_ - start_).count();
  const std::string rate = human_bytes(secs > 0 ? static_cast<double>(done_) / secs : 0) + "/s";
  char line[160];
  if (total_ > 0) {
    constexpr int kWidth = 30;
    const double f = std::min(1.0, static_cast<double>(done_) / static_cast<double>(total_));
    std::string bar(static_cast<std::size_t>(f * kWidth), '#');
    bar.resize(kWidth, ' ');
    std::snprintf(line, sizeof line, "\r[%s] %3.0f%%  %s / %s  %s\033[K", bar.c_str(), f * 100,
                  human_bytes(static_cast<double>(done_)).c_str(),
                  human_bytes(static_cast<double>(total_)).c_str(), rate.c_str());
  } else {
    std::snprintf(line, sizeof line, "\r%s read  %s\033[K", human_bytes(static_cast<double>(done_)).c_str(),
                  rate.c_str());
  }
  std::fputs(line, stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace probkit::cli
