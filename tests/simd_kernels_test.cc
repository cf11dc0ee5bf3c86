// Every compiled Highway target that this CPU supports against the scalar
// reference, kernel by kernel, on random data: the identity contract of
// DESIGN.md §6 at the level of cpu/simd.cc.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#include <sys/mman.h>
#include <unistd.h>
#if HWY_ARCH_ARM_A64 && defined(__linux__)
#include <sys/prctl.h>  // PR_SVE_GET_VL
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cpu/add_masks.h"
#include "dispatch.hpp"  // set_supported_targets_for_test
#include "probkit/backend.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/hash.hpp"
#include "probkit/layout/hll.hpp"

namespace probkit::detail {
namespace {

std::vector<const SimdTarget*> supported_targets() {
  const SimdTarget* all = nullptr;
  const std::size_t n = compiled_simd_targets(&all);
  std::vector<const SimdTarget*> out;
  for (std::size_t i = 0; i < n; ++i) {
    if ((hwy::SupportedTargets() & all[i].bit) != 0) out.push_back(&all[i]);
  }
  return out;
}

// Lengths 0..70 cover every vector tail; 10^5 covers many hash chunks.
std::vector<std::size_t> lengths() {
  std::vector<std::size_t> out;
  for (std::size_t n = 0; n <= 70; ++n) out.push_back(n);
  out.push_back(100000);
  out.push_back(100003);  // a tail after whole steps of 4, 5 or 8 keys
  return out;
}

std::vector<std::uint64_t> random_u64(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint64_t> v(n);
  for (auto& x : v) x = rng();
  return v;
}

// Storage whose data() is deliberately misaligned by `offset` elements.
template <class T>
struct Misaligned {
  std::vector<T> buf;
  std::size_t offset;
  Misaligned(std::size_t n, std::size_t off) : buf(n + off + 1), offset(off) {}
  T* data() { return buf.data() + offset; }
};

class SimdKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    targets_ = supported_targets();
    if (targets_.empty()) GTEST_SKIP() << "no compiled SIMD target runs on this CPU";
  }
  void TearDown() override { cpu::set_avx512_add_masks_for_testing(std::nullopt); }

  // fn(target) for every target, and once more for each AVX-512 target with
  // its add's masks built the other way (cpu/add_masks.h): each way is held
  // to the reference whichever this CPU's vendor picks.
  template <class Fn>
  void for_each_target_and_add_masks(const Fn& fn) {
    for (cpu::AddMasks masks : {cpu::AddMasks::kShifts, cpu::AddMasks::kBitTable}) {
      SCOPED_TRACE(std::string("AVX-512 add masks: ") + cpu::add_masks_name(masks));
      cpu::set_avx512_add_masks_for_testing(masks);
      for (const SimdTarget* t : targets_) {
        if (masks == cpu::AddMasks::kBitTable && (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) == 0) continue;
        fn(t);
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }

  std::vector<const SimdTarget*> targets_;
  std::mt19937_64 rng_{20261130};
};

TEST(SimdTargets, NoScalarCopiesAndNamed) {
  const SimdTarget* all = nullptr;
  const std::size_t n = compiled_simd_targets(&all);
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_NE(all[i].bit, HWY_SCALAR);
    EXPECT_NE(all[i].bit, HWY_EMU128);
    EXPECT_STREQ(all[i].name, hwy::TargetName(all[i].bit));
    ASSERT_NE(all[i].kernels, nullptr);
    if (i > 0) {
      EXPECT_LT(all[i - 1].bit, all[i].bit) << "targets must be listed best first";
    }
  }
#if HWY_ARCH_X86
  // Every x86-64 CPU since 2008 has SSSE3, so a build that loses its SIMD
  // targets shows up here rather than as a silently slower library.
  EXPECT_GE(n, 3u);
#elif HWY_ARCH_ARM_A64
  // NEON is the AArch64 baseline: it is always compiled (whether this CPU
  // runs it depends on AES, which Highway's NEON target requires).
  ASSERT_GE(n, 1u);
  EXPECT_EQ(all[n - 1].bit, HWY_NEON);
#endif
}

// Prints the compiled targets and those this CPU runs (probkit::simd_targets(),
// the ones every test here and in identity_test.cc goes over), so that a log
// shows which targets a run really covered; scripts/test-arm64.sh checks it.
TEST(SimdTargets, ReportCompiledAndSupported) {
  const SimdTarget* all = nullptr;
  const std::size_t n = compiled_simd_targets(&all);
  std::string compiled, supported;
  for (std::size_t i = 0; i < n; ++i) compiled += std::string(" ") + all[i].name;
  for (const std::string& t : probkit::simd_targets()) {
    supported += " " + t;
    bool compiled_here = false;
    for (std::size_t i = 0; i < n; ++i) compiled_here |= t == all[i].name;
    EXPECT_TRUE(compiled_here) << t << " is reported supported but was not compiled";
  }
#if HWY_ARCH_X86_64
  // SSSE3 is on every x86-64 CPU since 2008. (Not asserted on Arm: Highway
  // 1.0.3's NEON target also needs AES, which some Arm cores lack.)
  EXPECT_FALSE(probkit::simd_targets().empty());
#endif
  std::printf("probkit SIMD targets compiled:%s\n", compiled.c_str());
  std::printf("probkit SIMD targets supported:%s\n", supported.c_str());
#if HWY_ARCH_ARM_A64 && defined(PR_SVE_GET_VL)
  const int vl = prctl(PR_SVE_GET_VL);  // bytes; fails without SVE
  if (vl >= 0) {
    std::printf("SVE vector length: %d bits\n", (vl & PR_SVE_VL_LEN_MASK) * 8);
  } else {
    std::printf("SVE vector length: no SVE\n");
  }
#endif
}

// Each target, made the best one the CPU reports, is the one that serves.
TEST_F(SimdKernels, DispatchServesEachTarget) {
  if (std::getenv("PROBKIT_SIMD_TARGET") != nullptr) GTEST_SKIP() << "a target is pinned";
  const std::uint64_t keys[] = {1, 2, 3};
  for (const SimdTarget* t : targets_) {
    probkit::detail::set_supported_targets_for_test(t->bit | HWY_SCALAR);
    EXPECT_EQ(probkit::simd_target(), t->name);
    auto bf = probkit::BloomFilter::for_capacity(100, 0.01);
    bf.add(std::span<const std::uint64_t>(keys), probkit::Backend::Simd);
    EXPECT_EQ(probkit::last_served().target, t->name);
  }
  probkit::detail::set_supported_targets_for_test(0);
  EXPECT_EQ(probkit::simd_target(), targets_.front()->name) << "the best target must win";
}

TEST_F(SimdKernels, HashMatchesScalar) {
  const HashSpec specs[] = {{HashKind::Xxh64, 0},
                            {HashKind::Xxh64, 0x9e3779b97f4a7c15ULL},
                            {HashKind::Murmur64A, layout::kRedisHllSeed},
                            {HashKind::Murmur64A, 0},
                            {HashKind::Murmur64A, ~0ULL}};
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (std::size_t n : lengths()) {
      const std::vector<std::uint64_t> src = random_u64(rng_, n + 3);
      for (KeyKind kind : {KeyKind::U64, KeyKind::U32}) {
        const std::size_t off = n % 3;  // key pointer alignment varies with n
        KeyBatch kb;
        kb.kind = kind;
        kb.n = n + 3;
        kb.keys =
            kind == KeyKind::U64
                ? static_cast<const void*>(src.data())
                : static_cast<const void*>(reinterpret_cast<const std::uint32_t*>(src.data()) + 1);
        for (const HashSpec& spec : specs) {
          std::vector<std::uint64_t> want(n);
          Misaligned<std::uint64_t> got(n, 1);  // 8-byte but not vector aligned
          constexpr std::uint64_t kUntouched = 0x5a5a5a5a5a5a5a5aULL;
          std::fill(got.buf.begin(), got.buf.end(), kUntouched);
          scalar_kernels().hash(kb, off, n, spec, want.data());
          t->kernels->hash(kb, off, n, spec, got.data());
          ASSERT_EQ(want, std::vector<std::uint64_t>(got.data(), got.data() + n))
              << "kind " << int(kind) << " n " << n << " seed " << spec.seed;
          // Nothing written outside the n hashes.
          ASSERT_EQ(got.buf.front(), kUntouched) << "kind " << int(kind) << " n " << n;
          ASSERT_EQ(got.buf.back(), kUntouched) << "kind " << int(kind) << " n " << n;
        }
      }
    }
  }
}

