// Bad parameters, bad key batches and bad bytes (DESIGN.md §5, STYLE.md):
// each throws probkit::Error whose message names the problem, never crashes,
// and leaves the object it was applied to unchanged.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "bulk.hpp"
#include "probkit/detail/storage.hpp"
#include "probkit/probkit.hpp"

namespace probkit {
namespace {

// fn() must throw probkit::Error whose message contains every word.
template <class Fn>
void expect_error(Fn&& fn, std::initializer_list<std::string> words) {
  try {
    fn();
    ADD_FAILURE() << "no probkit::Error thrown (expected one mentioning " << *words.begin() << ")";
  } catch (const Error& e) {
    const std::string msg = e.what();
    for (const std::string& w : words) EXPECT_NE(msg.find(w), std::string::npos) << "'" << w << "' not in: " << msg;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-probkit exception: " << e.what();
  }
}

// --- Parameters

TEST(BadInput, BloomProbesOutOfRange) {
  for (std::uint32_t k : {0u, 17u, 255u, 1000u}) {
    expect_error([&] { BloomFilter(8, k); }, {"k = ", "[1, 16]"});
    expect_error([&] { BloomFilter::for_bytes(4096, k); }, {"k = "});
  }
  for (std::uint32_t k : {0u, 1u, 7u, 9u, 16u}) {
    expect_error([&] { BloomFilter(8, k, BloomLayout::ParquetSbbf); }, {"k = ", "parquet_sbbf"});
  }
  expect_error([&] { BloomFilter(8, 8, static_cast<BloomLayout>(3)); }, {"layout"});
  // for_bytes names the bad layout itself, whatever the size: not a size error (the block size of a layout it
  // does not know is no size at all), nor the constructor's name.
  for (std::size_t bytes : {std::size_t{1}, std::size_t{4096}, SIZE_MAX}) {
    expect_error([&] { BloomFilter::for_bytes(bytes, 8, static_cast<BloomLayout>(3)); },
                 {"for_bytes: unknown layout 3"});
  }
  expect_error([&] { BloomFilter(8, 8, BloomLayout::Cacheline512, HashSpec{static_cast<HashKind>(9), 0}); },
               {"hash kind"});
}

// A Backend cast from a bad integer is named as one ("unresolvable backend"
// before), and changes nothing.
TEST(BadInput, UnknownBackendValue) {
  const std::vector<std::uint64_t> keys{1, 2, 3};
  BloomFilter f(8, 6);
  HyperLogLog h(10);
  for (int bad : {4, 9, 255}) {
    const auto b = static_cast<Backend>(bad);
    const std::string named = "unknown backend " + std::to_string(bad) + " (valid: auto, scalar, simd, cuda)";
    expect_error([&] { f.add(keys, b); }, {named});
    expect_error([&] { (void)f.count(keys, b); }, {named});
    expect_error([&] { h.add(keys, b); }, {named});
  }
  EXPECT_TRUE(f == BloomFilter(8, 6));
  EXPECT_TRUE(h == HyperLogLog(10));
}

// Every enum a call takes is checked: a KeyMemory cast from a bad integer was
// taken, and the batch read as if it said Detect.
TEST(BadInput, UnknownKeyMemory) {
  const std::vector<std::uint64_t> u64{1, 2};
  const std::vector<std::uint32_t> u32{1, 2};
  const std::vector<std::int32_t> off32{0, 1, 2};
  const std::vector<std::int64_t> off64{0, 1, 2};
  const std::vector<std::uint8_t> bytes{'a', 'b'};
  for (int bad : {3, 9, 255}) {
    const auto where = static_cast<KeyMemory>(bad);
    const std::string named = "unknown KeyMemory " + std::to_string(bad);
    expect_error([&] { Keys k(std::span<const std::uint64_t>(u64), where); }, {"uint64 batch", named});
    expect_error([&] { Keys k(std::span<const std::uint32_t>(u32), where); }, {"uint32 batch", named});
    expect_error([&] { Keys k(Prehashed{u64}, where); }, {"pre-hashed batch", named});
    expect_error([&] { Keys k(StringBatch<std::int32_t>{off32, bytes}, where); }, {"int32 offsets", named});
    expect_error([&] { Keys k(StringBatch<std::int64_t>{off64, bytes}, where); }, {"int64 offsets", named});
  }
}

TEST(BadInput, HllPrecisionOutOfRange) {
  for (std::uint32_t p : {0u, 3u, 19u, 64u}) {
    expect_error([&] { HyperLogLog h(p); }, {"p = ", "[4, 18]"});
  }
  expect_error([] { HyperLogLog h(14, HashSpec{static_cast<HashKind>(0), 0}); }, {"hash kind"});
  const HyperLogLog h(10);
  expect_error([&] { (void)h.fold(11); }, {"fold", "11"});
  expect_error([&] { (void)h.fold(3); }, {"fold", "3"});
  const std::vector<std::uint32_t> short_histogram(10, 0);
  expect_error([&] { (void)hll_estimate_from_histogram(short_histogram, 14); }, {"histogram"});
}

// A histogram must count exactly the 2^p registers. One register too many in
// the top rank drove tau() to sqrt of a negative number and a loop that never
// ended; all zeros gave infinity; a null pointer was read.
TEST(BadInput, HllHistogramThatIsNoSketch) {
  constexpr std::uint32_t p = 14, m = 1u << p;
  std::vector<std::uint32_t> c(66 - p, 0);
  c[0] = m;
  EXPECT_EQ(hll_estimate_from_histogram(c, p), 0.0);  // a valid one: the empty sketch
  c[0] = 0;
  expect_error([&] { (void)hll_estimate_from_histogram(c, p); }, {"histogram", "0 registers", "16384"});
  c[65 - p] = m + 1;
  expect_error([&] { (void)hll_estimate_from_histogram(c, p); }, {"16385 registers"});
  c[65 - p] = m - 1;
  expect_error([&] { (void)hll_estimate_from_histogram(c, p); }, {"16383 registers"});
  std::fill(c.begin(), c.end(), 0);
  c[0] = std::numeric_limits<std::uint32_t>::max();  // a 32-bit sum would wrap to m
  c[1] = m + 1;
  expect_error([&] { (void)hll_estimate_from_histogram(c, p); }, {"registers"});
  expect_error(
      [&] {
        (void)hll_estimate_from_histogram(
            std::span<const std::uint32_t>(static_cast<const std::uint32_t*>(nullptr), 66 - p), p);
      },
      {"null"});
}

// The false-positive model takes any n: past about 20000 keys per block every
// term is 1, so the sum ends there (it used to step i += 1 up to n / num_blocks,
// which at 2^53 and above never moved i).
TEST(BadInput, BloomModelOfHugeLoads) {
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    const std::uint32_t k = layout == BloomLayout::Cacheline512 ? 6 : 8;
    for (std::uint64_t n : {std::uint64_t{1} << 40, std::uint64_t{1} << 53, std::uint64_t{1} << 60,
                            std::numeric_limits<std::uint64_t>::max()}) {
      SCOPED_TRACE(n);
      EXPECT_EQ(bloom_model_fpr(layout, 1, k, n), 1.0);
      EXPECT_EQ(BloomFilter(1, k, layout).expected_fpr(n), 1.0);
    }
  }
  // Loads just short of saturation still sum every term.
  EXPECT_LT(bloom_model_fpr(BloomLayout::Cacheline512, 1, 1, 2000), 1.0);
  EXPECT_GT(bloom_model_fpr(BloomLayout::Cacheline512, 1, 1, 2000), 0.97);  // 0.9798
  expect_error([] { (void)bloom_model_fpr(BloomLayout::Cacheline512, 1, 0, 10); }, {"bloom_model_fpr", "k = 0"});
  expect_error([] { (void)bloom_model_fpr(BloomLayout::Cacheline512, 1, 17, 10); }, {"k = 17"});
  expect_error([] { (void)bloom_model_fpr(BloomLayout::ParquetSbbf, 1, 6, 10); }, {"parquet_sbbf"});
  expect_error([] { (void)bloom_model_fpr(static_cast<BloomLayout>(3), 1, 6, 10); }, {"layout"});
}

TEST(BadInput, FprOutsideZeroOne) {
  for (double fpr : {0.0, 1.0, -0.01, 1.5, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(fpr);
    expect_error([&] { BloomFilter::for_capacity(1000, fpr); }, {"fpr", "(0, 1)"});
    expect_error([&] { BloomFilter::for_capacity(1000, fpr, BloomLayout::ParquetSbbf); }, {"fpr"});
  }
}

TEST(BadInput, CapacityAndBlockCounts) {
  expect_error([] { BloomFilter::for_capacity(0, 0.01); }, {"capacity", "0"});
  expect_error([] { BloomFilter(0, 6); }, {"num_blocks = 0", "[1, 2^32-1]"});
  expect_error([] { BloomFilter(0, 8, BloomLayout::ParquetSbbf); }, {"num_blocks = 0"});
  expect_error([] { BloomFilter(std::uint64_t{1} << 32, 6); }, {"num_blocks = 4294967296", "2^32-1"});
  expect_error([] { BloomFilter(~std::uint64_t{0}, 6); }, {"num_blocks"});
  expect_error([] { BloomFilter::for_bytes(63, 6); }, {"63 bytes", "64-byte block"});
  expect_error([] { BloomFilter::for_bytes(31, 8, BloomLayout::ParquetSbbf); }, {"32-byte block"});
  // Too many bytes: the message names the bytes asked for and the largest
  // filter, not a block count the caller never gave.
  expect_error([] { BloomFilter::for_bytes(SIZE_MAX, 6); },
               {std::to_string(SIZE_MAX) + " bytes", "274877906880 bytes"});
  expect_error([] { BloomFilter::for_bytes(std::size_t{137438953440} + 32, 8, BloomLayout::ParquetSbbf); },
               {"137438953472 bytes", "137438953440 bytes"});
  expect_error([] { BloomFilter::for_capacity(std::uint64_t{1} << 50, 1e-9); }, {"fpr 1e-09", "2^32-1 blocks"});
  expect_error([] { BloomFilter::for_capacity(1000, 1e-300); }, {"fpr 1e-300", "2^32-1 blocks"});  // not 0.000000
  expect_error([] { (void)bloom_model_fpr(BloomLayout::Cacheline512, 0, 6, 10); }, {"num_blocks"});
}

// A size that rounding up to the allocation's alignment would wrap (on a
// 32-bit target, a filter's num_blocks * block bytes past 4 GiB) is an
// AllocationError, not a small buffer that claims the whole size.
TEST(BadInput, BufferSizesPastWhatThePlatformAddresses) {
  const std::uint64_t top = std::numeric_limits<std::size_t>::max();
  for (const std::uint64_t bytes : {top, top - 100, top - (std::uint64_t{2} << 20) + 2}) {
    EXPECT_THROW(detail::Storage(bytes, detail::Storage::Uninitialized{}), AllocationError) << bytes;
    EXPECT_THROW(detail::Storage{bytes}, AllocationError) << bytes;
  }
  expect_error([&] { detail::Storage(top - 100, detail::Storage::Uninitialized{}); },
               {std::to_string(top - 100), "more than this platform can address"});
}

// A moved-from filter or sketch holds no memory: each operation on it but
// assignment throws, whichever side it is on, and changes nothing on the
// other side (add and contains read through its null bitset; serialize wrote
// a header that its own reader refused; == was true one way round and read
// the null bitset the other).
TEST(BadInput, MovedFromObjects) {
  const std::vector<std::uint64_t> keys{1, 2, 3};
  std::vector<std::uint8_t> out(keys.size());
  BloomFilter f(10, 6);
  f.add(keys);
  const BloomFilter kept = f;
  BloomFilter g = std::move(f);
  expect_error([&] { f.add(keys); }, {"add: the filter was moved from"});
  expect_error([&] { f.contains(keys, out); }, {"contains: the filter was moved from"});
  expect_error([&] { (void)f.count(keys); }, {"count: the filter was moved from"});
  expect_error([&] { (void)f.contains(std::uint64_t{1}); }, {"contains: the filter was moved from"});
  expect_error([&] { (void)f.contains(std::uint32_t{1}); }, {"contains: the filter was moved from"});
  expect_error([&] { (void)f.contains("a"); }, {"contains: the filter was moved from"});
  expect_error([&] { (void)f.expected_fpr(1000); }, {"expected_fpr: the filter was moved from"});
  expect_error([&] { (void)f.contains_hash(1); }, {"contains_hash: the filter was moved from"});
  expect_error([&] { g.union_with(f); }, {"union_with: the other filter was moved from, and may only be assigned"});
  expect_error([&] { f.intersect_with(g); }, {"intersect_with: the filter was moved from"});
  expect_error([&] { f.clear(); }, {"clear: the filter was moved from"});
  expect_error([&] { (void)f.fill_ratio(); }, {"fill_ratio: the filter was moved from"});
  expect_error([&] { (void)f.estimated_count(); }, {"the filter was moved from"});
  expect_error([&] { (void)f.serialize(); }, {"serialize: the filter was moved from"});
  expect_error([&] { f.to_device(0); }, {"to_device: the filter was moved from"});
  expect_error([&] { f.to_host(); }, {"to_host: the filter was moved from"});
  EXPECT_FALSE(f == g);
  EXPECT_FALSE(g == f);
  EXPECT_TRUE(g == kept);  // the calls that named f left g as it was
  BloomFilter taken = std::move(g);
  EXPECT_TRUE(f == g);  // two moved-from filters of one shape
  f = kept;             // assignment brings a moved-from filter back
  f.add(keys);
  EXPECT_TRUE(f == kept);

  HyperLogLog h = HyperLogLog::redis();
  h.add(keys);
  const HyperLogLog kept_h = h;
  HyperLogLog i = std::move(h);
  expect_error([&] { h.add(keys); }, {"add: the sketch was moved from"});
  expect_error([&] { (void)h.estimate(); }, {"estimate: the sketch was moved from"});
  expect_error([&] { (void)h.histogram(); }, {"histogram: the sketch was moved from"});
  expect_error([&] { (void)h.fold(4); }, {"fold: the sketch was moved from"});
  expect_error([&] { i.merge(h); }, {"merge: the other sketch was moved from"});
  expect_error([&] { h.merge(i); }, {"merge: the sketch was moved from"});
  expect_error([&] { h.clear(); }, {"clear: the sketch was moved from"});
  expect_error([&] { (void)h.serialize(); }, {"serialize: the sketch was moved from"});
  expect_error([&] { (void)h.to_redis(); }, {"to_redis: the sketch was moved from"});
  expect_error([&] { h.to_device(0); }, {"to_device: the sketch was moved from"});
  expect_error([&] { h.to_host(); }, {"to_host: the sketch was moved from"});
  EXPECT_FALSE(h == i);
  EXPECT_FALSE(i == h);
  EXPECT_TRUE(i == kept_h);
  h = kept_h;
  h.add(keys);
  EXPECT_TRUE(h == kept_h);
}

// --- Combining objects of different shapes or hashes

TEST(BadInput, UnionAndIntersectionOfDifferentFilters) {
  const std::vector<std::uint64_t> keys{1, 2, 3, 4, 5};
  BloomFilter a(16, 6);
  a.add(keys);
  const BloomFilter before = a;
  std::vector<BloomFilter> others;
  others.emplace_back(17, 6);
  others.emplace_back(16, 7);
  others.emplace_back(32, 8, BloomLayout::ParquetSbbf);  // same bytes, other layout
  others.emplace_back(16, 6, BloomLayout::Cacheline512, HashSpec{HashKind::Xxh64, 1});
  others.emplace_back(16, 6, BloomLayout::Cacheline512, HashSpec{HashKind::Murmur64A, 0});
  // Bits of their own, so that a union ORed in before the check fails would show in a.
  for (BloomFilter& o : others) o.add(std::vector<std::uint64_t>{100, 200, 300, 400});
  for (const BloomFilter& o : others) {
    expect_error([&] { a.union_with(o); }, {"union_with", "differ"});
    expect_error([&] { a.intersect_with(o); }, {"intersect_with", "differ"});
    EXPECT_EQ(a, before);
  }
}

TEST(BadInput, MergeOfDifferentHashes) {
  const std::vector<std::uint64_t> keys{1, 2, 3, 4, 5};
  HyperLogLog a(12);
  a.add(keys);
  const HyperLogLog before = a;
  for (HashSpec h : {HashSpec{HashKind::Xxh64, 1}, HashSpec{HashKind::Murmur64A, 0}, HashSpec::redis()}) {
    for (std::uint32_t p : {10u, 12u, 14u}) {
      HyperLogLog o(p, h);
      o.add(keys);
      expect_error([&] { a.merge(o); }, {"merge", "different hashes"});
      EXPECT_EQ(a, before);
    }
  }
}

// --- Bad key batches: rejected before any kernel runs; the object is unchanged.

template <class Offset>
void check_bad_offsets() {
  const std::vector<std::uint8_t> data(10, 'x');
  const std::vector<std::vector<Offset>> bad = {
      {0, 5, 3, 10},   // decreasing
      {0, 5, 11},      // past the data
      {-1, 5, 10},     // negative
      {0, -4, 10},     // negative in the middle
      {0, 10, 10, 2},  // decreasing at the end
  };
  const char* words[] = {"less than", "outside", "outside", "outside", "less than"};
  BloomFilter f(4, 4);
  HyperLogLog h(8);
  f.add(std::vector<std::uint64_t>{7});
  const BloomFilter f0 = f;
  const HyperLogLog h0 = h;
  for (std::size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(i);
    const StringBatch<Offset> s{bad[i], data};
    expect_error([&] { f.add(s); }, {"offsets[", words[i]});
    expect_error([&] { h.add(s); }, {"offsets[", words[i]});
    std::vector<std::uint8_t> out(bad[i].size() - 1, 9);
    expect_error([&] { f.contains(s, out); }, {"offsets["});
    EXPECT_EQ(out, std::vector<std::uint8_t>(bad[i].size() - 1, 9));
  }
  EXPECT_EQ(f, f0);
  EXPECT_EQ(h, h0);
}

TEST(BadInput, StringOffsets) {
  check_bad_offsets<std::int32_t>();
  check_bad_offsets<std::int64_t>();
}

// A batch large enough for several workers is checked in pieces
// (for_each_worker_share): a bad offset on either side of each piece's first
// one (the pair no single piece holds but for the overlap) and at the very end
// is still found and named.
template <class Offset>
void check_bad_offsets_across_workers() {
  constexpr std::size_t kKeys = std::size_t{1} << 17;  // 4 workers of the 32 Ki keys each needs
  std::vector<Offset> off(kKeys + 1);
  for (std::size_t i = 0; i <= kKeys; ++i) off[i] = static_cast<Offset>(i);
  const std::vector<std::uint8_t> data(kKeys, 'x');
  HyperLogLog h(10);
  const HyperLogLog h0 = h;
  h.add(StringBatch<Offset>{off, data});  // the valid batch passes
  EXPECT_NE(h, h0);
  const HyperLogLog h1 = h;
  const std::size_t piece = probkit::detail::piece_keys(off.size(), 4);  // src/keys.cc's pieces of the offsets
  std::vector<std::size_t> places{kKeys};
  for (std::size_t first = piece; first < off.size(); first += piece) places.insert(places.end(), {first - 1, first});
  ASSERT_GE(places.size(), 7u);
  for (std::size_t at : places) {
    SCOPED_TRACE(at);
    const Offset saved = off[at];
    off[at] = static_cast<Offset>(off[at - 1] - 1);  // below the one before
    expect_error([&] { h.add(StringBatch<Offset>{off, data}); }, {"offsets[" + std::to_string(at) + "]", "less than"});
    off[at] = static_cast<Offset>(kKeys + 1);  // past the data (or, last, only that)
    expect_error([&] { h.add(StringBatch<Offset>{off, data}); }, {"offsets[" + std::to_string(at) + "]", "outside"});
    off[at] = saved;
  }
  EXPECT_EQ(h, h1);
}

TEST(BadInput, StringOffsetsAcrossWorkers) {
  set_threads(4);
  check_bad_offsets_across_workers<std::int32_t>();
  check_bad_offsets_across_workers<std::int64_t>();
  set_threads(0);
}

// The worker pool packs a call's worker count into 16 bits and keeps every
// thread it starts: 4096 is the most a call may ask for, by either route.
TEST(BadInput, ThreadCountOutOfRange) {
  set_threads(3);
  for (unsigned n : {4097u, 70000u, ~0u}) {
    expect_error([&] { set_threads(n); }, {"set_threads", std::to_string(n), "[0, 4096]"});
    EXPECT_EQ(threads(), 3u) << "a refused count must leave the setting as it was";
  }
  set_threads(4096);
  EXPECT_EQ(threads(), 4096u);
  set_threads(0);
  EXPECT_GE(threads(), 1u);
  EXPECT_LE(threads(), 4096u);
}

TEST(BadInput, NullDataWithNonZeroCount) {
  BloomFilter f(4, 4);
  HyperLogLog h(8);
  const BloomFilter f0 = f;
  const HyperLogLog h0 = h;
  const std::vector<std::uint8_t> data(8, 1);
  const std::int32_t off32[] = {0, 4, 8};
  const std::int64_t off64[] = {0, 4, 8};
  const std::vector<std::function<Keys()>> bad = {
      [] { return Keys(std::span<const std::uint32_t>(static_cast<const std::uint32_t*>(nullptr), 5)); },
      [] { return Keys(std::span<const std::uint64_t>(static_cast<const std::uint64_t*>(nullptr), 5)); },
      [] { return Keys(Prehashed{std::span<const std::uint64_t>(static_cast<const std::uint64_t*>(nullptr), 5)}); },
      [&] { return Keys(StringBatch<std::int32_t>{{static_cast<const std::int32_t*>(nullptr), 3}, data}); },
      [&] { return Keys(StringBatch<std::int32_t>{off32, {static_cast<const std::uint8_t*>(nullptr), 8}}); },
      [&] { return Keys(StringBatch<std::int64_t>{{static_cast<const std::int64_t*>(nullptr), 3}, data}); },
      [&] { return Keys(StringBatch<std::int64_t>{off64, {static_cast<const std::uint8_t*>(nullptr), 8}}); },
      [] { return Keys(std::span<const std::string_view>(static_cast<const std::string_view*>(nullptr), 2)); },
      [] {
        // A view claiming 3 bytes at a null pointer.
        static const std::string_view views[] = {"ok", std::string_view(static_cast<const char*>(nullptr), 3)};
        return Keys(std::span<const std::string_view>(views));
      },
  };
  for (std::size_t i = 0; i < bad.size(); ++i) {
    SCOPED_TRACE(i);
    expect_error([&] { f.add(bad[i]()); }, {"null"});
    expect_error([&] { h.add(bad[i]()); }, {"null"});
  }
  EXPECT_EQ(f, f0);
  EXPECT_EQ(h, h0);
  // Null with zero keys is an empty batch, not an error.
  f.add(std::span<const std::uint64_t>());
  f.add(StringBatch<std::int32_t>{{}, {}});
  h.add(Prehashed{});
  EXPECT_EQ(f, f0);
  EXPECT_EQ(h, h0);
}

TEST(BadInput, ContainsWithWrongSizedOutput) {
  BloomFilter f(4, 4);
  const std::vector<std::uint64_t> keys{1, 2, 3};
  f.add(keys);
  const BloomFilter f0 = f;
  for (std::size_t n : {0u, 2u, 4u}) {
    std::vector<std::uint8_t> out(n, 9);
    expect_error([&] { f.contains(keys, out); }, {"output has " + std::to_string(n) + " entries", "3 keys"});
    EXPECT_EQ(out, std::vector<std::uint8_t>(n, 9));
  }
  EXPECT_EQ(f, f0);
}

// A call may not read as keys memory it writes: the AVX-512 add kernel reads a
// step of hashes ahead of its writes, and workers read one another's shares,
// so such a call gave results that depended on the backend and thread count.
TEST(BadInput, KeysOverlappingWhatTheCallWrites) {
  BloomFilter f(512, 6);  // 32 KiB
  const std::vector<std::uint64_t> some{1, 2, 3};
  f.add(some);
  const BloomFilter f0 = f;
  const auto* bits = reinterpret_cast<const std::uint64_t*>(f.data().data());
  const std::size_t words = f.size_bytes() / 8;
  expect_error([&] { f.add(std::span<const std::uint64_t>(bits, words)); }, {"add", "overlap", "bitset"});
  expect_error([&] { f.add(Prehashed{std::span<const std::uint64_t>(bits + words - 1, 1)}); }, {"overlap"});
  expect_error([&] { f.add(std::span<const std::uint32_t>(reinterpret_cast<const std::uint32_t*>(bits) + 5, 2)); },
               {"overlap"});
  const std::vector<std::int32_t> offsets{0, 8, 16};
  expect_error(
      [&] {
        f.add(StringBatch<std::int32_t>{offsets, std::span<const std::uint8_t>(f.data().data(), 16)});
      },
      {"overlap", "bitset"});
  EXPECT_EQ(f, f0);

  // contains: the answers may not land on the keys still to be read. The keys
  // sit in the middle of a buffer with room for the answers on either side.
  std::vector<std::uint64_t> buffer(128 + 1024 + 128, 7);
  const std::span<const std::uint64_t> keys(buffer.data() + 128, 1024);
  auto* bytes = reinterpret_cast<std::uint8_t*>(buffer.data());
  constexpr std::size_t kKeysAt = 128 * 8, kKeysEnd = kKeysAt + 1024 * 8;
  const std::vector<std::uint64_t> before = buffer;
  for (std::size_t at : {kKeysAt - 1023, kKeysAt, kKeysAt + 8, kKeysEnd - 1}) {
    expect_error([&] { f.contains(keys, std::span<std::uint8_t>(bytes + at, 1024)); },
                 {"contains", "overlap", "output"});
  }
  EXPECT_EQ(buffer, before);
  std::vector<std::uint8_t> apart(1024);
  f.contains(keys, apart);
  for (std::size_t at : {kKeysAt - 1024, kKeysEnd}) {  // touching the keys, not overlapping: allowed
    f.contains(keys, std::span<std::uint8_t>(bytes + at, 1024));
    EXPECT_EQ(std::memcmp(bytes + at, apart.data(), apart.size()), 0);
  }

  HyperLogLog h(10);
  h.add(some);
  const HyperLogLog h0 = h;
  const auto* regs = reinterpret_cast<const std::uint64_t*>(h.registers().data());
  expect_error([&] { h.add(Prehashed{std::span<const std::uint64_t>(regs, h.num_registers() / 8)}); },
               {"add", "overlap", "registers"});
  EXPECT_EQ(h, h0);
  // Zero keys read nothing, wherever they point.
  f.add(std::span<const std::uint64_t>(bits, 0));
  h.add(Prehashed{std::span<const std::uint64_t>(regs, 0)});
  EXPECT_EQ(f, f0);
  EXPECT_EQ(h, h0);
}

// --- Serialized bytes: every truncation, every extension and every single
// byte flip of a valid blob is rejected with a message naming the format.

template <class T>
void check_every_corruption(const std::vector<std::uint8_t>& good, const char* format) {
  ASSERT_NO_THROW((void)T::deserialize(good));
  int failures = 0;
  auto rejected = [&](const std::vector<std::uint8_t>& bytes, const std::string& what) {
    try {
      (void)T::deserialize(bytes);
      if (failures++ < 5) ADD_FAILURE() << what << " was accepted";
    } catch (const Error& e) {
      if (std::string(e.what()).rfind(format, 0) != 0 && failures++ < 5) {
        ADD_FAILURE() << what << ": message does not name " << format << ": " << e.what();
      }
    }
  };
  for (std::size_t len = 0; len < good.size(); ++len) {
    rejected(std::vector<std::uint8_t>(good.begin(), good.begin() + len), "truncation to " + std::to_string(len));
  }
  for (std::size_t extra : {1u, 8u, 64u}) {
    std::vector<std::uint8_t> longer = good;
    longer.resize(good.size() + extra, 0);
    rejected(longer, "extension by " + std::to_string(extra));
  }
  std::vector<std::uint8_t> bytes = good;
  for (std::size_t i = 0; i < good.size(); ++i) {
    for (std::uint8_t flip : {std::uint8_t{0x01}, std::uint8_t{0x80}, std::uint8_t{0xFF}}) {
      bytes[i] ^= flip;
      rejected(bytes, "flip " + std::to_string(flip) + " at byte " + std::to_string(i));
      bytes[i] ^= flip;
    }
  }
  EXPECT_EQ(failures, 0);
}

TEST(BadInput, EveryCorruptionOfASerializedFilter) {
  const std::vector<std::uint64_t> keys{1, 2, 3, 4, 5, 6, 7};
  for (auto layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    BloomFilter f(3, layout == BloomLayout::ParquetSbbf ? 8 : 5, layout, HashSpec{HashKind::Xxh64, 77});
    f.add(keys);
    check_every_corruption<BloomFilter>(f.serialize(), "PKBF");
  }
}

TEST(BadInput, EveryCorruptionOfASerializedSketch) {
  std::vector<std::uint64_t> keys(5000);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  for (std::uint32_t p = 4; p <= 14; ++p) {
    SCOPED_TRACE(p);
    HyperLogLog h(p, p % 2 ? HashSpec::redis() : HashSpec{});
    h.add(keys);
    check_every_corruption<HyperLogLog>(h.serialize(), "PKHL");
  }
}

// Re-seals a blob whose fields were edited, so only the field check can catch it.
void reseal(std::vector<std::uint8_t>& b) {
  const std::uint64_t sum = hash(std::string_view(reinterpret_cast<const char*>(b.data()), b.size() - 8));
  for (int i = 0; i < 8; ++i) b[b.size() - 8 + i] = static_cast<std::uint8_t>(sum >> (8 * i));
}

TEST(BadInput, SerializedFieldsAreNamed) {
  const std::vector<std::uint8_t> f = BloomFilter(2, 6).serialize();
  auto edited = [&](std::size_t at, std::uint8_t v) {
    std::vector<std::uint8_t> b = f;
    b[at] = v;
    reseal(b);
    return b;
  };
  expect_error([&] { BloomFilter::deserialize(edited(0, 'X')); }, {"PKBF", "magic"});
  expect_error([&] { BloomFilter::deserialize(edited(4, 2)); }, {"PKBF", "version 2"});
  // docs/FORMAT.md defines version 1 only: an older number is as unknown as a newer one.
  expect_error([&] { BloomFilter::deserialize(edited(4, 0)); }, {"PKBF", "unsupported format version 0"});
  expect_error([&] { BloomFilter::deserialize(edited(6, 7)); }, {"PKBF", "layout 7"});
  expect_error([&] { BloomFilter::deserialize(edited(7, 0)); }, {"PKBF", "k = 0"});
  expect_error([&] { BloomFilter::deserialize(edited(7, 17)); }, {"PKBF", "k = 17"});
  expect_error([&] { BloomFilter::deserialize(edited(8, 3)); }, {"PKBF", "hash kind 3"});
  expect_error([&] { BloomFilter::deserialize(edited(12, 1)); }, {"PKBF", "reserved byte 12"});
  expect_error([&] { BloomFilter::deserialize(edited(24, 3)); }, {"PKBF", "num_blocks = 3"});
  expect_error([&] { BloomFilter::deserialize(edited(24, 0)); }, {"PKBF", "num_blocks = 0"});
  expect_error([&] { BloomFilter::deserialize(edited(28, 1)); }, {"PKBF", "num_blocks"});
  std::vector<std::uint8_t> bad_sum = f;
  bad_sum[40] ^= 1;
  expect_error([&] { BloomFilter::deserialize(bad_sum); }, {"PKBF", "checksum"});
  // The length is checked on its own: a blob with 8 bytes more whose last 8 are a valid checksum of all before
  // them (its own checksum included) passes the checksum, and must still fail as too long.
  const auto eight_bytes_longer = [](std::vector<std::uint8_t> b) {
    b.resize(b.size() + 8);
    reseal(b);
    return b;
  };
  expect_error([&] { BloomFilter::deserialize(eight_bytes_longer(f)); }, {"PKBF", "length 176", "expected 168 bytes"});
  // Shorter than the 40-byte header and checksum is "truncated", not a length that wrapped below zero.
  for (std::size_t len : {32u, 39u}) {
    expect_error([&] { BloomFilter::deserialize(std::span(f.data(), len)); }, {"PKBF", "truncated", "40-byte"});
  }

  const std::vector<std::uint8_t> h = HyperLogLog(5).serialize();
  auto edited_h = [&](std::size_t at, std::uint8_t v) {
    std::vector<std::uint8_t> b = h;
    b[at] = v;
    reseal(b);
    return b;
  };
  expect_error([&] { HyperLogLog::deserialize(edited_h(3, 'X')); }, {"PKHL", "magic"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(5, 1)); }, {"PKHL", "version"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(4, 0)); }, {"PKHL", "unsupported format version 0"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(6, 3)); }, {"PKHL", "p = 3"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(6, 19)); }, {"PKHL", "p = 19"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(6, 6)); }, {"PKHL", "length"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(7, 0)); }, {"PKHL", "hash kind 0"});
  expect_error([&] { HyperLogLog::deserialize(edited_h(16 + 9, 61)); }, {"PKHL", "register 9 = 61", "maximum rank 60"});
  expect_error([&] { HyperLogLog::deserialize(eight_bytes_longer(h)); }, {"PKHL", "length 64", "expected 56 bytes"});
  for (std::size_t len : {16u, 23u}) {
    expect_error([&] { HyperLogLog::deserialize(std::span(h.data(), len)); }, {"PKHL", "truncated", "24-byte"});
  }
  std::vector<std::uint8_t> empty;
  expect_error([&] { HyperLogLog::deserialize(empty); }, {"PKHL", "truncated"});
  expect_error([&] { BloomFilter::deserialize(empty); }, {"PKBF", "truncated"});
}

