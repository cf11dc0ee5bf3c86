// An operation that cannot allocate throws probkit::AllocationError (an
// Error) and leaves its object as it was (include/probkit/error.hpp): copy
// assignment, bulk adds whose threads work on private copies, reading and
// writing serialized filters. The failures are injected by this program's
// aligned_alloc and operator new, which refuse every request of at least
// g_refuse_from bytes while that is non-zero. A worker thread that cannot
// start (its pthread_create refused here too) is a probkit::Error as well.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <numeric>
#include <span>
#include <string>
#include <vector>

#include "copy_buffers.hpp"  // free_kept_copy_buffers_for_testing
#include "worker_pool.hpp"   // parallel_copy
#include "probkit/probkit.hpp"

namespace {
std::atomic<std::size_t> g_refuse_from{0};

// Refuses allocations of at least `bytes` for its lifetime.
class RefuseAllocations {
 public:
  explicit RefuseAllocations(std::size_t bytes) { g_refuse_from.store(bytes); }
  ~RefuseAllocations() { g_refuse_from.store(0); }
};

std::atomic<bool> g_refuse_threads{false};

// Refuses to start threads for its lifetime, as a process out of threads or
// of memory for their stacks does (EAGAIN).
class RefuseThreads {
 public:
  RefuseThreads() { g_refuse_threads.store(true); }
  ~RefuseThreads() { g_refuse_threads.store(false); }
};
}  // namespace

bool refused(std::size_t size) {
  const std::size_t refuse_from = g_refuse_from.load();
  return refuse_from != 0 && size >= refuse_from;
}

extern "C" void* aligned_alloc(std::size_t alignment, std::size_t size) {
  if (refused(size)) return nullptr;
  void* p = nullptr;
  return posix_memalign(&p, alignment, size) == 0 ? p : nullptr;
}

// Replaces the global operator new (std::vector's memory); the other forms
// call this one.
void* operator new(std::size_t size) {
  void* p = refused(size) ? nullptr : std::malloc(size == 0 ? 1 : size);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

// std::thread starts its threads here; the next definition (the C library's,
// or a sanitizer's in front of it) does the work.
extern "C" int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*body)(void*), void* arg) {
  using Create = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
  static const auto next = reinterpret_cast<Create>(dlsym(RTLD_NEXT, "pthread_create"));
  if (g_refuse_threads.load()) return EAGAIN;
  return next(thread, attr, body, arg);
}