// One string column: lengths drawn from `max_len`, stored back to back from
// `first` into data that ends exactly at the last string's end (so the last
// tails have no slack behind them).
struct StringColumn {
  std::vector<std::uint8_t> data;
  std::vector<std::int32_t> off32;
  std::vector<std::int64_t> off64;
  // Fixed::Mostly: every string is max_len bytes long except those that
  // rng() % 16 picks (about one in sixteen: groups of one length and mixed
  // ones). Fixed::All: every string is max_len bytes long (a batch of
  // fixed-width keys, which every target hashes by a fixed-width path).
  enum class Fixed { No, Mostly, All };
  StringColumn(std::mt19937_64& rng, std::size_t n, std::size_t max_len, std::size_t first, Fixed fixed = Fixed::No) {
    off64.push_back(static_cast<std::int64_t>(first));
    for (std::size_t i = 0; i < n; ++i) {
      const bool full = fixed == Fixed::All || (fixed == Fixed::Mostly && rng() % 16 != 0);
      const std::size_t len = full ? max_len : rng() % (max_len + 1);
      off64.push_back(off64.back() + static_cast<std::int64_t>(len));
    }
    fill(rng);
  }
  // Strings of the given lengths, from offset 0.
  StringColumn(std::mt19937_64& rng, const std::vector<std::size_t>& lengths) {
    off64.push_back(0);
    for (std::size_t len : lengths) off64.push_back(off64.back() + static_cast<std::int64_t>(len));
    fill(rng);
  }
  void fill(std::mt19937_64& rng) {
    data.resize(static_cast<std::size_t>(off64.back()));
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    off32.assign(off64.begin(), off64.end());
  }
  KeyBatch batch(KeyKind kind) const {
    KeyBatch kb;
    kb.kind = kind;
    kb.n = off64.size() - 1;
    kb.keys = kind == KeyKind::Offsets32 ? static_cast<const void*>(off32.data())
                                         : static_cast<const void*>(off64.data());
    kb.data = data.data();
    kb.data_size = data.size();
    return kb;
  }
};

