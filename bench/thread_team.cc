#include "thread_team.hpp"

#include <chrono>

namespace probkit::bench {
namespace {
// How long an idle helper spins for the next job before it sleeps: long
// enough to cover the gap between two passes of a benchmark loop, short
// enough that idle helpers do not take a core from single-thread benchmarks.
constexpr auto kSpin = std::chrono::milliseconds(2);
}  // namespace

ThreadTeam& ThreadTeam::instance() {
  static ThreadTeam team;
  return team;
}

ThreadTeam::~ThreadTeam() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (auto& t : helpers_) t.join();
}

void ThreadTeam::run(unsigned threads, const std::function<void(unsigned)>& job) {
  if (threads <= 1) {
    job(0);
    return;
  }
  {
    std::lock_guard lock(mutex_);
    while (helpers_.size() + 1 < threads) {
      const auto index = static_cast<unsigned>(helpers_.size() + 1);
      helpers_.emplace_back([this, index] { loop(index); });
    }
    job_ = &job;
    active_ = threads;
    pending_.store(threads - 1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  job(0);
  while (pending_.load(std::memory_order_acquire) != 0) {
  }
}

void ThreadTeam::loop(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    // Spin for the next generation, then sleep until it comes.
    const auto spin_until = std::chrono::steady_clock::now() + kSpin;
    while (generation_.load(std::memory_order_acquire) == seen &&
           std::chrono::steady_clock::now() < spin_until) {
    }
    const std::function<void(unsigned)>* job = nullptr;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
      seen = generation_.load(std::memory_order_acquire);
      if (stop_) return;
      if (index < active_) job = job_;
    }
    if (job != nullptr) {
      (*job)(index);
      pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
  }
}

}  // namespace probkit::bench
