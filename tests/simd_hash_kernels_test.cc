// Each SIMD target's hashing kernels against the scalar reference: fixed-width
// keys, string batches (every length, offset width and window), the screened
// hashes HLL keeps, the string offsets check, and no read past the keys.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

#include "probkit/detail/kernels.hpp"
#include "probkit/layout/hash.hpp"
#include "probkit/layout/hll.hpp"
#include "simd_kernels.hpp"

namespace probkit::detail::simd_test {
namespace {

TEST_F(SimdKernels, HashMatchesScalar) {
  const HashSpec specs[] = {{HashKind::Xxh64, 0},
                            {HashKind::Xxh64, 0x9e3779b97f4a7c15ULL},
                            {HashKind::Murmur64A, layout::kRedisHllSeed},
                            {HashKind::Murmur64A, 0},
                            {HashKind::Murmur64A, ~0ULL}};
  for_each_target_and_vendor_forms(kHashFormsTargets, [&](const SimdTarget* t) {
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
  });
}

// check(target, column, batch, spec, want) for every column, offset width
// and spec, want the reference's hashes of the whole column; the columns of
// fixed-width keys both unmarked and marked (StringColumn::batch). Stops at
// the first fatal failure. The callers run it for every target and both
// vendors' forms of the AVX2 hashing: of u64 keys, which 8-byte strings are
// hashed with, and of 16-byte strings.
template <class Check>
void for_each_string_case(const SimdTarget* t, const std::vector<StringColumn>& columns,
                          std::span<const HashSpec> specs, const Check& check) {
  SCOPED_TRACE(t->name);
  for (const StringColumn& col : columns) {
    for (KeyKind kind : {KeyKind::Offsets32, KeyKind::Offsets64}) {
      for (bool marked : {false, true}) {
        if (marked && col.fixed_width() == 0) continue;
        SCOPED_TRACE(marked ? "marked fixed width" : "unmarked");
        const KeyBatch kb = col.batch(kind, marked);
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

// Strings are hashed in vector lanes whose reads (32-byte windows) must stay
// inside the data: every length 0..600 (short ones in every lane position,
// long ones mixed in), data of 0..20 bytes, every start and count of a
// sub-batch. Groups of strings up to 31 bytes take the short form, up to 511
// (AVX2: 127) the long one (XXH64's stripes), and groups with a longer
// string, or with a window past the data's end, the scalar loop whole:
// lengths up to 40, 63, 64, 100, 127, 128, 255, 256 and 511 give groups of
// the long form with one to fifteen stripes and every tail, and mixed ones
// (all of them on AVX2 past 128), 512 and 600 mixed groups, and a column of
// lengths at the bounds both.
TEST_F(SimdKernels, HashStringsMatchScalar) {
  const HashSpec specs[] = {HashSpec{},
                            HashSpec::redis(),
                            {HashKind::Xxh64, 0x9e3779b97f4a7c15ULL},
                            {HashKind::Murmur64A, 0}};
  std::vector<StringColumn> columns;
  for (std::size_t max_len : {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 40, 63, 64, 100, 127, 128, 255, 256, 511, 512, 600}) {
    columns.emplace_back(rng_, 203, max_len, max_len % 5);
  }
  // Lengths at the forms' bounds: 512 beside shorter strings, 511, 128, 127,
  // 31 and 32, and whole stripes and one byte either side.
  columns.emplace_back(rng_, std::vector<std::size_t>{512, 40, 3, 100, 511, 31, 32, 64, 33, 511, 0, 7, 96, 97, 128, 200,
                                                      63, 65, 95, 224, 254, 1, 17, 512, 512, 511, 256, 480, 479, 481,
                                                      127, 31, 126, 128, 127, 127, 127, 127, 32, 127, 127, 129});
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
  for_each_target_and_vendor_forms(kHashFormsTargets, [&](const SimdTarget* t) {
    for_each_string_case(t, columns, specs, check);
  });
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
  for_each_target_and_vendor_forms(kHashFormsTargets, [&](const SimdTarget* t) {
    for_each_string_case(t, columns, specs, check);
  });
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
  strings.emplace_back(rng_, 1000, 8, 1, StringColumn::Fixed::All);
  strings.emplace_back(rng_, 1000, 40, 3);
  [[maybe_unused]] bool any = false;
  for_each_target_and_vendor_forms(kHashFormsTargets, [&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
    const bool measured = t->bit == HWY_AVX3 || t->bit == HWY_AVX3_DL || t->bit == HWY_AVX2;
    // Present exactly where it pays (hash_keys-inl.h): a target that loses it, or
    // gains one that is never measured, fails here.
    ASSERT_EQ(t->kernels->hash_screened != nullptr, measured);
    if (t->kernels->hash_screened == nullptr) return;
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
        for (bool marked : {false, true}) {
          SCOPED_TRACE(marked ? "marked fixed width" : "unmarked");
          const KeyBatch kb = col.batch(kind, marked);
          check(kb, 0, kb.n);
          // Fixed-width strings: the pipelines' fill and drain (1 to 8
          // vectors) and their tails.
          for (std::size_t count : {1, 5, 6, 7, 8, 13, 40, 41, 67}) check(kb, 5, count);
        }
      }
    }
  });
#if HWY_ARCH_X86_64
  if (hwy::SupportedTargets() & (HWY_AVX3 | HWY_AVX3_DL | HWY_AVX2)) {
    EXPECT_TRUE(any) << "no AVX2 or AVX-512 target was tested";
  }
#endif
  EXPECT_EQ(scalar_kernels().hash_screened, nullptr) << "the reference hashes, then screens in hll_add";
}

std::string describe(const OffsetsCheck& c) {
  return std::string(c.in_order ? "in order" : "not in order") + ", fixed width " +
         std::to_string(c.fixed_width);
}

// Every target and the scalar reference against the oracle: non-decreasing
// columns of every length to 70 and one of 10^5 (misaligned by one element),
// of random lengths or all 0, 8 or 16 bytes long, each also broken at chosen
// places by a step down, a value past the limit, the type's extremes and one
// string one byte longer.
template <class Offset>
void check_offsets_in_order(const std::vector<const SimdTarget*>& targets, std::mt19937_64& rng) {
  constexpr bool kWide = sizeof(Offset) == 8;
  constexpr Offset kMax = std::numeric_limits<Offset>::max();
  constexpr Offset kMin = std::numeric_limits<Offset>::min();
  for (std::size_t count : lengths()) {
    for (auto [near_max, width] : {std::pair{false, -1}, {true, -1}, {false, 0}, {false, 8}, {true, 16}}) {
      Misaligned<Offset> buf(count, 1);
      Offset* off = buf.data();
      // Steps of 0 to 4 (or all `width`) from 0, or ending exactly at the
      // type's maximum.
      Offset at = 0;
      for (std::size_t i = 0; i < count; ++i) {
        off[i] = at += static_cast<Offset>(width < 0 ? static_cast<int>(rng() % 5) : width);
      }
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
        const std::string want = describe(check_offsets_oracle(off, count, limit));
        ASSERT_EQ(want, describe(scalar_kernels().check_offsets(off, kWide, count, limit)))
            << "scalar, " << what << " at " << place << " of " << count;
        for (const SimdTarget* t : targets) {
          ASSERT_EQ(want, describe(t->kernels->check_offsets(off, kWide, count, limit)))
              << t->name << ", " << what << " at " << place << " of " << count;
        }
      };
      expect_all_agree("nothing", 0);
      ASSERT_TRUE(check_offsets_oracle(off, count, limit).in_order);
      if ((width == 8 || width == 16) && count >= 2) {
        ASSERT_EQ(check_offsets_oracle(off, count, limit).fixed_width, width);
      }
      for (std::size_t j : places) {
        const Offset saved = off[j];
        std::vector<std::pair<const char*, Offset>> breaks = {{"minimum", kMin}, {"maximum", kMax}};
        if (limit < kMax) breaks.push_back({"past the limit", static_cast<Offset>(limit + 1)});
        if (j > 0) breaks.push_back({"step down", static_cast<Offset>(off[j - 1] - 1)});
        if (off[j] < kMax) breaks.push_back({"one byte more", static_cast<Offset>(off[j] + 1)});
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
  for (std::size_t max_len : {1, 7, 8, 9, 16, 31, 40, 100, 127, 255, 511}) {
    for (std::size_t n : {1, 7, 8, 9, 64}) {
      for (Fixed fixed : {Fixed::No, Fixed::Mostly, Fixed::All}) {
        // 8- and 16-byte keys take the fixed-width paths, the others none.
        if ((fixed != Fixed::No) != (max_len == 8 || max_len == 16)) continue;
        const StringColumn col(rng_, n, max_len, 0, fixed);
        const GuardedBytes guarded(col.data);
        for (bool marked : {false, true}) {
          KeyBatch kb = col.batch(KeyKind::Offsets32, marked);
          kb.data = guarded.data();
          for_each_target_and_vendor_forms(kHashFormsTargets, [&](const SimdTarget* t) {
            for (const HashSpec& spec : {HashSpec{}, HashSpec::redis()}) {
              std::vector<std::uint64_t> want(n), got(n);
              scalar_kernels().hash(kb, 0, n, spec, want.data());
              t->kernels->hash(kb, 0, n, spec, got.data());
              ASSERT_EQ(want, got) << t->name << " strings " << n << " bytes " << col.data.size()
                                   << " marked " << marked;
            }
          });
          if (HasFatalFailure()) return;
        }
      }
    }
  }
}

// u64 and u32 keys that end where a page ends: every count up to 70 (whole
// pipeline steps and their tails) hashed without reading past the last key.
TEST_F(SimdKernels, HashFixedWidthKeysReadNothingPastTheKeys) {
  for_each_target_and_vendor_forms(kHashFormsTargets, [&](const SimdTarget* t) {
    SCOPED_TRACE(t->name);
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
          t->kernels->hash(at_end, 0, n, spec, got.data());
          ASSERT_EQ(want, got) << "kind " << int(kind) << " n " << n;
        }
      }
    }
  });
}

}  // namespace
}  // namespace probkit::detail::simd_test