// check(target, column, batch, spec, want) for every target, column, offset
// width and spec, want the reference's hashes of the whole column; stops at
// the first fatal failure.
template <class Check>
void for_each_string_case(const std::vector<const SimdTarget*>& targets, const std::vector<StringColumn>& columns,
                          std::span<const HashSpec> specs, const Check& check) {
  for (const SimdTarget* t : targets) {
    SCOPED_TRACE(t->name);
    for (const StringColumn& col : columns) {
      for (KeyKind kind : {KeyKind::Offsets32, KeyKind::Offsets64}) {
        const KeyBatch kb = col.batch(kind);
        for (const HashSpec& spec : specs) {
          std::vector<std::uint64_t> want(kb.n);
          scalar_kernels().hash(kb, 0, kb.n, spec, want.data());
          check(*t, col, kb, spec, want);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

// Strings are hashed in vector lanes whose 8-byte reads must stay inside the
// data: every length 0..300 (short ones in every lane position, long ones
// mixed in), data of 0..20 bytes, every start and count of a sub-batch.
TEST_F(SimdKernels, HashStringsMatchScalar) {
  const HashSpec specs[] = {HashSpec{},
                            HashSpec::redis(),
                            {HashKind::Xxh64, 0x9e3779b97f4a7c15ULL},
                            {HashKind::Murmur64A, 0}};
  std::vector<StringColumn> columns;
  for (std::size_t max_len : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 40, 300}) {
    columns.emplace_back(rng_, 203, max_len, max_len % 5);
  }
  for (std::size_t n = 0; n <= 20; ++n) columns.emplace_back(rng_, n, n % 9, 0);  // tiny data
  for (std::size_t len : {7, 8, 9, 15, 16, 17}) {  // fixed-width keys
    columns.emplace_back(rng_, 203, len, len % 3, StringColumn::Fixed::Mostly);
    columns.emplace_back(rng_, 64, len, 0, StringColumn::Fixed::Mostly);
    // One width throughout: 0 to 25 whole vectors of 8 (AVX-512's pipeline's
    // fill and drain; AVX2's vectors hold 4), with and without a tail.
    for (std::size_t n : {5, 8, 13, 16, 24, 40, 47, 48, 56, 203}) {
      columns.emplace_back(rng_, n, len, n % 3, StringColumn::Fixed::All);
    }
  }
  const auto check = [](const SimdTarget& t, const StringColumn& col, const KeyBatch& kb, const HashSpec& spec,
                        const std::vector<std::uint64_t>& want) {
    for (std::size_t l = 0; l < kb.n; ++l) {  // the reference is the layout function
      const auto at = static_cast<std::size_t>(col.off64[l]);
      ASSERT_EQ(want[l],
                layout::hash_bytes(spec, col.data.data() + at, static_cast<std::size_t>(col.off64[l + 1]) - at));
    }
    for (std::size_t begin : {std::size_t{0}, std::size_t{1}, std::size_t{5}}) {
      if (begin > kb.n) continue;
      const std::size_t count = kb.n - begin;
      Misaligned<std::uint64_t> got(count, 1);
      t.kernels->hash(kb, begin, count, spec, got.data());
      ASSERT_EQ(std::vector<std::uint64_t>(want.begin() + begin, want.end()),
                std::vector<std::uint64_t>(got.data(), got.data() + count))
          << "kind " << int(kb.kind) << " strings " << kb.n << " bytes " << col.data.size() << " begin " << begin
          << " seed " << spec.seed;
    }
  };
  for_each_string_case(targets_, columns, specs, check);
}

// Windows of a column, as the bulk driver hashes it a chunk at a time: runs
// of one width inside a mixed column (begin and count anywhere), and runs
// whose lengths add up to width x count without being one width (lengths
// cycling through width, width + 1 and width - 1: a window that starts with a
// string of the width and holds whole cycles, plus at most one more string,
// passes every check but the scan of uniform_width), which the fixed-width
// paths must leave to the general ones.
TEST_F(SimdKernels, HashStringWindowsMatchScalar) {
  const HashSpec specs[] = {HashSpec{}, HashSpec::redis()};
  std::vector<StringColumn> columns;
  for (std::size_t width : {8, 16}) {
    columns.emplace_back(rng_, 160, width, 3, StringColumn::Fixed::Mostly);
    std::vector<std::size_t> cycling(96);
    for (std::size_t i = 0; i < cycling.size(); ++i) cycling[i] = width - 1 + (i + 1) % 3;
    columns.emplace_back(rng_, cycling);
  }
  const auto check = [](const SimdTarget& t, const StringColumn&, const KeyBatch& kb, const HashSpec& spec,
                        const std::vector<std::uint64_t>& want) {
    for (std::size_t begin : {0, 1, 2, 3, 5, 8, 13, 39, 40}) {
      for (std::size_t count = 0; count <= std::min<std::size_t>(70, kb.n - begin); ++count) {
        Misaligned<std::uint64_t> got(count, 1);
        t.kernels->hash(kb, begin, count, spec, got.data());
        ASSERT_EQ(std::vector<std::uint64_t>(want.begin() + begin, want.begin() + begin + count),
                  std::vector<std::uint64_t>(got.data(), got.data() + count))
            << "kind " << int(kb.kind) << " strings " << kb.n << " begin " << begin << " count " << count;
      }
    }
  };
  for_each_string_case(targets_, columns, specs, check);
}

struct Filter {
  std::vector<std::uint32_t> words;
  BloomRef ref;
  Filter(std::uint64_t nb, std::uint32_t k, BloomLayout layout)
      : words(nb * layout::block_words(layout)), ref{words.data(), nb, k, layout} {}
};

// Random hashes whose blocks and bits cover the filter, plus a second run of the
// same hashes so that "already set" paths are taken too.
std::vector<std::uint64_t> hashes_for(std::mt19937_64& rng, std::size_t n) {
  std::vector<std::uint64_t> h = random_u64(rng, n);
  for (std::size_t i = n / 2; i < n; ++i) h[i] = h[i - n / 2];
  return h;
}

TEST_F(SimdKernels, BloomMatchesScalar) {
  // 2^15 and 2^20 blocks: the kernels' near and far prefetch distances (kernels.hpp).
  const std::uint64_t block_counts[] = {1, 3, 1000, std::uint64_t{1} << 15, std::uint64_t{1} << 20};
  for_each_target_and_add_masks([&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
    std::printf("checking target %s (AVX-512 add masks: %s)\n", t->name, cpu::add_masks_name(cpu::avx512_add_masks()));
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t nb : block_counts) {
        const std::uint32_t k_max =
            layout == BloomLayout::Cacheline512 ? layout::kMaxCachelineK : 1;
        for (std::uint32_t k = 1; k <= k_max; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          // Large filters get few k values: the kernels' loops do not depend on nb.
          if (nb > 1000 && kk != 7 && kk != 8 && kk != 16) continue;
          const std::size_t n = nb > 1000 ? 100000 : 3 + (k * 37 + nb) % 68;
          const std::vector<std::uint64_t> h = hashes_for(rng_, n + 1);
          const std::size_t off = (k + nb) % 2;  // unaligned hash pointer
          Filter want(nb, kk, layout), got(nb, kk, layout);
          // Add the first half, query all (half present, half mostly absent).
          // The kernel under test is shown the rest as hashes ahead, which it
          // may prefetch and must not add.
          scalar_kernels().bloom_add(want.ref, h.data() + off, n / 2, {});
          t->kernels->bloom_add(got.ref, h.data() + off, n / 2, {.primed = 0, .ahead = n - n / 2});
          ASSERT_EQ(want.words, got.words) << "add: nb " << nb << " k " << kk << " n " << n;
          std::vector<std::uint64_t> queries = random_u64(rng_, n);
          for (std::size_t i = 0; i < n / 2; ++i) queries[2 * i] = h[off + i];
          Misaligned<std::uint8_t> out_want(n, 0), out_got(n, 1 + k % 7);
          const std::uint64_t hits_want =
              scalar_kernels().bloom_contains(want.ref, queries.data(), n, {}, out_want.data());
          const std::uint64_t hits_got = t->kernels->bloom_contains(got.ref, queries.data(), n, {}, out_got.data());
          ASSERT_EQ(hits_want, hits_got) << "contains: nb " << nb << " k " << kk;
          ASSERT_EQ(0, std::memcmp(out_want.data(), out_got.data(), n));
          ASSERT_EQ(hits_want, t->kernels->bloom_contains(got.ref, queries.data(), n, {}, nullptr));
          // Again in two calls, the first with the second's queries ahead:
          // it answers only its own, and the second starts primed by it.
          Misaligned<std::uint8_t> out_split(n, k % 5);
          constexpr std::uint8_t kUntouched = 0xA5;
          std::fill_n(out_split.data(), n, kUntouched);
          const std::size_t first = n / 3;
          std::uint64_t hits_split =
              t->kernels->bloom_contains(got.ref, queries.data(), first, {.ahead = n - first}, out_split.data());
          for (std::size_t i = first; i < n; ++i) ASSERT_EQ(kUntouched, out_split.data()[i]) << i;
          hits_split += t->kernels->bloom_contains(got.ref, queries.data() + first, n - first,
                                                   {.primed = n - first, .ahead = 0}, out_split.data() + first);
          ASSERT_EQ(hits_want, hits_split) << "contains in two calls: nb " << nb << " k " << kk;
          ASSERT_EQ(0, std::memcmp(out_want.data(), out_split.data(), n));
          // Then the rest, primed by the first add: adds onto a partly filled filter.
          scalar_kernels().bloom_add(want.ref, h.data() + off + n / 2, n - n / 2, {});
          t->kernels->bloom_add(got.ref, h.data() + off + n / 2, n - n / 2, {.primed = n - n / 2, .ahead = 0});
          ASSERT_EQ(want.words, got.words) << "add 2: nb " << nb << " k " << kk;
        }
      }
    }
  });
}

// Filters filled until about half of random queries answer yes, so that
// each answer turns on every probe: a test that skipped a probe, or read the
// wrong word or bit for one, answers yes where the reference says no. (In
// the sparser filters above nearly every absent key misses on its first
// probes, and such a test would pass.) The queries are u64 keys, asked as
// their hashes and, where a target hashes and tests in one loop
// (bloom_contains_keys), as keys.
TEST_F(SimdKernels, BloomMatchesScalarHalfFull) {
  constexpr std::size_t kQueries = 4000;
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      const std::uint32_t k_max = layout == BloomLayout::Cacheline512 ? layout::kMaxCachelineK : 1;
      for (std::uint64_t nb : {1, 3, 64}) {
        for (std::uint32_t k = 1; k <= k_max; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          // A query answers yes with probability fill^kk: fill = 2^(-1/kk).
          // cacheline512: each probe sets one of 512 bits, kk probes a key;
          // parquet_sbbf: one of 32 bits in each word, one probe a word.
          const double fill = std::pow(0.5, 1.0 / kk);
          const double bits = layout == BloomLayout::Cacheline512 ? 512.0 : 32.0;
          const double probes_per_key = layout == BloomLayout::Cacheline512 ? kk : 1.0;
          const auto n =
              static_cast<std::size_t>(std::ceil(static_cast<double>(nb) * bits * -std::log1p(-fill) / probes_per_key));
          const std::vector<std::uint64_t> h = random_u64(rng_, n);
          Filter f(nb, kk, layout);
          scalar_kernels().bloom_add(f.ref, h.data(), n, {});
          const std::vector<std::uint64_t> keys = random_u64(rng_, kQueries);
          KeyBatch kb;
          kb.kind = KeyKind::U64;
          kb.n = kQueries;
          kb.keys = keys.data();
          std::vector<std::uint64_t> queries(kQueries);
          scalar_kernels().hash(kb, 0, kQueries, HashSpec{}, queries.data());
          std::vector<std::uint8_t> want(kQueries), got(kQueries, 2);
          const std::uint64_t hits = scalar_kernels().bloom_contains(f.ref, queries.data(), kQueries, {}, want.data());
          ASSERT_GT(hits, kQueries / 4) << "nb " << nb << " k " << kk << ": not full enough to test";
          ASSERT_LT(hits, kQueries * 3 / 4) << "nb " << nb << " k " << kk << ": too full to test";
          ASSERT_EQ(hits, t->kernels->bloom_contains(f.ref, queries.data(), kQueries, {}, got.data()))
              << "nb " << nb << " k " << kk;
          ASSERT_EQ(want, got) << "nb " << nb << " k " << kk;
          if (t->kernels->bloom_contains_keys == nullptr) continue;
          std::vector<std::uint64_t> scratch(kQueries);
          std::vector<std::uint8_t> got_keys(kQueries, 2);
          std::uint64_t hits_keys = 0;
          if (!t->kernels->bloom_contains_keys(f.ref, kb, 0, kQueries, HashSpec{}, scratch.data(), got_keys.data(),
                                               &hits_keys)) {
            continue;  // declined (BloomContainsKeysMatchesHashThenContains says where)
          }
          ASSERT_EQ(hits, hits_keys) << "keys: nb " << nb << " k " << kk;
          ASSERT_EQ(want, got_keys) << "keys: nb " << nb << " k " << kk;
        }
      }
    }
  }
}

