#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <limits>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

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

template <class Filter>
concept TakesANullKey = requires(const Filter& f) { f.contains(nullptr); };
template <class Spec>
concept HashesANullKey = requires(Spec s) { probkit::hash(nullptr, s); };

// nullptr converted to std::string_view compiled, and crashed in strlen.
TEST(Smoke, NullKeyDoesNotCompile) {
  EXPECT_FALSE(TakesANullKey<probkit::BloomFilter>);
  EXPECT_FALSE(HashesANullKey<probkit::HashSpec>);
}

// A filter built from pre-hashed keys answers for one of them through
// contains_hash; contains(uint64_t) hashes the value as a key, and (without
// contains_hash) a loop of it read almost every stored hash as absent.
TEST(Smoke, SingleHashContainsMatchesThePrehashedBatch) {
  std::vector<std::uint64_t> hashes(1000);
  for (std::size_t i = 0; i < hashes.size(); ++i) hashes[i] = probkit::hash(std::uint64_t{i} * 7919);
  auto bf = probkit::BloomFilter::for_capacity(1000, 0.001);
  bf.add(probkit::Prehashed{hashes});
  std::uint64_t rehashed_hits = 0;
  for (std::uint64_t h : hashes) {
    ASSERT_TRUE(bf.contains_hash(h)) << h;
    rehashed_hits += bf.contains(h);
  }
  EXPECT_LT(rehashed_hits, 100u) << "contains(uint64_t) hashes its key";
  std::uint64_t absent_hits = 0;
  for (std::uint64_t i = 0; i < 10000; ++i) absent_hits += bf.contains_hash(probkit::hash(i * 7919 + 1));
  EXPECT_LT(absent_hits, 100u) << "hashes never added";
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

// Folding is exact (hyperloglog.hpp): the bits a fold moves from a register's
// index into its rank are the hash bits a sketch of the lower precision reads
// first, so a sketch folded from p_high to p equals the sketch of the same
// keys built at p, byte for byte. Merging sketches of different precisions
// folds the finer one down: either way round, the result is the sketch of the
// union at the lower precision. (A fold that ranked the index bits one low,
// or a merge that dropped its folded result when this sketch was the finer,
// passed every other test: the CLI's cross-precision count took the max with
// an exact sketch, which hid a fold that came out low.)
TEST(Smoke, FoldAndMergeAcrossPrecisionsGiveTheLowerPrecisionsSketch) {
  std::vector<std::uint64_t> keys(200000);
  std::iota(keys.begin(), keys.end(), 0);
  const std::span<const std::uint64_t> all(keys), first_half = all.first(keys.size() / 2),
                                                  last_three_quarters = all.last(keys.size() * 3 / 4);
  for (const auto& [high, low] : {std::pair{16u, 12u}, std::pair{14u, 4u}, std::pair{18u, 17u}}) {
    SCOPED_TRACE("p " + std::to_string(high) + " -> " + std::to_string(low));
    probkit::HyperLogLog fine(high), coarse(low), want(low);
    fine.add(first_half);
    coarse.add(last_three_quarters);
    want.add(all);
    probkit::HyperLogLog fine_of_all(high);
    fine_of_all.add(all);
    EXPECT_TRUE(fine_of_all.fold(low) == want) << "fold";

    probkit::HyperLogLog into_fine = fine;
    into_fine.merge(coarse);  // folds itself down
    EXPECT_EQ(into_fine.precision(), low);
    EXPECT_TRUE(into_fine == want) << "a coarser sketch merged into a finer one";
    probkit::HyperLogLog into_coarse = coarse;
    into_coarse.merge(fine);  // folds the other down
    EXPECT_TRUE(into_coarse == want) << "a finer sketch merged into a coarser one";
  }
}

// The small filters the two bitset tests below walk: one, two and five blocks
// of each layout (a last word, and a last block, to skip), at k = 6 for
// cacheline512 and parquet_sbbf's fixed k.
namespace {
struct SmallFilterShape {
  probkit::BloomLayout layout;
  std::uint64_t blocks;
  probkit::BloomFilter make() const {
    return probkit::BloomFilter(blocks, layout == probkit::BloomLayout::Cacheline512 ? 6 : 8, layout);
  }
  std::string name() const {
    return "layout " + std::to_string(static_cast<int>(layout)) + " nb " + std::to_string(blocks);
  }
};
std::vector<SmallFilterShape> small_filter_shapes() {
  std::vector<SmallFilterShape> shapes;
  for (const auto layout : {probkit::BloomLayout::Cacheline512, probkit::BloomLayout::ParquetSbbf}) {
    for (std::uint64_t blocks : {1u, 2u, 5u}) shapes.push_back({layout, blocks});
  }
  return shapes;
}
}  // namespace

// fill_ratio counts every bit of the bitset, the last word included: against
// a popcount of data(), for filters of one block up to a few, both layouts, as
// keys fill them to saturation (where estimated_count turns infinite). A
// count that skipped a word was 1/(8 nb) low, too little for the statistics
// of estimated_count (accuracy_test.cc) to see.
TEST(Smoke, FillRatioCountsEveryBitOfTheBitset) {
  for (const SmallFilterShape& shape : small_filter_shapes()) {
    SCOPED_TRACE(shape.name());
    probkit::BloomFilter f = shape.make();
    for (std::uint64_t n : {1u, 10u, 100u, 100000u}) {
      std::vector<std::uint64_t> keys(n);
      std::iota(keys.begin(), keys.end(), 1000 * n);
      f.add(keys);
      std::uint64_t ones = 0;
      for (std::uint8_t b : f.data()) ones += static_cast<std::uint64_t>(std::popcount(b));
      SCOPED_TRACE("after " + std::to_string(n) + " more keys");
      EXPECT_EQ(f.fill_ratio(), static_cast<double>(ones) / static_cast<double>(f.size_bits()));
      if (ones == f.size_bits()) {
        EXPECT_EQ(f.estimated_count(), std::numeric_limits<double>::infinity());
      }
    }
    EXPECT_EQ(f.fill_ratio(), 1.0) << "10^5 keys in at most five blocks set every bit";
  }
}

// union_with and intersect_with are the bitsets' OR and AND, every byte: against
// the bytes of data() combined here, for filters of one to five blocks of both
// layouts. (Intersecting all but the last word was caught only by the
// simulated CUDA test that compares host and device results.)
TEST(Smoke, UnionAndIntersectionAreTheBitsetsOrAndAnd) {
  for (const SmallFilterShape& shape : small_filter_shapes()) {
    SCOPED_TRACE(shape.name());
    probkit::BloomFilter a = shape.make(), b = shape.make();
    std::vector<std::uint64_t> keys(40 * shape.blocks);
    std::iota(keys.begin(), keys.end(), 0);
    a.add(std::span<const std::uint64_t>(keys).first(keys.size() / 2 + 3));
    b.add(std::span<const std::uint64_t>(keys).last(keys.size() / 2 + 3));
    std::vector<std::uint8_t> ored(a.data().begin(), a.data().end()), anded = ored;
    for (std::size_t i = 0; i < ored.size(); ++i) {
      ored[i] = static_cast<std::uint8_t>(ored[i] | b.data()[i]);
      anded[i] = static_cast<std::uint8_t>(anded[i] & b.data()[i]);
    }
    probkit::BloomFilter u = a, x = a;
    u.union_with(b);
    x.intersect_with(b);
    EXPECT_TRUE(std::equal(u.data().begin(), u.data().end(), ored.begin(), ored.end())) << "union";
    EXPECT_TRUE(std::equal(x.data().begin(), x.data().end(), anded.begin(), anded.end())) << "intersection";
  }
}