// A null pointer with a length that would hold a whole blob is refused before any byte is read (each reader's
// length checks alone would pass it on to the magic's memcmp).
TEST(BadInput, NullBytesWithNonZeroLength) {
  const auto null_bytes = [](std::size_t n) {
    return std::span<const std::uint8_t>(static_cast<const std::uint8_t*>(nullptr), n);
  };
  const std::size_t filter_bytes = 32 + 64 + 8, sketch_bytes = 16 + 16 + 8;  // docs/FORMAT.md: 1 block, p = 4
  expect_error([&] { (void)BloomFilter::deserialize(null_bytes(filter_bytes)); }, {"PKBF", "null pointer"});
  expect_error([&] { (void)BloomFilter::serialized_size(null_bytes(32)); }, {"PKBF", "null pointer"});
  expect_error([&] { (void)HyperLogLog::deserialize(null_bytes(sketch_bytes)); }, {"PKHL", "null pointer"});
  expect_error([&] { (void)HyperLogLog::from_redis(null_bytes(12304)); }, {"Redis HLL", "null pointer"});
  expect_error([&] { (void)HyperLogLog::from_redis(null_bytes(18)); }, {"Redis HLL", "null pointer"});
}

// Every register at its maximum rank (65 - p) bounds the cardinality from
// below only: the estimate is +infinity (hyperloglog.hpp), also after a fold
// (the registers of index < 2^4 stay at the top) and through Redis's format;
// one register short of it, the estimate is finite.
TEST(BadInput, SaturatedSketchEstimatesInfinity) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const std::uint32_t p : {4u, 14u, 18u}) {
    SCOPED_TRACE(p);
    const std::size_t m = std::size_t{1} << p;
    std::vector<std::uint8_t> b = (p == 14 ? HyperLogLog::redis() : HyperLogLog(p)).serialize();
    std::fill_n(b.begin() + 16, m, static_cast<std::uint8_t>(65 - p));
    reseal(b);
    const HyperLogLog full = HyperLogLog::deserialize(b);
    EXPECT_EQ(full.estimate(), inf);
    EXPECT_EQ(full.fold(4).estimate(), inf);
    if (p == 14) {
      EXPECT_EQ(HyperLogLog::from_redis(full.to_redis()).estimate(), inf);
    }
    b[16 + m / 2] = static_cast<std::uint8_t>(64 - p);
    reseal(b);
    const double almost = HyperLogLog::deserialize(b).estimate();
    EXPECT_TRUE(std::isfinite(almost)) << almost;
    EXPECT_GT(almost, 1e18);
  }
}

