#include "copy_buffers.hpp"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>
#include <string>

#include <pthread.h>

#include "probkit/error.hpp"
#include "worker_pool.hpp"

namespace probkit::detail {
namespace {

// The private copies' buffers, kept from one call to the next. Freed after
// each call, as they were, a call's copies came back as fresh pages (glibc
// returned the top of its heap to the system), each faulted in again as its
// worker zeroed it: kept, those calls ran 6-9% faster on a 2-vCPU guest.
// Only the pages a copy has touched are resident: up to the largest filter
// copied, per buffer, and at most kept_copy_buffers_limit() buffers.
// (docs/PERF-NOTES.md, "Copy buffers: kept from one call to the next")
class Kept {
 public:
  static Kept& instance() {
    static Kept* kept = [] {
      // fork() copies the mutex as it is: taken then by another thread, it
      // would stay taken in the child for ever. Held by the forking thread
      // across the fork instead (it is only ever held for a moment).
      pthread_atfork([] { instance().mutex_.lock(); }, [] { instance().mutex_.unlock(); },
                     [] { instance().mutex_.unlock(); });
      return new Kept;  // never destroyed: worker threads may outlive main
    }();
    return *kept;
  }

  std::vector<std::uint8_t*> take(unsigned n) {
    std::vector<std::uint8_t*> out;
    out.reserve(n);  // so that no push_back throws with a buffer in hand
    {
      std::lock_guard lock(mutex_);
      // Room for every buffer it may keep: give_back never allocates (it
      // runs in destructors).
      if (buffers_.capacity() < kept_copy_buffers_limit()) {
        try {
          buffers_.reserve(kept_copy_buffers_limit());
        } catch (const std::bad_alloc&) {
          throw AllocationError("cannot allocate the list of private copy buffers");
        }
      }
      while (out.size() < n && !buffers_.empty()) {
        out.push_back(buffers_.back());
        buffers_.pop_back();
      }
    }
    while (out.size() < n) {
      auto* p = static_cast<std::uint8_t*>(std::aligned_alloc(64, kPrivateCopyMaxBytes));
      if (p == nullptr) {
        give_back(out);
        throw AllocationError("cannot allocate a " + std::to_string(kPrivateCopyMaxBytes) +
                              "-byte buffer for a private copy (of a filter or a sketch's registers)");
      }
      out.push_back(p);
    }
    return out;
  }

  void give_back(std::vector<std::uint8_t*>& buffers) noexcept {
    // Within the capacity, so that keeping one never allocates (none once
    // freed for tests, until a call takes some again).
    std::lock_guard lock(mutex_);
    const std::size_t keep = std::min<std::size_t>(kept_copy_buffers_limit(), buffers_.capacity());
    for (std::uint8_t* p : buffers) {
      if (buffers_.size() < keep) {
        buffers_.push_back(p);
      } else {
        std::free(p);
      }
    }
    buffers.clear();
  }

  void free_all() noexcept {
    std::lock_guard lock(mutex_);
    for (std::uint8_t* p : buffers_) std::free(p);
    std::vector<std::uint8_t*>().swap(buffers_);  // and the room: none kept until a call takes some again
  }

 private:
  std::mutex mutex_;
  std::vector<std::uint8_t*> buffers_;
};

}  // namespace

unsigned kept_copy_buffers_limit() { return std::max(1u, hardware_threads() - 1); }

std::vector<std::uint8_t*> take_copy_buffers(unsigned n) { return Kept::instance().take(n); }

void return_copy_buffers(std::vector<std::uint8_t*>& buffers) noexcept { Kept::instance().give_back(buffers); }

void free_kept_copy_buffers_for_testing() { Kept::instance().free_all(); }

PrivateCopies::PrivateCopies(std::size_t bytes, unsigned copies) : bytes_(bytes), made_(copies, 0) {
  if (copies == 0) return;
  if (bytes > kPrivateCopyMaxBytes) {
    throw Error("private copies of " + std::to_string(bytes) + " bytes exceed their buffers' " +
                std::to_string(kPrivateCopyMaxBytes));
  }
  const unsigned kept = std::min(copies, kept_copy_buffers_limit());
  // Before the kept buffers are taken: a failure here leaves them be.
  extras_.reserve(copies - kept);
  for (unsigned c = kept; c < copies; ++c) {
    extras_.emplace_back(
        static_cast<std::uint8_t*>(std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64))));
    if (extras_.back() == nullptr) {
      throw AllocationError("cannot allocate a private copy of " + std::to_string(bytes) + " bytes");
    }
  }
  kept_ = take_copy_buffers(kept);
}

PrivateCopies::~PrivateCopies() {
  if (!kept_.empty()) return_copy_buffers(kept_);  // one thread's add takes none, and no lock
}

void PrivateCopies::Free::operator()(std::uint8_t* p) const noexcept { std::free(p); }

}  // namespace probkit::detail
