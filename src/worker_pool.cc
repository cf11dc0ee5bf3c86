#include "worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <pthread.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "probkit/error.hpp"

namespace probkit::detail {
namespace {

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");  // the spin-wait hint, not a system call
#else
  std::this_thread::yield();
#endif
}

// How long a waiting worker spins (SpinWait) before it sleeps or yields: for
// an idle pool thread, long enough to bridge the gap between back-to-back bulk
// calls, short enough not to waste a core.
constexpr auto kSpin = std::chrono::milliseconds(2);

// Set on pool threads and on a caller while it runs a pooled call: a nested
// run_workers from there takes plain threads (the pool is busy with it).
thread_local bool t_inside_pool = false;

// A thread that cannot start (std::thread throws std::system_error: out of
// threads or memory for their stacks) is a probkit::Error at the API, as
// every other failure there is (error.hpp).
[[noreturn]] void throw_cannot_start(const std::system_error& e, unsigned workers) {
  throw Error("cannot start the threads of a " + std::to_string(workers) + "-worker call (" + e.what() +
              "): set_threads() or PROBKIT_THREADS can ask for fewer");
}

class Pool;

// The process's pool, made at its first pooled call. A child of fork() has
// none of the parent's threads, only their bookkeeping (a call waited for
// ever there on a worker that did not exist): the child forgets the
// parent's pool and makes its own at its first call.
std::atomic<Pool*> g_pool{nullptr};

extern "C" void forget_the_parents_pool() { g_pool.store(nullptr, std::memory_order_relaxed); }

class Pool {
 public:
  // Never destroyed: its threads sleep on a condition variable when idle, and
  // a process exits with them asleep (a forked child leaves its parent's).
  static Pool& instance() {
    Pool* pool = g_pool.load(std::memory_order_acquire);
    if (pool != nullptr) return *pool;
    static const int registered = pthread_atfork(nullptr, nullptr, forget_the_parents_pool);
    (void)registered;
    auto* fresh = new Pool;
    if (g_pool.compare_exchange_strong(pool, fresh, std::memory_order_acq_rel)) return *fresh;
    delete fresh;  // another thread's first call made one first; this one has no threads yet
    return *pool;
  }

  bool try_run(unsigned workers, const std::function<void(unsigned)>& fn, Shares shares) {
    if (t_inside_pool) return false;
    std::unique_lock call(call_mutex_, std::try_to_lock);
    if (!call.owns_lock()) return false;
    try {
      while (threads_.size() + 1 < workers) {
        const auto index = static_cast<unsigned>(threads_.size() + 1);
        threads_.emplace_back([this, index, seen = state_.load() >> kWorkerBits] { loop(index, seen); });
        // Oversubscribed: idle threads sleep at once and waiters yield.
        oversubscribed_.store(more_workers_than_cores(static_cast<unsigned>(threads_.size() + 1)));
      }
    } catch (const std::system_error& e) {  // the threads started wait for a later call
      throw_cannot_start(e, workers);
    }
    task_ = &fn;
    const bool independent = shares == Shares::kIndependent;
    std::uint64_t generation = 0;
    {
      std::lock_guard lock(sleep_mutex_);
      generation = (state_.load(std::memory_order_relaxed) >> kWorkerBits) + 1;
      if (independent) {
        finished_.store(0, std::memory_order_relaxed);
        claims_.store(generation << kWorkerBits | 1, std::memory_order_relaxed);  // share 0: this thread's
      } else {
        remaining_.store(workers - 1, std::memory_order_relaxed);
      }
      state_.store(generation << kWorkerBits | (independent ? kIndependentFlag : 0) | workers,
                   std::memory_order_release);
    }
    wake_.notify_all();
    t_inside_pool = true;
    fn(0);
    unsigned ran_here = 1;  // kIndependent: the shares this thread ran
    if (independent) {
      for (unsigned w = 0; (w = claim(generation, workers)) < workers; ++ran_here) fn(w);
    }
    t_inside_pool = false;
    if (independent) {
      while (finished_.load(std::memory_order_acquire) + ran_here != workers) wait_a_moment();
    } else {
      while (remaining_.load(std::memory_order_acquire) != 0) wait_a_moment();
    }
    task_ = nullptr;
    return true;
  }