// --- Redis HLL strings

std::vector<std::uint8_t> redis_header(std::uint8_t encoding) {
  std::vector<std::uint8_t> b = {'H', 'Y', 'L', 'L', encoding, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
  return b;
}

std::vector<std::uint8_t> sparse(std::initializer_list<std::uint8_t> ops) {
  std::vector<std::uint8_t> b = redis_header(1);
  for (const std::uint8_t op : ops) b.push_back(op);  // insert(): GCC 12's -Wstringop-overread misfires
  return b;
}

TEST(BadInput, RedisStrings) {
  HyperLogLog r = HyperLogLog::redis();
  r.add(std::vector<std::uint64_t>{1, 2, 3, 4});
  const std::vector<std::uint8_t> dense = r.to_redis();
  ASSERT_EQ(HyperLogLog::from_redis(dense), r);
  // Valid sparse forms, so the failures below are about what they change.
  ASSERT_EQ(HyperLogLog::from_redis(sparse({0x7F, 0xFF})), HyperLogLog::redis());
  ASSERT_NO_THROW(HyperLogLog::from_redis(sparse({0xFF, 0x7F, 0xFB})));  // VAL 32 x4, XZERO 16380

  std::vector<std::uint8_t> b = dense;
  b[1] = 'X';
  expect_error([&] { HyperLogLog::from_redis(b); }, {"Redis HLL", "magic"});
  b = dense;
  b[4] = 2;
  expect_error([&] { HyperLogLog::from_redis(b); }, {"Redis HLL", "encoding 2"});
  b = dense;
  b[4] = 0xFF;
  expect_error([&] { HyperLogLog::from_redis(b); }, {"encoding 255"});
  for (std::size_t len : {std::size_t{16}, std::size_t{12303}, std::size_t{12305}, std::size_t{20000}}) {
    b = dense;
    b.resize(len, 0);
    expect_error([&] { HyperLogLog::from_redis(b); }, {"Redis HLL dense", "length " + std::to_string(len)});
  }
  for (std::size_t len = 0; len < 16; ++len) {
    expect_error([&] { HyperLogLog::from_redis(std::span(dense.data(), len)); }, {"Redis HLL", "truncated"});
  }
  // Dense register 0 = 63 (bits 0..5 of payload byte 0), register 1 = 52.
  b = dense;
  b[16] = 0x3F;
  expect_error([&] { HyperLogLog::from_redis(b); }, {"register 0 = 63", "51"});
  b = dense;
  b[16] &= 0x3F;
  b[16] |= static_cast<std::uint8_t>((52 & 3) << 6);
  b[17] = static_cast<std::uint8_t>((b[17] & 0xF0) | (52 >> 2));
  expect_error([&] { HyperLogLog::from_redis(b); }, {"register 1 = 52", "51"});

  // Sparse: runs past register 16383, truncated XZERO, runs summing short.
  expect_error([] { HyperLogLog::from_redis(sparse({0x7F, 0xFF, 0x00})); }, {"sparse", "overflows"});
  expect_error([] { HyperLogLog::from_redis(sparse({0x7F, 0xFE, 0x81})); }, {"sparse", "overflows"});
  expect_error([] { HyperLogLog::from_redis(sparse({0x7F, 0xFF, 0x7F, 0xFF})); }, {"sparse", "overflows"});
  expect_error([] { HyperLogLog::from_redis(sparse({0x7F, 0xFE, 0x40})); }, {"XZERO", "truncated"});
  expect_error([] { HyperLogLog::from_redis(sparse({0x40})); }, {"XZERO", "truncated"});
  expect_error([] { HyperLogLog::from_redis(sparse({0x7F, 0x00})); }, {"sparse", "16129", "not 16384"});
  expect_error([] { HyperLogLog::from_redis(sparse({})); }, {"sparse", "cover 0"});
  expect_error([] { HyperLogLog::from_redis(sparse({0x3F, 0xFF})); }, {"sparse", "not 16384"});
  // A sparse run of 1..4 registers of value 32 after 16383 zeros: overflow.
  expect_error([] { HyperLogLog::from_redis(sparse({0x7F, 0xFE, 0xFF})); }, {"overflows"});
}

TEST(BadInput, RedisExportNeedsARedisSketch) {
  // The message names what is wrong: it named only p, which was right.
  expect_error([] { (void)HyperLogLog(14).to_redis(); }, {"to_redis", "p = 14 and XXH64 seed 0x0"});
  expect_error([] { (void)HyperLogLog(12, HashSpec::redis()).to_redis(); }, {"to_redis", "p = 12"});
  // Redis hashes with MurmurHash64A seed 0xadc83b19 (hyperloglog.c, hllPatLen): the same function with another
  // seed puts each key in another register, so its registers are no Redis string; the kind alone is not enough.
  expect_error([] { (void)HyperLogLog(14, HashSpec{HashKind::Murmur64A, 0}).to_redis(); },
               {"to_redis", "p = 14 and MurmurHash64A seed 0x0"});
  expect_error([] { (void)HyperLogLog(14, HashSpec{HashKind::Murmur64A, 0xadc83b18}).to_redis(); },
               {"to_redis", "MurmurHash64A seed 0xadc83b18"});
}

}  // namespace
}  // namespace probkit
