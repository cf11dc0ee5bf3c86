// probkit's hashes against independent oracles (DESIGN.md §2): XXH64 against
// libxxhash's XXH64(), MurmurHash64A against a straightforward transcription
// of Appleby's algorithm written here (and against a real Redis in
// redis_hll_test.cc) — for single keys, and through every backend's bulk path.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <string>
#include <vector>

#include "backend_matrix.hpp"
#include "key_columns.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/probkit.hpp"

namespace probkit::test {
namespace {

// MurmurHash64A as Appleby published it (MurmurHash2.cpp): 8-byte blocks
// read in machine (little-endian) order, then the 1..7 tail bytes folded in by
// a falling-through switch, then the final mix.
std::uint64_t murmur64a_oracle(const void* key, std::size_t len, std::uint64_t seed) {
  const std::uint64_t m = 0xc6a4a7935bd1e995ULL;
  const int r = 47;
  std::uint64_t h = seed ^ (len * m);
  const auto* data = static_cast<const unsigned char*>(key);
  const unsigned char* end = data + (len / 8) * 8;
  while (data != end) {
    std::uint64_t k;
    std::memcpy(&k, data, 8);
    data += 8;
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7: h ^= std::uint64_t(data[6]) << 48; [[fallthrough]];
    case 6: h ^= std::uint64_t(data[5]) << 40; [[fallthrough]];
    case 5: h ^= std::uint64_t(data[4]) << 32; [[fallthrough]];
    case 4: h ^= std::uint64_t(data[3]) << 24; [[fallthrough]];
    case 3: h ^= std::uint64_t(data[2]) << 16; [[fallthrough]];
    case 2: h ^= std::uint64_t(data[1]) << 8; [[fallthrough]];
    case 1:
      h ^= std::uint64_t(data[0]);
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

std::uint64_t oracle(HashSpec spec, const void* p, std::size_t len) {
  return spec.kind == HashKind::Xxh64 ? XXH64(p, len, spec.seed) : murmur64a_oracle(p, len, spec.seed);
}

const std::uint64_t kSeeds[] = {0, 1, 0x9E3779B97F4A7C15ULL, ~0ULL, 0xadc83b19ULL};

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(splitmix64(seed + i / 8) >> (8 * (i % 8)));
  return b;
}

TEST(Hash, Xxh64MatchesLibxxhashForEveryLength0To256) {
  // 8 extra bytes so that every length also starts at every misalignment.
  const std::vector<std::uint8_t> buf = random_bytes(256 + 8, 42);
  for (std::uint64_t seed : kSeeds) {
    for (std::size_t len = 0; len <= 256; ++len) {
      const std::size_t at = len % 8;
      const std::string_view s(reinterpret_cast<const char*>(buf.data() + at), len);
      ASSERT_EQ(hash(s, HashSpec{HashKind::Xxh64, seed}), XXH64(s.data(), len, seed))
          << "len " << len << " seed " << seed;
    }
  }
}

TEST(Hash, Murmur64AMatchesTheOracleForEveryLength0To256) {
  const std::vector<std::uint8_t> buf = random_bytes(256 + 8, 43);
  for (std::uint64_t seed : kSeeds) {
    for (std::size_t len = 0; len <= 256; ++len) {
      const std::size_t at = (len + 3) % 8;
      const std::string_view s(reinterpret_cast<const char*>(buf.data() + at), len);
      ASSERT_EQ(hash(s, HashSpec{HashKind::Murmur64A, seed}), murmur64a_oracle(s.data(), len, seed))
          << "len " << len << " seed " << seed;
    }
  }
}

// The oracle itself must not be a copy of what it checks: pin a few values
// that the independent Python implementation (tests/golden/make_golden.py)
// prints as well (golden_test.cc compares all of them).
TEST(Hash, OracleSanity) {
  EXPECT_EQ(XXH64("", 0, 0), 0xEF46DB3751D8E999ULL);  // the published empty-input value
  EXPECT_NE(murmur64a_oracle("a", 1, 0), murmur64a_oracle("b", 1, 0));
}

TEST(Hash, FixedWidthKeysHashAsTheirLittleEndianBytes) {
  for (HashSpec spec : {HashSpec{HashKind::Xxh64, 0}, HashSpec{HashKind::Xxh64, 7}, HashSpec::redis(),
                        HashSpec{HashKind::Murmur64A, 0}}) {
    for (std::uint64_t i = 0; i < 20000; ++i) {
      const std::uint64_t v = i < 100 ? i : splitmix64(i);
      std::uint8_t le8[8], le4[4];
      for (int b = 0; b < 8; ++b) le8[b] = static_cast<std::uint8_t>(v >> (8 * b));
      for (int b = 0; b < 4; ++b) le4[b] = static_cast<std::uint8_t>(v >> (8 * b));
      ASSERT_EQ(hash(v, spec), oracle(spec, le8, 8)) << v;
      ASSERT_EQ(hash(static_cast<std::uint32_t>(v), spec), oracle(spec, le4, 4)) << v;
    }
  }
}

// The CPU kernels of a configuration, for a direct call of their hash step.
const detail::CpuKernels* kernels_of(const BackendConfig& cfg) {
  if (cfg.backend == Backend::Scalar) return &detail::scalar_kernels();
  const detail::SimdTarget* targets = nullptr;
  const std::size_t n = detail::compiled_simd_targets(&targets);
  for (std::size_t i = 0; i < n; ++i) {
    if (cfg.target == targets[i].name) return targets[i].kernels;
  }
  return nullptr;
}

class BulkHash : public ::testing::TestWithParam<BackendConfig> {};

// Every key of every kind, hashed by the configuration's kernel, equals the
// oracle's hash of the key's bytes: strings of every length 0..256.
TEST_P(BulkHash, KernelHashEqualsOracle) {
  const BackendConfig& cfg = GetParam();
  if (cfg.device) GTEST_SKIP() << "device kernels are checked through the bulk path";
  const detail::CpuKernels* k = kernels_of(cfg);
  ASSERT_NE(k, nullptr) << cfg.target;
  const InputCase c{"lengths", 257 * 3, 5, 0, 256, true};
  const std::vector<std::uint64_t> values = make_values(c, 9);
  for (HashSpec spec : {HashSpec{}, HashSpec{HashKind::Xxh64, 0xfeed}, HashSpec::redis()}) {
    for (KeyKind kind : kAllKeyKinds) {
      if (kind == KeyKind::Prehashed) continue;  // never hashed
      SCOPED_TRACE(std::string(key_kind_name(kind)) + (spec.kind == HashKind::Xxh64 ? " xxh64" : " murmur"));
      const KeyColumn col(kind, values, c);
      const Keys keys = col.keys();
      // Hash from several starting keys so a kernel's tail handling is hit.
      for (std::size_t begin : {std::size_t{0}, std::size_t{1}, std::size_t{13}}) {
        std::vector<std::uint64_t> out(c.n - begin + 1, 0x5555);
        k->hash(keys.batch(), begin, c.n - begin, spec, out.data());
        for (std::size_t i = begin; i < c.n; ++i) {
          const std::string_view b = col.key_bytes(i);
          ASSERT_EQ(out[i - begin], oracle(spec, b.data(), b.size())) << "key " << i << " length " << b.size();
        }
        ASSERT_EQ(out.back(), 0x5555u) << "wrote past the end";
      }
    }
  }
}

// Through the public bulk path: a sketch fed keys equals one fed the oracle's
// hashes as Prehashed. p = 18 uses 18 index bits and the rank of the rest.
TEST_P(BulkHash, BulkPathUsesTheOracleHash) {
  const BackendConfig& cfg = GetParam();
  const InputCase c{"bulk", 300000, 3, 0, 64};
  const std::vector<std::uint64_t> values = make_values(c, 10);
  for (HashSpec spec : {HashSpec{HashKind::Xxh64, 3}, HashSpec::redis()}) {
    for (KeyKind kind : {KeyKind::U32, KeyKind::U64, KeyKind::Str32, KeyKind::Views}) {
      SCOPED_TRACE(key_kind_name(kind));
      const KeyColumn col(kind, values, c);
      std::vector<std::uint64_t> hashes(c.n);
      for (std::size_t i = 0; i < c.n; ++i) {
        const std::string_view b = col.key_bytes(i);
        hashes[i] = oracle(spec, b.data(), b.size());
      }
      ScopedBackend on(cfg);
      HyperLogLog from_keys(18, spec), from_hashes(18, spec);
      place(from_keys, cfg);
      place(from_hashes, cfg);
      from_keys.add(col.keys(), cfg.backend);
      expect_served(cfg);
      from_hashes.add(Prehashed{hashes}, cfg.backend);
      EXPECT_TRUE(fetch(from_keys) == fetch(from_hashes));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, BulkHash, ::testing::ValuesIn(backend_matrix()), config_name);

}  // namespace
}  // namespace probkit::test
