// The README's promise for threads: `const` calls may run on one object from
// any number of threads at once, and so may the static constructors. Each
// thread's answers must equal those of one thread, and under ThreadSanitizer
// (scripts/test-sanitize.sh --thread --quick runs this suite) no call may
// write shared state: std::lgamma's store to the global signgam in the
// sizing model was one such write, found this way.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <numeric>
#include <string_view>
#include <thread>
#include <vector>

#include "probkit/probkit.hpp"

namespace {

using probkit::BloomFilter;
using probkit::BloomLayout;
using probkit::HyperLogLog;

// What one thread answers; equal across threads, or a call raced.
struct Answers {
  std::uint64_t for_capacity_blocks[2] = {};
  std::uint32_t for_capacity_k = 0;
  double expected_fpr[3] = {};
  double fill_ratio = 0, estimated_count = 0;
  std::vector<std::uint8_t> filter_bytes;
  bool single_keys = false;
  double estimate = 0, redis_estimate = 0;
  std::vector<std::uint32_t> histogram;
  std::vector<std::uint8_t> sketch_bytes, redis_bytes;
  double folded_estimate = 0;

  bool operator==(const Answers&) const = default;
};

Answers ask(const BloomFilter& filter, const HyperLogLog& sketch, const HyperLogLog& redis) {
  Answers a;
  const BloomFilter sized = BloomFilter::for_capacity(200'000, 0.003);
  a.for_capacity_blocks[0] = sized.num_blocks();
  a.for_capacity_k = sized.k();
  a.for_capacity_blocks[1] = BloomFilter::for_capacity(50'000, 0.01, BloomLayout::ParquetSbbf).num_blocks();
  a.expected_fpr[0] = filter.expected_fpr(1'000);
  a.expected_fpr[1] = filter.expected_fpr(20'000);
  a.expected_fpr[2] = filter.expected_fpr(1'000'000);
  a.fill_ratio = filter.fill_ratio();
  a.estimated_count = filter.estimated_count();
  a.filter_bytes = filter.serialize();
  a.single_keys = filter.contains(std::uint64_t{7}) && filter.contains(std::uint64_t{20'006}) &&
                  !filter.contains(std::string_view("never added"));
  a.estimate = sketch.estimate();
  a.redis_estimate = redis.estimate();
  a.histogram = sketch.histogram();
  a.sketch_bytes = sketch.serialize();
  a.redis_bytes = redis.to_redis();
  a.folded_estimate = sketch.fold(10).estimate();
  return a;
}

TEST(SharedObjects, ConstCallsFromManyThreadsAnswerAsOne) {
  std::vector<std::uint64_t> keys(20'000);
  std::iota(keys.begin(), keys.end(), 7);
  BloomFilter filter(1024, 6);  // 64 KiB, a fifth of its bits set
  filter.add(keys);
  HyperLogLog sketch(14), redis = HyperLogLog::redis();
  sketch.add(keys);
  redis.add(keys);
  const Answers want = ask(filter, sketch, redis);
  ASSERT_TRUE(want.single_keys);
  ASSERT_GT(want.expected_fpr[1], 0.0);

  constexpr int kThreads = 4, kRounds = 20;
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < kRounds; ++r) {
        if (!(ask(filter, sketch, redis) == want)) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