// Calls of any size chained as the drivers chain them: each says primed the
// hashes the call before carried ahead, so that calls shorter than the
// prefetch distance, than a step of eight keys, or than the keys primed, and
// primed counts below and above the distance, all run (results must match
// the reference; lost prefetches would only be slower). 2^12 blocks: no
// prefetching (cacheline512: the AVX-512 add's masks from either source);
// 2^15: the near prefetch distance for both layouts; 2^19: the far one.
TEST_F(SimdKernels, BloomChainedCallsMatchScalar) {
  const std::size_t sizes[] = {5, 20, 3, 77, 1, 8, 256, 13, 40, 7, 130, 2, 96, 9, 300, 4};
  std::size_t total = 0;
  for (std::size_t c : sizes) total += c;
  const std::vector<std::uint64_t> h = hashes_for(rng_, total);
  std::vector<std::uint64_t> queries = random_u64(rng_, total);
  for (std::size_t i = 0; i < total; i += 2) queries[i] = h[(i * 7) % total];
  for_each_target_and_add_masks([&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t nb : {std::uint64_t{1} << 12, std::uint64_t{1} << 15, std::uint64_t{1} << 19}) {
        const std::uint64_t bytes = nb * layout::block_bytes(layout);
        for (std::uint32_t k : {6u, 16u}) {
          if (layout == BloomLayout::ParquetSbbf && k != 6) continue;
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          Filter want(nb, kk, layout), got(nb, kk, layout);
          scalar_kernels().bloom_add(want.ref, h.data(), total, {});
          std::vector<std::uint8_t> out_want(total);
          const std::uint64_t hits_want =
              scalar_kernels().bloom_contains(want.ref, queries.data(), total, {}, out_want.data());
          for (std::size_t max_ahead : {bloom_prefetch_keys_ahead(bytes), std::size_t{3}, std::size_t{40}}) {
            const std::string what =
                "nb " + std::to_string(nb) + " k " + std::to_string(kk) + " ahead " + std::to_string(max_ahead);
            std::fill(got.words.begin(), got.words.end(), 0u);
            Misaligned<std::uint8_t> out_got(total, 3);
            std::uint64_t hits_got = 0;
            for (bool add : {true, false}) {
              std::size_t first = 0, primed = 0;
              for (std::size_t c : sizes) {
                const BloomLookahead around{primed, std::min(max_ahead, total - first - c)};
                if (add) {
                  t->kernels->bloom_add(got.ref, h.data() + first, c, around);
                } else {
                  hits_got +=
                      t->kernels->bloom_contains(got.ref, queries.data() + first, c, around, out_got.data() + first);
                }
                primed = around.ahead;
                first += c;
              }
            }
            ASSERT_EQ(want.words, got.words) << "add: " << what;
            ASSERT_EQ(hits_want, hits_got) << "contains: " << what;
            ASSERT_EQ(0, std::memcmp(out_want.data(), out_got.data(), total)) << "contains: " << what;
          }
        }
      }
    }
  });
}

