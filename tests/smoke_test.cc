#include <gtest/gtest.h>
#include <xxhash.h>

#include <numeric>
#include <utility>

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

template <class Filter>
concept TakesAnIntKey = requires(const Filter& f) {
  f.contains(5);
};

// The single-key contains hashes a key as a batch of its type does: a uint32
// key widened to 64 bits (before there was a uint32 overload) hashed 8 bytes,
// and about 99% of the keys a uint32 column had added read as absent.
TEST(Smoke, SingleKeyContainsMatchesTheBatchItsKeyCameFrom) {
  std::vector<std::uint32_t> narrow(1000);
  std::iota(narrow.begin(), narrow.end(), 0u);
  std::vector<std::uint64_t> wide(1000);
  std::iota(wide.begin(), wide.end(), std::uint64_t{1} << 40);
  auto bf = probkit::BloomFilter::for_capacity(2000, 0.01);
  bf.add(narrow);
  bf.add(wide);
  for (std::uint32_t k : narrow) ASSERT_TRUE(bf.contains(k)) << "uint32 key " << k;
  for (std::uint64_t k : wide) ASSERT_TRUE(bf.contains(k)) << "uint64 key " << k;
  std::uint64_t widened_hits = 0;
  for (std::uint32_t k : narrow) widened_hits += bf.contains(std::uint64_t{k});
  EXPECT_LT(widened_hits, 100u) << "a uint32 key's 8-byte hash is another key";
  static_assert(!TakesAnIntKey<probkit::BloomFilter>, "an int key must say its width");
}

// Whether T initialises from {} where copy-list-initialisation asks for it
// (`T t = {};`, `return {};`, an aggregate's member): a pair of T is, only if
// T's default constructor is not explicit.
template <class T>
concept InitialisesFromEmptyBraces = requires(void (*take)(std::pair<T, int>)) { take({}); };

TEST(Smoke, DefaultSketchInitialisesFromEmptyBraces) {
  EXPECT_TRUE(InitialisesFromEmptyBraces<probkit::HyperLogLog>);
  const probkit::HyperLogLog h;
  EXPECT_EQ(h.precision(), 14u);
  EXPECT_EQ(h.hash().kind, probkit::HashKind::Xxh64);
  EXPECT_EQ(h.hash().seed, 0u);
}
