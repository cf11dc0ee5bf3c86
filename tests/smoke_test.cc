#include <gtest/gtest.h>
#include <xxhash.h>

#include <numeric>

#include "probkit/probkit.hpp"

TEST(Smoke, BloomAndHll) {
  std::vector<std::uint64_t> keys(100000);
  std::iota(keys.begin(), keys.end(), 0);
  auto bf = probkit::BloomFilter::for_capacity(keys.size(), 0.01);
  bf.add(std::span<const std::uint64_t>(keys));
  std::vector<std::uint8_t> hit(keys.size());
  bf.contains(std::span<const std::uint64_t>(keys), std::span<std::uint8_t>(hit));
  for (auto h : hit) ASSERT_EQ(h, 1);
  probkit::HyperLogLog hll(14);
  hll.add(std::span<const std::uint64_t>(keys));
  EXPECT_NEAR(hll.estimate(), 100000, 3000);
  std::uint64_t k = 12345;
  EXPECT_EQ(probkit::hash(k), XXH64(&k, 8, 0));
}