// The largest block count, 2^32 - 1: block_index's 32x32-bit product then
// uses all 64 bits. Hashes whose top 32 bits are at most 64 address only
// blocks 0..63, so a 64-block buffer stands in for the 256 GiB filter.
TEST_F(SimdKernels, BloomLargestBlockCount) {
  constexpr std::uint64_t kBlocks = 0xFFFFFFFFu;
  constexpr std::size_t kReal = 64;  // blocks actually allocated
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint32_t k : {6u, 16u}) {
        const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
        std::vector<std::uint64_t> h = random_u64(rng_, 1000);
        for (std::uint64_t& x : h) x = (x & 0xFFFFFFFFu) | ((x >> 32) % kReal << 32);
        for (std::uint64_t x : h) ASSERT_LT(layout::block_index(x, kBlocks), kReal);
        const std::size_t words = kReal * layout::block_words(layout);
        std::vector<std::uint32_t> want(words), got(words);
        const BloomRef want_ref{want.data(), kBlocks, kk, layout};
        const BloomRef got_ref{got.data(), kBlocks, kk, layout};
        scalar_kernels().bloom_add(want_ref, h.data(), h.size() / 2, {});
        t->kernels->bloom_add(got_ref, h.data(), h.size() / 2, {.ahead = h.size() - h.size() / 2});
        ASSERT_EQ(want, got) << "add, k " << kk;
        std::vector<std::uint8_t> out_want(h.size()), out_got(h.size());
        ASSERT_EQ(scalar_kernels().bloom_contains(want_ref, h.data(), h.size(), {}, out_want.data()),
                  t->kernels->bloom_contains(got_ref, h.data(), h.size(), {}, out_got.data()));
        ASSERT_EQ(out_want, out_got) << "contains, k " << kk;
      }
    }
  }
}

TEST_F(SimdKernels, HllMatchesScalar) {
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (std::uint32_t p = layout::kHllMinPrecision; p <= layout::kHllMaxPrecision; ++p) {
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{33},
                            std::size_t{70}, std::size_t{100000}}) {
        std::vector<std::uint64_t> h = random_u64(rng_, n + 1);
        // Hashes with many zero bits above the index reach the high ranks,
        // up to the sentinel's 65 - p.
        for (std::size_t i = 0; i < n; i += 5) h[i] &= ~std::uint64_t{0} >> (rng_() % 64);
        if (n > 0) h[n / 2] = 0;
        const std::size_t off = p % 2;
        std::vector<std::uint8_t> want(std::size_t{1} << p), got(want.size());
        scalar_kernels().hll_add(want.data(), p, h.data() + off, n, 0);
        t->kernels->hll_add(got.data(), p, h.data() + off, n, 0);
        ASSERT_EQ(want, got) << "p " << p << " n " << n;
        // More passes over warm registers, told their true floor (the smallest
        // register): the same keys again (no register rises), then fresh keys
        // (registers at the floor rise to floor + 1 and beyond).
        const std::uint8_t floor = *std::min_element(got.begin(), got.end());
        scalar_kernels().hll_add(want.data(), p, h.data(), n, floor);
        t->kernels->hll_add(got.data(), p, h.data(), n, floor);
        ASSERT_EQ(want, got) << "p " << p << " n " << n << " (second pass)";
        const std::vector<std::uint64_t> fresh = random_u64(rng_, n);
        scalar_kernels().hll_add(want.data(), p, fresh.data(), n, floor);
        t->kernels->hll_add(got.data(), p, fresh.data(), n, floor);
        ASSERT_EQ(want, got) << "p " << p << " n " << n << " floor " << int(floor) << " (fresh keys)";
        // Then keys that all pass the floor's screen (each rank exceeds the
        // floor), so that whole vectors of them do, at every floor reached.
        const std::uint8_t floor2 = *std::min_element(got.begin(), got.end());
        std::vector<std::uint64_t> passing = random_u64(rng_, n);
        if (floor2 > 0) {
          for (std::uint64_t& x : passing) x &= ~layout::hll_floor_screen(p, floor2);
        }
        scalar_kernels().hll_add(want.data(), p, passing.data(), n, floor2);
        t->kernels->hll_add(got.data(), p, passing.data(), n, floor2);
        ASSERT_EQ(want, got) << "p " << p << " n " << n << " floor " << int(floor2) << " (passing keys)";
      }
    }
  }
}

// hash_screened keeps exactly the hashes with every screen bit clear, in key
// order, and writes nothing past count. Screens: none (all pass), the HLL
// floor screens at p = 14 (about 1 in 2^floor passes), and every bit (only a
// zero hash would pass). Fixed-width keys go through the pipeline (fill,
// drain and tail: lengths 0..70), strings through hashing then packing.
TEST_F(SimdKernels, HashScreenedKeepsExactlyThePassingHashes) {
  const HashSpec specs[] = {HashSpec{}, HashSpec::redis(), {HashKind::Xxh64, 0x5eed}};
  std::vector<std::uint64_t> screens = {0, ~std::uint64_t{0}};
  for (std::uint32_t floor : {1u, 2u, 4u, 7u, 51u}) screens.push_back(layout::hll_floor_screen(14, floor));
  std::vector<StringColumn> strings;
  strings.emplace_back(rng_, 1000, 16, 0, StringColumn::Fixed::All);
  strings.emplace_back(rng_, 1000, 40, 3);
  [[maybe_unused]] bool any = false;
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    const bool measured = t->bit == HWY_AVX3 || t->bit == HWY_AVX3_DL || t->bit == HWY_AVX2;
    // Present exactly where it pays (hash_keys-inl.h): a target that loses it, or
    // gains one that is never measured, fails here.
    ASSERT_EQ(t->kernels->hash_screened != nullptr, measured);
    if (t->kernels->hash_screened == nullptr) continue;
    any = true;
    const auto check = [&](const KeyBatch& kb, std::size_t begin, std::size_t count) {
      for (const HashSpec& spec : specs) {
        std::vector<std::uint64_t> all(count);
        scalar_kernels().hash(kb, begin, count, spec, all.data());
        for (std::uint64_t screen : screens) {
          std::vector<std::uint64_t> want;
          for (std::uint64_t h : all) {
            if ((h & screen) == 0) want.push_back(h);
          }
          constexpr std::uint64_t kGuard = 0xdeadbeefcafef00dULL;
          std::vector<std::uint64_t> got(count + 8, kGuard);
          const std::size_t m = t->kernels->hash_screened(kb, begin, count, spec, screen, got.data());
          ASSERT_EQ(m, want.size()) << "kind " << int(kb.kind) << " count " << count << " screen " << screen;
          ASSERT_EQ(want, std::vector<std::uint64_t>(got.begin(), got.begin() + static_cast<long>(m)))
              << "kind " << int(kb.kind) << " count " << count << " screen " << screen;
          for (std::size_t i = count; i < got.size(); ++i) ASSERT_EQ(got[i], kGuard) << "wrote past count";
        }
      }
    };
    for (std::size_t n : lengths()) {
      const std::vector<std::uint64_t> src = random_u64(rng_, n + 3);
      for (KeyKind kind : {KeyKind::U64, KeyKind::U32}) {
        KeyBatch kb;
        kb.kind = kind;
        kb.n = n + 3;
        kb.keys = src.data();
        check(kb, n % 3, n);
      }
    }
    for (const StringColumn& col : strings) {
      for (KeyKind kind : {KeyKind::Offsets32, KeyKind::Offsets64}) {
        const KeyBatch kb = col.batch(kind);
        check(kb, 0, kb.n);
        // 16-byte strings: the pipeline's fill and drain (1 to 8 vectors) and
        // its tail.
        for (std::size_t count : {7, 8, 13, 40, 41, 67}) check(kb, 5, count);
      }
    }
  }
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL | HWY_AVX2)) {
    EXPECT_TRUE(any) << "no AVX2 or AVX-512 target was tested";
  }
