// Internal: persistent worker threads for the CPU bulk driver (and the CUDA
// backend's staging copies).
#pragma once
#include <chrono>
#include <cstddef>
#include <functional>
#include <thread>

namespace probkit::detail {

// This machine's hardware threads (at least 1), read once: asking the system
// on every bulk call (std::thread::hardware_concurrency reads /sys) cost about
// 2.5 us, twenty times a one-key add, and as much at every wait for another
// worker.
unsigned hardware_threads();

// The most threads a bulk call may use (set_threads and PROBKIT_THREADS refuse
// more, hardware_threads reports no more): the pool packs a call's worker count
// into 16 bits, and keeps every thread it starts.
inline constexpr unsigned kMaxThreads = 4096;

// How the calls of a run_workers may be scheduled.
enum class Shares {
  // Each fn(w) on a thread of its own, all at the same time: fn may wait for
  // what another worker does.
  kConcurrent,
  // fn(w) waits for no other: a pool thread that has not woken by the time
  // the calling thread is done with its own runs none, and the calling thread
  // runs the rest itself. On the virtual machines we run on, a pool thread
  // asleep after a pause took about 5 ms to wake, where a call of 2^16 keys
  // takes 0.3 ms on one thread.
  kIndependent,
};

// Runs fn(w) for every w in [0, workers): w = 0 on the calling thread, the
// others on persistent pool threads (kIndependent: or on the calling thread,
// where the pool's are late). Returns when every call has returned. fn must
// not throw.
//
// Why persistent: on virtual machines a freshly started or sleeping thread
// can take a millisecond or more to get a core, as long as a whole bulk call
// of a million keys; pool threads spin briefly after each call so that the
// next call finds them awake. A second caller while the pool is busy (or a
// nested call) gets new threads instead (run_workers_on_new_threads).
//
// fn runs for every worker or for none: where a thread cannot be started,
// run_workers throws probkit::Error (for the std::system_error that starting
// it threw; anything else as it came), and no worker has run fn (a
// half-applied bulk call, or workers left waiting for one that never runs,
// would be worse).
void run_workers(unsigned workers, const std::function<void(unsigned)>& fn, Shares shares = Shares::kConcurrent);

// run_workers with Shares::kIndependent where it cannot fail: on the pool's
// threads if the pool is free now, else (busy with another caller's call,
// called from inside one, or short of a thread it cannot start) every fn(w)
// on the calling thread, which costs less than threads of its own for the
// short work it is meant for. Never throws (fn must not): for the last step
// of a call that has already changed its object, such as merging private
// copies into it, which must not stop half-way.
void run_workers_no_throw(unsigned workers, const std::function<void(unsigned)>& fn) noexcept;

// For tests: until `delay` from now, pool threads that wake for a
// Shares::kIndependent call wait before they claim a share, as a thread that
// wakes late does. A delay of zero ends it.
void delay_pool_claims_for_testing(std::chrono::steady_clock::duration delay);

// run_workers on workers - 1 threads of its own, each started by start(body)
// (std::jthread(body); tests pass one that throws): no thread runs fn until
// all have started, so where start throws none does.
using ThreadStarter = std::function<std::jthread(std::function<void()>)>;
void run_workers_on_new_threads(unsigned workers, const std::function<void(unsigned)>& fn, const ThreadStarter& start);

// memcpy(dst, src, bytes) split over up to `workers` threads of
// run_workers_no_throw, each piece at least min_piece bytes (and a whole
// number of cache lines but the last): below 2 * min_piece it is one memcpy
// on the calling thread. Never throws: the CUDA backend packs each chunk's
// keys with it after earlier chunks were applied, where a thread that could
// not start would have stopped the call half-way; the calling thread copies
// what no pool thread takes.
void parallel_copy(void* dst, const void* src, std::size_t bytes, unsigned workers, std::size_t min_piece) noexcept;

// More workers than cores: a waiting worker should give its core away at
// once (to the worker it waits for) instead of spinning.
bool more_workers_than_cores(unsigned workers);

// The spin half of a wait in a loop that polls for what another worker does:
// spin() relaxes the core once and returns true, for up to the pool's spin
// time (none when oversubscribed); then it returns false, and the caller waits
// its own way (sleeps on what it polls, or yields the core). Spinning first
// matters on virtual machines, where a sleeping thread can take a millisecond
// to get its core back.
class SpinWait {
 public:
  explicit SpinWait(bool oversubscribed);
  bool spin();

 private:
  std::chrono::steady_clock::time_point spin_end_;
  bool spinning_;
  unsigned polls_ = 0;
};

}  // namespace probkit::detail
