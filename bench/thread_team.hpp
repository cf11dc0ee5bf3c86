// Persistent helper threads for the benchmarks' own multi-threaded loops
// (hashing alone), so that they are timed the way probkit's bulk calls run:
// on threads that already exist and spin briefly between calls, not on
// threads created per call (a new thread took a millisecond or more to get a
// core on the virtual machines we measure on, as long as a whole pass).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace probkit::bench {

class ThreadTeam {
 public:
  // The process-wide team; it grows to the largest size asked for.
  static ThreadTeam& instance();

  // Runs job(0) .. job(threads - 1), job(0) on the calling thread, and
  // returns when all have finished. Not reentrant.
  void run(unsigned threads, const std::function<void(unsigned)>& job);

  ~ThreadTeam();

 private:
  ThreadTeam() = default;
  void loop(unsigned index);

  std::vector<std::thread> helpers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  const std::function<void(unsigned)>* job_ = nullptr;
  unsigned active_ = 0;  // helpers 1 .. active_ - 1 take part in this generation
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<unsigned> pending_{0};
  bool stop_ = false;
};

}  // namespace probkit::bench
