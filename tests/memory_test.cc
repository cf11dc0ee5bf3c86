// What a structure holds (issue 4's memory row): a Bloom filter its bitset and
// O(1) more, an HLL at p = 14 its 16 KiB of registers, also after multi-
// threaded bulk calls (whose per-call buffers and per-worker copies must all
// be released, but for the buffers of the Bloom add's private copies, which
// the process keeps for its next add: src/copy_buffers.hpp). Measured as the growth of the C heap (glibc's mallinfo2:
// the main arena plus mmapped chunks, where the calling thread's allocations go).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "probkit/probkit.hpp"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace probkit {
namespace {

// Room for O(1) bookkeeping: the object's own small members, allocator headers.
constexpr std::size_t kSlack = 4096;
// Bitsets of 2 MiB or more are whole, 2 MiB-aligned transparent huge pages
// (src/storage.cc): up to 2 MiB of rounding, and the allocator's alignment
// slack (address space only, never touched) of up to 2 MiB more.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
std::size_t allowed(std::size_t bitset) {
  return bitset + kSlack + (bitset >= kHugePage ? 2 * kHugePage : 0);
}

#if defined(__GLIBC__)
std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}
#endif

class Memory : public ::testing::Test {
 protected:
  void SetUp() override {
#if !defined(__GLIBC__)
    GTEST_SKIP() << "needs glibc's mallinfo2 to read the heap";
#elif defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    // The sanitizers' own allocators serve malloc: glibc's arena stays empty.
    GTEST_SKIP() << "needs glibc's allocator (mallinfo2); a sanitizer build replaces it";
#else
    keys_.resize(1000000);
    std::iota(keys_.begin(), keys_.end(), std::uint64_t{1});
    hits_.resize(keys_.size());
    set_threads(0);  // every core: the multi-threaded paths allocate the most
    // First calls set up what lives for the whole process (worker threads,
    // dispatch tables, the private copies' buffers), so that only the
    // structures' own memory is measured.
    for (std::uint64_t capacity : {keys_.size(), 10 * keys_.size()}) {  // private copies; the exchange by block owner
      BloomFilter warm = BloomFilter::for_capacity(capacity, 0.01);
      warm.add(keys_);
      warm.contains(keys_, hits_);
    }
    HyperLogLog hll(14);
    hll.add(keys_);
#endif
  }
  void TearDown() override { set_threads(0); }

  std::vector<std::uint64_t> keys_;
  std::vector<std::uint8_t> hits_;
};

#if defined(__GLIBC__)
TEST_F(Memory, BloomFilterHoldsItsBitsetAndO1More) {
  for (std::uint64_t capacity :
       {std::uint64_t{1000}, std::uint64_t{1000000}, std::uint64_t{20000000}}) {
    const std::size_t before = heap_in_use();
    {
      BloomFilter f = BloomFilter::for_capacity(capacity, 0.01);
      const std::size_t bitset = f.data().size();
      EXPECT_LE(heap_in_use() - before, allowed(bitset)) << "capacity " << capacity;
      f.add(keys_);  // private copies (small filters) or the exchange by block owner (large ones)
      f.contains(keys_, hits_);
      EXPECT_EQ(f.count(keys_), keys_.size());
      EXPECT_LE(heap_in_use() - before, allowed(bitset))
          << "capacity " << capacity << " after bulk calls";
      EXPECT_GE(heap_in_use() - before, bitset) << "the bitset itself is counted";
    }
    EXPECT_LE(heap_in_use(), before + kSlack) << "capacity " << capacity << " after destruction";
  }
}

TEST_F(Memory, HyperLogLogHoldsItsRegisters) {
  const std::size_t before = heap_in_use();
  {
    HyperLogLog hll(14);
    EXPECT_EQ(hll.registers().size(), 16384u);
    hll.add(keys_);  // per-worker register copies, merged and released
    EXPECT_LE(heap_in_use() - before, 16384 + kSlack);
    EXPECT_GE(heap_in_use() - before, 16384u);
  }
  EXPECT_LE(heap_in_use(), before + kSlack);
}
#endif

}  // namespace
}  // namespace probkit