#endif
  EXPECT_EQ(scalar_kernels().hash_screened, nullptr) << "the reference hashes, then screens in hll_add";
}

// The key batches bloom_contains_keys is tried on: u64 and u32 keys, and
// strings (both offset widths) all 16 bytes long or mostly 16 (some shorter).
// width16: all 16 bytes, which AVX-512 hashes and tests in one loop (other
// strings it hashes, then tests, in the same call).
struct ContainsKeys {
  KeyKind kind;
  bool width16;
};
constexpr ContainsKeys kContainsKeys[] = {{KeyKind::U64, false},
                                          {KeyKind::U32, false},
                                          {KeyKind::Offsets32, true},
                                          {KeyKind::Offsets64, true},
                                          {KeyKind::Offsets64, false}};

// bloom_contains_keys answers as `hash` then `bloom_contains` do: key counts
// 0..13 and 70 (the pipeline's fill, drain and tail; for k = 1, 6, 8, 9, 16 at
// 1000 blocks, every count of lengths()), both hashes and a seed, with out
// and without, adding to *hits, writing nothing past count, and taking
// nothing from what the scratch held before. Where it declines (u32 keys;
// strings but on AVX-512; u64 keys into parquet_sbbf on AVX-512; a filter of
// either layout large enough to prefetch for) it returns false and touches
// nothing. Present exactly where it was measured to pay (bloom_contains_avx2-inl.h, bloom_contains_avx512-inl.h).
TEST_F(SimdKernels, BloomContainsKeysMatchesHashThenContains) {
  const HashSpec specs[] = {HashSpec{}, HashSpec::redis(), {HashKind::Xxh64, 0x5eed}};
  // 2^14 blocks: 1 MiB of cacheline512, the first size the kernels prefetch for.
  const std::uint64_t block_counts[] = {1, 1000, std::uint64_t{1} << 14};
  constexpr std::uint8_t kUntouched = 0xA5;
  constexpr std::uint64_t kHitsBefore = 7;
  [[maybe_unused]] bool any = false;
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    ASSERT_EQ(t->kernels->bloom_contains_keys != nullptr, (t->bit & (HWY_AVX2 | HWY_AVX3 | HWY_AVX3_DL)) != 0);
    if (t->kernels->bloom_contains_keys == nullptr) continue;
    const bool avx512 = (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
    any = true;
    for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
      for (std::uint64_t nb : block_counts) {
        for (std::uint32_t k = 1; k <= layout::kMaxCachelineK; ++k) {
          const std::uint32_t kk = layout == BloomLayout::Cacheline512 ? k : layout::kSbbfK;
          if (layout == BloomLayout::ParquetSbbf && k != 1) continue;
          const bool every_length = nb == 1000 && (kk == 1 || kk == 6 || kk == 8 || kk == 9 || kk == 16);
          Filter f(nb, kk, layout);
          const std::size_t bytes = nb * layout::block_bytes(layout);
          const bool handles = bytes < (std::size_t{1} << 20);  // either layout
          for (ContainsKeys keys : kContainsKeys) {
            const KeyKind kind = keys.kind;
            const bool is_u = kind == KeyKind::U64 || kind == KeyKind::U32;
            // AVX-512 hashes, then tests u64 keys into parquet_sbbf (bloom_contains_avx512-inl.h).
            const bool taken =
                (kind == KeyKind::U64 && !(avx512 && layout == BloomLayout::ParquetSbbf)) || (!is_u && avx512);
            for (const HashSpec& spec : specs) {
              for (std::size_t n : lengths()) {
                if (!every_length && n > 13 && n != 70) continue;
                // Long string batches where they are taken, at one k of each AVX-512 test.
                if (!is_u && n > 70 && !(avx512 && (kk == 6 || kk == 9 || layout == BloomLayout::ParquetSbbf)))
                  continue;
                std::vector<std::uint64_t> src;
                std::optional<StringColumn> strings;
                KeyBatch kb;
                if (is_u) {
                  src = random_u64(rng_, n + 3);
                  kb.kind = kind;
                  kb.n = n + 3;
                  kb.keys = src.data();
                } else {
                  strings.emplace(rng_, n + 3, 16, n % 5,
                                  keys.width16 ? StringColumn::Fixed::All : StringColumn::Fixed::Mostly);
                  kb = strings->batch(kind);
                }
                const std::size_t begin = n % 3;
                std::vector<std::uint64_t> h(n);
                scalar_kernels().hash(kb, begin, n, spec, h.data());
                std::fill(f.words.begin(), f.words.end(), 0u);
                scalar_kernels().bloom_add(f.ref, h.data(), n / 2, {});  // about half the keys answer yes
                std::vector<std::uint8_t> want(n);
                const std::uint64_t hits_want = scalar_kernels().bloom_contains(f.ref, h.data(), n, {}, want.data());
                // Random scratch: a hash read before it is computed reads garbage.
                std::vector<std::uint64_t> scratch = random_u64(rng_, n + 8);
                const std::vector<std::uint64_t> scratch_before = scratch;
                std::vector<std::uint8_t> got(n + 8, kUntouched);
                std::uint64_t hits = kHitsBefore;
                const bool done =
                    t->kernels->bloom_contains_keys(f.ref, kb, begin, n, spec, scratch.data(), got.data(), &hits);
                ASSERT_EQ(done, handles && taken)
                    << "layout " << int(layout) << " nb " << nb << " k " << kk << " kind " << int(kind);
                if (!done) {
                  ASSERT_EQ(hits, kHitsBefore);
                  for (std::uint8_t b : got) ASSERT_EQ(b, kUntouched) << "wrote out while declining";
                  ASSERT_EQ(scratch, scratch_before) << "wrote scratch while declining";
                  continue;
                }
                ASSERT_EQ(hits - kHitsBefore, hits_want) << "nb " << nb << " k " << kk << " n " << n;
                ASSERT_EQ(want, std::vector<std::uint8_t>(got.begin(), got.begin() + static_cast<long>(n)))
                    << "nb " << nb << " k " << kk << " n " << n;
                for (std::size_t i = n; i < got.size(); ++i) ASSERT_EQ(got[i], kUntouched) << "wrote past count";
                hits = 0;
                scratch = random_u64(rng_, n + 8);
                ASSERT_TRUE(t->kernels->bloom_contains_keys(f.ref, kb, begin, n, spec, scratch.data(), nullptr, &hits));
                ASSERT_EQ(hits, hits_want) << "without out: nb " << nb << " k " << kk << " n " << n;
              }
            }
          }
        }
      }
    }
  }
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX2 | HWY_AVX3 | HWY_AVX3_DL)) {
    EXPECT_TRUE(any) << "no AVX2 or AVX-512 target was tested";
  }
