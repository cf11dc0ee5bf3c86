// Internal: persistent worker threads for the CPU bulk driver.
#pragma once
#include <functional>

namespace probkit::detail {

// Runs fn(w) for every w in [0, workers): w = 0 on the calling thread, the
// others on persistent pool threads, all at the same time (fn may wait on a
// barrier). Returns when every call has returned. fn must not throw.
//
// Why persistent: on virtual machines a freshly started or sleeping thread
// can take a millisecond or more to get a core, as long as a whole bulk call
// of a million keys; pool threads spin briefly after each call so that the
// next call finds them awake. A second caller while the pool is busy (or a
// nested call) gets plain threads instead.
void run_workers(unsigned workers, const std::function<void(unsigned)>& fn);

}  // namespace probkit::detail