  void delay_claims_until(std::int64_t steady_ticks) {
    claim_delay_until_.store(steady_ticks, std::memory_order_relaxed);
  }

 private:
  // A thread that sleeps through calls it has no part in may skip them: it
  // reads the generation and that call's worker count in one load, so it
  // never joins a call late or twice.
  void loop(unsigned index, std::uint64_t seen) {
    t_inside_pool = true;
    for (;;) {
      SpinWait wait(oversubscribed_.load());
      std::uint64_t state;
      while (((state = state_.load(std::memory_order_acquire)) >> kWorkerBits) == seen) {
        if (!wait.spin()) {
          std::unique_lock lock(sleep_mutex_);
          wake_.wait(lock, [&] { return (state_.load(std::memory_order_acquire) >> kWorkerBits) != seen; });
        }
      }
      seen = state >> kWorkerBits;
      const auto workers = static_cast<unsigned>(state & kWorkerMask);
      if ((state & kIndependentFlag) != 0) {
        wait_out_test_delay();
        // Shares from the call this thread saw, while any is left: task_ is
        // read only after a claim, while its caller waits for that share.
        for (unsigned w = 0; (w = claim(seen, workers)) < workers;) {
          (*task_)(w);
          finished_.fetch_add(1, std::memory_order_release);
        }
      } else if (index < workers) {
        (*task_)(index);
        remaining_.fetch_sub(1, std::memory_order_acq_rel);
      }
    }
  }

  // A share of call `generation` that no thread has taken, or `workers` where
  // none is left or that call is over (a thread that woke late then runs
  // nothing: the calling thread ran the shares).
  unsigned claim(std::uint64_t generation, unsigned workers) {
    std::uint64_t c = claims_.load(std::memory_order_relaxed);
    while ((c >> kWorkerBits) == generation && (c & kWorkerMask) < workers) {
      if (claims_.compare_exchange_weak(c, c + 1, std::memory_order_relaxed)) {
        return static_cast<unsigned>(c & kWorkerMask);
      }
    }
    return workers;
  }

  void wait_out_test_delay() const {
    while (claim_delay_until_.load(std::memory_order_relaxed) != 0 &&
           std::chrono::steady_clock::now().time_since_epoch().count() <
               claim_delay_until_.load(std::memory_order_relaxed)) {
      std::this_thread::yield();
    }
  }

  void wait_a_moment() const {
    if (oversubscribed_.load(std::memory_order_relaxed)) {
      std::this_thread::yield();
    } else {
      cpu_relax();
    }
  }

  std::mutex call_mutex_;  // one pooled call at a time
  std::atomic<bool> oversubscribed_{false};
  std::vector<std::thread> threads_;
  static constexpr unsigned kWorkerBits = 16;
  static constexpr std::uint64_t kIndependentFlag = std::uint64_t{1} << (kWorkerBits - 1);
  static constexpr std::uint64_t kWorkerMask = kIndependentFlag - 1;
  static_assert(kMaxThreads <= kWorkerMask, "a call's worker count must fit its bits of state_");
  // generation << kWorkerBits | kIndependentFlag (Shares::kIndependent) |
  // workers of that call (the caller included); the generation goes up by
  // one per call.
  std::atomic<std::uint64_t> state_{0};
  std::atomic<unsigned> remaining_{0};  // kConcurrent: pool workers still running the call
  // kIndependent: generation << kWorkerBits | the next share to take, and the
  // shares pool threads have finished.
  std::atomic<std::uint64_t> claims_{0};
  std::atomic<unsigned> finished_{0};
  // delay_pool_claims_for_testing: steady_clock ticks until which pool
  // threads wait before they claim a share of a kIndependent call (0: none).
  std::atomic<std::int64_t> claim_delay_until_{0};
  const std::function<void(unsigned)>* task_ = nullptr;
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
};

}  // namespace