#endif
  EXPECT_EQ(scalar_kernels().bloom_contains_keys, nullptr) << "the reference hashes, then tests";
}

// Pre-hashed keys and strings: bloom_contains_keys declines them, even for a
// filter it would take u64 keys for, and touches nothing.
TEST_F(SimdKernels, BloomContainsKeysDeclinesOtherKeyKinds) {
  Filter f(4096, 6, BloomLayout::Cacheline512);  // 256 KiB, k = 6
  const std::vector<std::uint64_t> hashes = random_u64(rng_, 100);
  const StringColumn strings(rng_, 100, 16, 0, StringColumn::Fixed::All);
  std::vector<KeyBatch> batches = {strings.batch(KeyKind::Offsets32), strings.batch(KeyKind::Offsets64)};
  KeyBatch prehashed;
  prehashed.kind = KeyKind::Prehashed;
  prehashed.n = hashes.size();
  prehashed.keys = hashes.data();
  batches.push_back(prehashed);
  for (const SimdTarget* t : targets_) {
    if (t->kernels->bloom_contains_keys == nullptr) continue;
    SCOPED_TRACE(t->name);
    const bool avx512 = (t->bit & (HWY_AVX3 | HWY_AVX3_DL)) != 0;
    for (const KeyBatch& kb : batches) {
      if (avx512 && kb.kind != KeyKind::Prehashed) continue;  // taken: BloomContainsKeysMatchesHashThenContains
      std::vector<std::uint64_t> scratch(100, 42);
      std::vector<std::uint8_t> out(100, 0xA5);
      std::uint64_t hits = 7;
      ASSERT_FALSE(t->kernels->bloom_contains_keys(f.ref, kb, 0, 100, HashSpec{}, scratch.data(), out.data(), &hits))
          << "kind " << int(kb.kind);
      ASSERT_EQ(hits, 7u);
      ASSERT_EQ(scratch, std::vector<std::uint64_t>(100, 42));
      ASSERT_EQ(out, std::vector<std::uint8_t>(100, 0xA5));
    }
  }
}

// partition_hashes, every target and the scalar reference against the
// definition: the hashes below the split in their order, then the others in
// theirs, and nothing written past n. Splits: none below (0), all below
// (2^32), the middle, and random; lengths 0..70 and 10^5, input misaligned
// by one element; and hashes whose upper halves sit at the split and next to it.
TEST_F(SimdKernels, PartitionHashesIsStable) {
  std::vector<std::pair<const char*, const CpuKernels*>> kernels = {{"scalar", &scalar_kernels()}};
  for (const SimdTarget* t : targets_) {
    // Present exactly where it pays (partition-inl.h): a target that loses it, or gains one never measured, fails.
    ASSERT_EQ(t->kernels->partition_hashes != nullptr, t->bit == HWY_AVX3 || t->bit == HWY_AVX3_DL) << t->name;
    if (t->kernels->partition_hashes != nullptr) kernels.push_back({t->name, t->kernels});
  }
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL)) {
    EXPECT_GT(kernels.size(), 1u) << "no AVX-512 target was tested";
  }
#endif
  constexpr std::uint64_t kGuard = 0xdeadbeefcafef00dULL;
  for (std::size_t n : lengths()) {
    Misaligned<std::uint64_t> in(n, 1);
    for (std::size_t i = 0; i < n; ++i) in.data()[i] = rng_();
    const std::uint64_t middle = std::uint64_t{1} << 31;
    std::vector<std::uint64_t> splits = {0, std::uint64_t{1} << 32, middle, rng_() >> 32};
    if (n >= 3) {
      // At the split, one below and one above it.
      for (std::size_t j = 0; j < 3; ++j) in.data()[rng_() % n] = ((middle - 1 + j) << 32) | (rng_() >> 32);
    }
    for (std::uint64_t split : splits) {
      std::vector<std::uint64_t> want_below, want_above;
      for (std::size_t i = 0; i < n; ++i)
        ((in.data()[i] >> 32) < split ? want_below : want_above).push_back(in.data()[i]);
      for (const auto& [name, k] : kernels) {
        std::vector<std::uint64_t> below(n + 8, kGuard), above(n + 8, kGuard);
        const std::size_t m = k->partition_hashes(in.data(), n, split, below.data(), above.data());
        ASSERT_EQ(m, want_above.size()) << name << " n " << n << " split " << split;
        EXPECT_TRUE(std::equal(want_above.begin(), want_above.end(), above.begin()))
            << name << " n " << n << " split " << split;
        EXPECT_TRUE(std::equal(want_below.begin(), want_below.end(), below.begin()))
            << name << " n " << n << " split " << split;
        for (std::size_t i = n; i < n + 8; ++i) {
          ASSERT_EQ(below[i], kGuard) << name << " wrote below past n " << n;
          ASSERT_EQ(above[i], kGuard) << name << " wrote above past n " << n;
        }
      }
    }
  }
}

// The string batch's offsets check: what kernels.hpp says it returns.
template <class Offset>
bool offsets_in_order_oracle(const Offset* off, std::size_t count, Offset limit) {
  for (std::size_t i = 0; i < count; ++i) {
    if (off[i] > limit || (i > 0 && off[i] < off[i - 1])) return false;
  }
  return true;
}

