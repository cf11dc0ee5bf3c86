// Internal: private copies of an object's bytes (a Bloom filter in the
// cache, an HLL sketch's registers) for the workers of a multi-threaded add,
// in memory kept from one such add to the next.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "worker_pool.hpp"

namespace probkit::detail {

// A multi-threaded add gives each extra worker a private copy of filters up
// to this size (about a core's L2) and of any HLL sketch's registers (256 KiB
// at most); every buffer holds that much, so any copy fits in any buffer.
inline constexpr std::size_t kPrivateCopyMaxBytes = std::size_t{2} << 20;

// n buffers of kPrivateCopyMaxBytes, 64-byte aligned, their contents
// anything: kept ones first, the rest allocated. All or none: where one
// cannot be allocated it throws AllocationError, having kept the others.
std::vector<std::uint8_t*> take_copy_buffers(unsigned n);

// Hands buffers back (and clears the vector): kept for the next call, up to
// kept_copy_buffers_limit() of them, the rest (from calls at the same time,
// or with more threads than cores) freed.
void return_copy_buffers(std::vector<std::uint8_t*>& buffers) noexcept;

// The most buffers kept: what one call on every core takes (at least one).
unsigned kept_copy_buffers_limit();

// For tests: frees every kept buffer, so that the next call allocates.
void free_kept_copy_buffers_for_testing();

// Private copies of `bytes` bytes of an object (at most kPrivateCopyMaxBytes
// where there are copies) for the workers after the first of a
// multi-threaded add, so that no two workers write one line: worker 0 updates
// the object, each other worker its copy, merged into the object at the end
// (no atomics). The buffers are taken on the calling thread (an
// AllocationError, if memory is short, comes before anything changed) and
// handed back when the call is done. The thread that runs a worker's pieces
// (for_each_worker_share) makes its copy at its first chunk, so that the
// copy's lines start in that thread's cache and the copies are made in
// parallel, and a worker that gets no keys (a pool thread that woke late)
// makes none.
//
// Copies past kept_copy_buffers_limit() (more workers than cores) get
// allocations of their own, sized to them and freed after the call: buffers
// of kPrivateCopyMaxBytes allocated and freed each call were slower (HLL
// add, 16 threads on a 2-vCPU guest: 598 -> 574 us a call), and one block
// for all of them ran twice as slow.
// (docs/PERF-NOTES.md, "Private copies past the kept buffers")
class PrivateCopies {
 public:
  PrivateCopies(std::size_t bytes, unsigned copies);
  ~PrivateCopies();
  PrivateCopies(const PrivateCopies&) = delete;
  PrivateCopies& operator=(const PrivateCopies&) = delete;

  // Worker w's copy (w in [1, copies]), made by make(copy) at its first call:
  // each worker touches only its own slot. nullptr for worker 0 and workers
  // without a copy.
  template <class Make>
  std::uint8_t* of(unsigned w, Make&& make) {
    if (w == 0 || w > made_.size()) return nullptr;
    std::uint8_t* copy = copy_of(w - 1);
    if (!made_[w - 1]) {
      make(copy);
      made_[w - 1] = 1;
    }
    return copy;
  }

  // merge(lo, hi, copy) for every copy made, for each range [lo, hi) of the
  // bytes: the bytes split into one range per worker, or per core where the
  // workers are more (whole 64-byte lines, each range written by one
  // thread), run on the pool's threads where it is free, else on the calling
  // thread (run_workers_no_throw). merge must not throw; nor does this: it
  // ends an add that has changed its object. On one thread the merge was a
  // serial tail of (workers - 1) * bytes read per call, which grows with the
  // workers while their shares of the keys shrink.
  template <class Merge>
  void merge(const Merge& merge) const noexcept {
    if (made_.empty()) return;
    const auto one_range = [this, &merge](unsigned w) {
      const std::size_t lines = (bytes_ + kLine - 1) / kLine;
      const std::size_t lo = lines * w / ranges() * kLine;
      const std::size_t hi = std::min(bytes_, lines * (w + 1) / ranges() * kLine);
      for (std::size_t c = 0; c < made_.size(); ++c) {
        // An unmade copy's worker had no keys.
        if (made_[c] && lo < hi) merge(lo, hi, static_cast<const std::uint8_t*>(copy_of(c)));
      }
    };
    // Two pointers: std::function keeps them in place (libstdc++: up to 16
    // bytes), so handing it over allocates nothing that could throw here.
    static_assert(sizeof(one_range) <= 2 * sizeof(void*));
    run_workers_no_throw(ranges(), one_range);
  }

 private:
  static constexpr std::size_t kLine = 64;
  unsigned ranges() const { return static_cast<unsigned>(std::min<std::size_t>(made_.size() + 1, hardware_threads())); }
  std::uint8_t* copy_of(std::size_t c) const { return c < kept_.size() ? kept_[c] : extras_[c - kept_.size()].get(); }
  struct Free {
    void operator()(std::uint8_t* p) const noexcept;
  };
  std::size_t bytes_;
  std::vector<std::uint8_t*> kept_;  // copies 0..: kept buffers of kPrivateCopyMaxBytes, handed back
  std::vector<std::unique_ptr<std::uint8_t, Free>> extras_;  // the copies past those, freed with this
  std::vector<std::uint8_t> made_;  // one byte per copy, written by the thread running its pieces only
};

}  // namespace probkit::detail