unsigned hardware_threads() {
  static const unsigned n = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  return n;
}

bool more_workers_than_cores(unsigned workers) { return workers > hardware_threads(); }

SpinWait::SpinWait(bool oversubscribed)
    : spin_end_(std::chrono::steady_clock::now() + kSpin), spinning_(!oversubscribed) {}

bool SpinWait::spin() {
  if (!spinning_) return false;
  cpu_relax();
  if (++polls_ % 256 == 0 && std::chrono::steady_clock::now() > spin_end_) spinning_ = false;
  return true;
}

void run_workers(unsigned workers, const std::function<void(unsigned)>& fn, Shares shares) {
  if (workers <= 1) {
    fn(0);
    return;
  }
  if (Pool::instance().try_run(workers, fn, shares)) return;
  run_workers_on_new_threads(workers, fn, [](std::function<void()> body) { return std::jthread(std::move(body)); });
}

void run_workers_no_throw(unsigned workers, const std::function<void(unsigned)>& fn) noexcept {
  try {
    // A throw comes before any fn has run (try_run starts threads first).
    if (workers > 1 && Pool::instance().try_run(workers, fn, Shares::kIndependent)) return;
  } catch (...) {  // the calling thread runs them all below
  }
  for (unsigned w = 0; w < workers; ++w) fn(w);
}

void delay_pool_claims_for_testing(std::chrono::steady_clock::duration delay) {
  const auto until = delay.count() == 0 ? 0 : (std::chrono::steady_clock::now() + delay).time_since_epoch().count();
  Pool::instance().delay_claims_until(static_cast<std::int64_t>(until));
}

void run_workers_on_new_threads(unsigned workers, const std::function<void(unsigned)>& fn, const ThreadStarter& start) {
  enum Gate : int { kWait, kRun, kCancel };
  std::atomic<int> gate{kWait};
  std::vector<std::jthread> threads;  // joined when they go out of scope, also on a throw
  const auto open = [&](Gate how) {
    gate.store(how, std::memory_order_release);
    gate.notify_all();
  };
  try {
    threads.reserve(workers - 1);
    for (unsigned w = 1; w < workers; ++w) {
      threads.push_back(start([&gate, &fn, w] {
        gate.wait(kWait, std::memory_order_acquire);
        if (gate.load(std::memory_order_acquire) == kRun) fn(w);
      }));
    }
  } catch (const std::system_error& e) {
    open(kCancel);  // the threads started return without running fn
    throw_cannot_start(e, workers);
  } catch (...) {
    open(kCancel);
    throw;
  }
  open(kRun);
  fn(0);
}

void parallel_copy(void* dst, const void* src, std::size_t bytes, unsigned workers, std::size_t min_piece) noexcept {
  const std::size_t pieces = min_piece == 0 ? bytes : bytes / min_piece;
  workers = static_cast<unsigned>(std::min<std::size_t>(workers, pieces));
  if (workers <= 1) {
    if (bytes != 0) std::memcpy(dst, src, bytes);
    return;
  }
  struct Copy {
    std::uint8_t* dst;
    const std::uint8_t* src;
    std::size_t bytes, per;
    unsigned workers;
  };
  const Copy c{static_cast<std::uint8_t*>(dst), static_cast<const std::uint8_t*>(src), bytes,
               (bytes / workers + 63) / 64 * 64, workers};
  // One reference captured: the std::function holds it without allocating.
  run_workers_no_throw(workers, [&c](unsigned w) {
    const std::size_t lo = std::min(c.bytes, w * c.per);
    const std::size_t hi = w + 1 == c.workers ? c.bytes : std::min(c.bytes, lo + c.per);
    if (hi > lo) std::memcpy(c.dst + lo, c.src + lo, hi - lo);
  });
}

}  // namespace probkit::detail