// Every target and the scalar reference against the oracle: non-decreasing
// columns of every length to 70 and one of 10^5 (misaligned by one element),
// each also broken at chosen places by a step down, a value past the limit and
// the type's extremes.
template <class Offset>
void check_offsets_in_order(const std::vector<const SimdTarget*>& targets, std::mt19937_64& rng) {
  constexpr bool kWide = sizeof(Offset) == 8;
  constexpr Offset kMax = std::numeric_limits<Offset>::max();
  constexpr Offset kMin = std::numeric_limits<Offset>::min();
  for (std::size_t count : lengths()) {
    for (bool near_max : {false, true}) {
      Misaligned<Offset> buf(count, 1);
      Offset* off = buf.data();
      // Steps of 0 to 4 from 0, or ending exactly at the type's maximum.
      Offset at = 0;
      for (std::size_t i = 0; i < count; ++i) off[i] = at += static_cast<Offset>(rng() % 5);
      if (near_max && count > 0) {
        const Offset shift = kMax - off[count - 1];
        for (std::size_t i = 0; i < count; ++i) off[i] += shift;
      }
      const Offset limit = count == 0 || near_max ? kMax : off[count - 1] + static_cast<Offset>(rng() % 3);
      std::vector<std::size_t> places;
      if (count <= 70) {
        for (std::size_t j = 0; j < count; ++j) places.push_back(j);
      } else {
        places = {0, 1, 2, count / 2, count - 2, count - 1};
        for (int r = 0; r < 20; ++r) places.push_back(rng() % count);
      }
      auto expect_all_agree = [&](const char* what, std::size_t place) {
        const bool want = offsets_in_order_oracle(off, count, limit);
        ASSERT_EQ(want, scalar_kernels().offsets_in_order(off, kWide, count, limit))
            << "scalar, " << what << " at " << place << " of " << count;
        for (const SimdTarget* t : targets) {
          ASSERT_EQ(want, t->kernels->offsets_in_order(off, kWide, count, limit))
              << t->name << ", " << what << " at " << place << " of " << count;
        }
      };
      expect_all_agree("nothing", 0);
      ASSERT_TRUE(offsets_in_order_oracle(off, count, limit));
      for (std::size_t j : places) {
        const Offset saved = off[j];
        std::vector<std::pair<const char*, Offset>> breaks = {{"minimum", kMin}, {"maximum", kMax}};
        if (limit < kMax) breaks.push_back({"past the limit", static_cast<Offset>(limit + 1)});
        if (j > 0) breaks.push_back({"step down", static_cast<Offset>(off[j - 1] - 1)});
        for (const auto& [what, value] : breaks) {
          off[j] = value;
          expect_all_agree(what, j);
        }
        off[j] = saved;
      }
    }
  }
}

TEST_F(SimdKernels, OffsetsCheckMatchesScalar) {
  check_offsets_in_order<std::int32_t>(targets_, rng_);
  check_offsets_in_order<std::int64_t>(targets_, rng_);
}

// Floors at the top ranks: every register at 64 - p or at the sentinel's
// 65 - p, told so, and keys whose bits above the index are all zero (rank
// 65 - p) or nearly so among random ones. Only the first raises registers.
TEST_F(SimdKernels, HllFloorAtTheTopRanks) {
  for (const SimdTarget* t : targets_) {
    SCOPED_TRACE(t->name);
    for (std::uint32_t p = layout::kHllMinPrecision; p <= layout::kHllMaxPrecision; ++p) {
      std::vector<std::uint64_t> h = random_u64(rng_, 1000);
      for (std::size_t i = 0; i < h.size(); i += 3) h[i] &= (std::uint64_t{1} << p) - 1;  // rank 65 - p
      for (std::size_t i = 1; i < h.size(); i += 7) h[i] &= (std::uint64_t{3} << 62) | ((std::uint64_t{1} << p) - 1);
      for (std::uint32_t top : {64 - p, 65 - p}) {
        std::vector<std::uint8_t> want(std::size_t{1} << p, static_cast<std::uint8_t>(top)), got(want);
        const auto floor = static_cast<std::uint8_t>(top);
        scalar_kernels().hll_add(want.data(), p, h.data(), h.size(), floor);
        t->kernels->hll_add(got.data(), p, h.data(), h.size(), floor);
        ASSERT_EQ(want, got) << "p " << p << " floor " << top;
        if (top == 64 - p) {
          EXPECT_NE(std::count(want.begin(), want.end(), 65 - p), 0) << "no key reached the top rank";
        }
      }
    }
  }
}

// Bytes that end exactly where an unmapped page begins: a kernel that reads
// one byte past them faults.
class GuardedBytes {
 public:
  explicit GuardedBytes(std::span<const std::uint8_t> bytes) {
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    span_ = (bytes.size() + page - 1) / page * page;
    void* p =
        mmap(nullptr, span_ + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<std::uint8_t*>(p);
    if (mprotect(base_ + span_, page, PROT_NONE) != 0) throw std::runtime_error("mprotect failed");
    data_ = base_ + span_ - bytes.size();
    if (!bytes.empty()) std::memcpy(data_, bytes.data(), bytes.size());  // data() may be null
    page_ = page;
  }
  ~GuardedBytes() { munmap(base_, span_ + page_); }
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;
  const std::uint8_t* data() const { return data_; }

 private:
  std::uint8_t* base_ = nullptr;
  std::uint8_t* data_ = nullptr;
  std::size_t span_ = 0, page_ = 0;
};

TEST_F(SimdKernels, HashStringsReadNothingPastTheData) {
  using Fixed = StringColumn::Fixed;
  for (std::size_t max_len : {1, 7, 8, 9, 16, 31}) {
    for (std::size_t n : {1, 7, 8, 9, 64}) {
      for (Fixed fixed : {Fixed::No, Fixed::Mostly, Fixed::All}) {
        // 8- and 16-byte keys take the fixed-width paths, the others none.
        if ((fixed != Fixed::No) != (max_len == 8 || max_len == 16)) continue;
        const StringColumn col(rng_, n, max_len, 0, fixed);
        const GuardedBytes guarded(col.data);
        KeyBatch kb = col.batch(KeyKind::Offsets32);
        kb.data = guarded.data();
        for (const SimdTarget* t : targets_) {
          for (const HashSpec& spec : {HashSpec{}, HashSpec::redis()}) {
            std::vector<std::uint64_t> want(n), got(n);
            scalar_kernels().hash(kb, 0, n, spec, want.data());
            t->kernels->hash(kb, 0, n, spec, got.data());
            ASSERT_EQ(want, got) << t->name << " strings " << n << " bytes " << col.data.size();
          }
        }
      }
    }
  }
}

// u64 and u32 keys that end where a page ends: every count up to 70 (whole
// pipeline steps and their tails) hashed without reading past the last key.
TEST_F(SimdKernels, HashFixedWidthKeysReadNothingPastTheKeys) {
  for (KeyKind kind : {KeyKind::U64, KeyKind::U32}) {
    const std::size_t width = kind == KeyKind::U64 ? 8 : 4;
    for (std::size_t n = 0; n <= 70; ++n) {
      const std::vector<std::uint64_t> src = random_u64(rng_, n);
      const std::span<const std::uint8_t> bytes(reinterpret_cast<const std::uint8_t*>(src.data()),
                                                n * width);
      const GuardedBytes guarded(bytes);
      KeyBatch kb;
      kb.kind = kind;
      kb.n = n;
      kb.keys = src.data();
      for (const HashSpec& spec : {HashSpec{}, HashSpec::redis()}) {
        std::vector<std::uint64_t> want(n), got(n);
        scalar_kernels().hash(kb, 0, n, spec, want.data());
        KeyBatch at_end = kb;
        at_end.keys = guarded.data();
        for (const SimdTarget* t : targets_) {
          t->kernels->hash(at_end, 0, n, spec, got.data());
          ASSERT_EQ(want, got) << t->name << " kind " << int(kind) << " n " << n;
        }
      }
    }
  }
}

}  // namespace
}  // namespace probkit::detail