namespace probkit {
namespace {

std::vector<std::uint64_t> iota_keys(std::size_t n, std::uint64_t first) {
  std::vector<std::uint64_t> keys(n);
  std::iota(keys.begin(), keys.end(), first);
  return keys;
}

// The injection works: without it these tests would pass without a failure.
TEST(AllocationFailure, IsInjected) {
  const BloomFilter big(4096, 6);  // 256 KiB
  RefuseAllocations refuse(128 << 10);
  EXPECT_THROW(BloomFilter copy(big), AllocationError);
  EXPECT_THROW(BloomFilter(8192, 6), AllocationError);
  EXPECT_THROW(HyperLogLog(18), AllocationError);  // 256 KiB of registers
}

// A well-formed stream whose filter cannot be allocated is an AllocationError
// (its header may be honest: the command line says so rather than calling the
// bytes invalid), raised before any of the bitset is read.
TEST(AllocationFailure, StreamedFilterTooLargeToAllocate) {
  BloomFilter big(4096, 6);
  big.add(iota_keys(1000, 100));
  const std::vector<std::uint8_t> bytes = big.serialize();
  std::size_t served = 0;
  const BloomFilter::ByteSource source = [&](std::span<std::uint8_t> out) {
    const std::size_t n = std::min(out.size(), bytes.size() - served);
    std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(served), n, out.begin());
    served += n;
    return n;
  };
  {
    RefuseAllocations refuse(128 << 10);
    try {
      (void)BloomFilter::deserialize_from(source);
      ADD_FAILURE() << "a 256 KiB filter was allocated";
    } catch (const AllocationError& e) {
      EXPECT_NE(std::string(e.what()).find("num_blocks = 4096 needs 262144 bytes, more than can be allocated"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_EQ(served, 32u);  // the header only
  served = 0;
  EXPECT_EQ(BloomFilter::deserialize_from(source), big);
}

// serialize() holds the whole filter's bytes: no memory for them is an
// AllocationError too (it was std::bad_alloc), the filter unchanged.
TEST(AllocationFailure, SerializeWithoutMemory) {
  BloomFilter big(4096, 6);
  big.add(iota_keys(1000, 100));
  const BloomFilter before = big;
  {
    RefuseAllocations refuse(128 << 10);
    EXPECT_THROW((void)big.serialize(), AllocationError);
  }
  EXPECT_EQ(big, before);
  EXPECT_EQ(BloomFilter::deserialize(big.serialize()), before);
}

// Assignment copies first: the shape fields must not change before the bytes
// are in hand (with `= default` a failed copy left a 64-byte filter claiming
// 4096 blocks, and the next add wrote past its end). `small` takes keys into
// its own bytes afterwards and still serializes to itself.
template <class T>
void check_failed_copy_assignment(T small, const T& big, std::size_t refuse_from) {
  const T before = small;
  {
    RefuseAllocations refuse(refuse_from);
    EXPECT_THROW(small = big, Error);
  }
  EXPECT_EQ(small, before);
  small.add(iota_keys(1000, 5000));
  EXPECT_EQ(T::deserialize(small.serialize()), small);
  small = big;  // with memory to spare, the copy is made
  EXPECT_EQ(small, big);
}

TEST(AllocationFailure, CopyAssignmentLeavesTheTargetAsItWas) {
  BloomFilter small(1, 6);
  small.add(iota_keys(10, 1));
  BloomFilter big(4096, 6);
  big.add(iota_keys(1000, 100));
  check_failed_copy_assignment(small, big, 128 << 10);

  HyperLogLog h4(4);
  h4.add(iota_keys(100, 1));
  HyperLogLog h16(16);
  h16.add(iota_keys(100000, 1));
  check_failed_copy_assignment(h4, h16, 32 << 10);
}

// A filter and a sketch holding 100 keys: what the failing calls below must
// leave as they are.
struct Warm {
  BloomFilter filter{4096, 6};
  HyperLogLog sketch{14};
  Warm() {
    filter.add(iota_keys(100, 1 << 20));
    sketch.add(iota_keys(100, 1 << 20));
  }
};

// Two threads on a filter of at most 2 MiB: the second works on a private copy
// allocated before any key is inserted (earlier calls' copy buffers dropped
// first, so that it is allocated). No copy, no change.
TEST(AllocationFailure, MultiThreadedAddsChangeNothing) {
  detail::free_kept_copy_buffers_for_testing();
  set_threads(2);
  const std::vector<std::uint64_t> keys = iota_keys(1 << 17, 1);
  Warm warm;
  BloomFilter& f = warm.filter;
  HyperLogLog& h = warm.sketch;
  const BloomFilter f_before = f;
  const HyperLogLog h_before = h;
  {
    RefuseAllocations refuse(16 << 10);
    EXPECT_THROW(f.add(keys), AllocationError);
    EXPECT_THROW(h.add(keys), AllocationError);
  }
  EXPECT_EQ(f, f_before);
  EXPECT_EQ(h, h_before);
  f.add(keys);
  h.add(keys);
  set_threads(1);
  BloomFilter f1 = f_before;
  HyperLogLog h1 = h_before;
  f1.add(keys);
  h1.add(keys);
  EXPECT_EQ(f, f1);
  EXPECT_EQ(h, h1);
  set_threads(0);
}

// A bulk call whose worker threads cannot start throws probkit::Error (not
// the std::system_error std::thread throws) before any key is inserted.
TEST(AllocationFailure, ThreadsThatCannotStart) {
  set_threads(4);
  const std::vector<std::uint64_t> keys = iota_keys(4 << 15, 1);  // enough for four workers
  Warm warm;
  BloomFilter& f = warm.filter;
  HyperLogLog& h = warm.sketch;
  const BloomFilter f_before = f;
  const HyperLogLog h_before = h;
  const auto expect_cannot_start = [](auto&& call) {
    try {
      call();
      ADD_FAILURE() << "no throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("cannot start the threads of a 4-worker call"), std::string::npos)
          << e.what();
    }
  };
  {
    RefuseThreads refuse;
    expect_cannot_start([&] { f.add(keys); });
    expect_cannot_start([&] { h.add(keys); });
    expect_cannot_start([&] { (void)f.count(keys); });
  }
  EXPECT_EQ(f, f_before);
  EXPECT_EQ(h, h_before);
  f.add(keys);
  h.add(keys);
  EXPECT_EQ(f.count(keys), keys.size());
  set_threads(0);
}

// The CUDA backend packs each chunk's host keys with parallel_copy after
// earlier chunks were applied: where its threads cannot start, the calling
// thread copies every byte, and nothing throws (it used to throw the Error
// above with the filter half-updated).
TEST(AllocationFailure, ParallelCopyWithoutThreads) {
  std::vector<std::uint8_t> src(8 << 20), dst(src.size(), 0);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 2654435761u >> 24);
  {
    RefuseThreads refuse;
    detail::parallel_copy(dst.data(), src.data(), src.size(), 8, 1 << 20);
  }
  EXPECT_TRUE(dst == src);
}

}  // namespace
}  // namespace probkit
