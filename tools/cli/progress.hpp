// A progress bar on stderr, drawn only when stderr is a terminal and the
// input is large, so pipes and logs never see it.
#pragma once
#include <chrono>
#include <cstdint>
#include <mutex>

namespace probkit::cli {

class Progress {
 public:
  // `total_bytes` = 0 when the size is unknown (a pipe): the bar then shows
  // the bytes read so far once they pass the threshold.
  explicit Progress(std::uint64_t total_bytes);
  ~Progress();  // erases the bar
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Thread-safe; redraws at most a few times a second.
  void advance(std::uint64_t bytes);

  // Inputs at least this large get a bar.
  static constexpr std::uint64_t kMinBytes = std::uint64_t{64} << 20;

 private:
  void draw();

  std::mutex mutex_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace probkit::cli
