// The identity contract (DESIGN.md §6): for every backend configuration of
// backend_matrix() and every key kind and input shape, filter bytes, query
// answers, HLL registers and estimates equal those of Scalar with one thread.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <bit>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend_matrix.hpp"
#include "key_columns.hpp"
#include "probkit/probkit.hpp"

namespace probkit::test {
namespace {

// Lane-1 / lane+1 sizes for every vector width, offsets 0..7, repeats, all
// string lengths 0..300, and one large batch that every thread count splits.
const std::vector<InputCase>& small_cases() {
  static const std::vector<InputCase> cases = {
      {"empty", 0, 0, 0, 300},       {"one", 1, 1, 0, 300},        {"n7", 7, 2, 0, 300},
      {"n9", 9, 3, 0, 300},          {"n15", 15, 4, 0, 300},       {"n17", 17, 5, 0, 300},
      {"n31", 31, 6, 0, 300},        {"n33", 33, 7, 0, 300},       {"n63", 63, 1, 0, 300},
      {"n65", 65, 0, 0, 300},        {"n1000", 1000, 3, 0, 40},
      {"lengths0to300", 903, 5, 0, 300, true},
      {"duplicates", 70000, 6, 100, 20},
  };
  return cases;
}
const InputCase kMillion{"million", 1000000, 1, 0, 24};

std::string trace(KeyKind kind, const InputCase& c) {
  return std::string(key_kind_name(kind)) + " / " + c.label + " (n = " + std::to_string(c.n) +
         ", offset " + std::to_string(c.offset) + ")";
}

struct BloomShape {
  BloomLayout layout;
  std::uint64_t num_blocks;
  std::uint32_t k;
  bool large;  // also gets the million-key batch
};

// nb = 1, non-powers of two, k from 1 to 16, both layouts. The two large
// shapes straddle src/bloom_filter.cc's 2 MiB private-copy limit, so the
// million-key batch with several threads takes both multi-threaded add paths
// (private copies: 1.28 MB sbbf; blocks partitioned by owner: 2.0 MiB).
const BloomShape kBloomShapes[] = {
    {BloomLayout::Cacheline512, 1, 1, false},      {BloomLayout::Cacheline512, 1, 16, false},
    {BloomLayout::Cacheline512, 3, 7, false},      {BloomLayout::Cacheline512, 1000, 6, false},
    {BloomLayout::Cacheline512, 4096, 11, false},  {BloomLayout::Cacheline512, 32771, 8, true},
    {BloomLayout::ParquetSbbf, 1, 8, false},       {BloomLayout::ParquetSbbf, 5, 8, false},
    {BloomLayout::ParquetSbbf, 40003, 8, true},
};

std::string shape_name(const BloomShape& s) {
  return std::string(s.layout == BloomLayout::Cacheline512 ? "cacheline512" : "parquet_sbbf") +
         " nb = " + std::to_string(s.num_blocks) + " k = " + std::to_string(s.k);
}

const HashSpec kHashes[] = {HashSpec{}, HashSpec{HashKind::Xxh64, 0x5eed}, HashSpec::redis()};

std::string hash_name(HashSpec h) {
  return std::string(h.kind == HashKind::Xxh64 ? "xxh64" : "murmur64a") + " seed " + std::to_string(h.seed);
}

void expect_same_bytes(std::span<const std::uint8_t> got, std::span<const std::uint8_t> want, const char* what) {
  const long long d = first_difference(got, want);
  EXPECT_EQ(d, -1) << what << " differ from the reference first at byte " << d << " (of " << want.size() << ")";
}

// What one run of a bulk call leaves to compare: its bytes (filter bytes,
// answers or registers) and a few exact values (a count; a histogram and the
// estimate's bits).
struct Outcome {
  std::vector<std::uint8_t> bytes;
  std::vector<std::uint64_t> values;
};

// The reference outcome of each input (Scalar, one thread), computed once per
// test program and shared by every backend configuration: it is most of each
// configuration's time when one process runs the whole matrix, as under qemu
// (scripts/test-arm64.sh). Only a digest of its bytes is kept; a configuration
// whose bytes differ recomputes the reference to name the first differing byte.
struct KeptReference {
  XXH128_hash_t digest;
  std::vector<std::uint64_t> values;
};

std::map<std::string, KeptReference>& kept_references() {
  static std::map<std::string, KeptReference> kept;
  return kept;
}

XXH128_hash_t digest_of(std::span<const std::uint8_t> bytes) { return XXH3_128bits(bytes.data(), bytes.size()); }

// Expects `got` to equal reference() (an Outcome), memoised under `key`, which
// must name the test, the input and every parameter the outcome depends on.
template <class Reference>
void expect_reference_outcome(const std::string& key, const Outcome& got, Reference&& reference, const char* bytes_what,
                              const char* values_what = "values") {
  std::map<std::string, KeptReference>& kept = kept_references();
  std::optional<Outcome> want;
  auto it = kept.find(key);
  if (it == kept.end()) {
    want = reference();
    it = kept.emplace(key, KeptReference{digest_of(want->bytes), want->values}).first;
  }
  EXPECT_EQ(got.values, it->second.values) << values_what << " differ from the reference";
  if (!XXH128_isEqual(digest_of(got.bytes), it->second.digest)) {
    if (!want) want = reference();
    expect_same_bytes(got.bytes, want->bytes, bytes_what);
  }
}

std::vector<std::uint8_t> bytes_of(std::span<const std::uint8_t> s) { return {s.begin(), s.end()}; }

// Calls body(kind, case, column) for every key kind and every input case;
// `large` adds the million-key batch.
template <class Body>
void for_each_input(bool large, std::uint64_t seed, Body&& body) {
  std::vector<InputCase> cases = small_cases();
  if (large) cases.push_back(kMillion);
  for (const InputCase& c : cases) {
    const std::vector<std::uint64_t> values = make_values(c, seed);
    for (KeyKind kind : kAllKeyKinds) {
      SCOPED_TRACE(trace(kind, c));
      const KeyColumn column(kind, values, c);
      body(kind, c, column);
      if (::testing::Test::HasFatalFailure()) return;
    }
  }
}

class Identity : public ::testing::TestWithParam<BackendConfig> {};

TEST_P(Identity, BloomAddGivesReferenceBytes) {
  const BackendConfig& cfg = GetParam();
  for_each_input(true, 1, [&](KeyKind kind, const InputCase& c, const KeyColumn& col) {
    for (const BloomShape& s : kBloomShapes) {
      if (c.n == kMillion.n && !s.large) continue;
      SCOPED_TRACE(shape_name(s));
      const HashSpec hash = s.layout == BloomLayout::ParquetSbbf ? HashSpec{} : HashSpec{HashKind::Xxh64, 99};
      BloomFilter got(s.num_blocks, s.k, s.layout, hash);
      {
        ScopedBackend on(cfg);
        place(got, cfg);
        got.add(col.keys(), cfg.backend);
        expect_served(cfg);
      }
      expect_reference_outcome(
          "add " + trace(kind, c) + " " + shape_name(s), Outcome{bytes_of(fetch(got).data()), {}},
          [&] {
            BloomFilter want(s.num_blocks, s.k, s.layout, hash);
            ScopedBackend ref(reference_config());
            want.add(col.keys(), Backend::Scalar);
            return Outcome{bytes_of(want.data()), {}};
          },
          "filter bytes");
    }
  });
}

TEST_P(Identity, BloomContainsAndCountGiveReferenceAnswers) {
  const BackendConfig& cfg = GetParam();
  for_each_input(true, 2, [&](KeyKind kind, const InputCase& c, const KeyColumn& queries) {
    // The filters hold every other query key (and other keys), so the answers
    // mix hits and misses unless a filter is saturated.
    std::vector<std::uint64_t> stored = make_values(c, 2);
    for (std::size_t i = 1; i < stored.size(); i += 2) stored[i] = splitmix64(stored[i] ^ 0x77);
    const KeyColumn inserted(kind, stored, c);
    for (const BloomShape& s : kBloomShapes) {
      // The scalar reference dominates the run time: one large shape suffices
      // for the million-key queries.
      if (c.n == kMillion.n && !(s.large && s.layout == BloomLayout::Cacheline512)) continue;
      SCOPED_TRACE(shape_name(s));
      const std::string input = trace(kind, c) + " " + shape_name(s);
      // The configuration builds the filter it queries; its bytes must be the
      // reference's (else the answers below could differ for that reason).
      BloomFilter filter(s.num_blocks, s.k, s.layout);
      std::vector<std::uint8_t> got(c.n, 7);
      std::uint64_t got_count = 0;
      {
        ScopedBackend on(cfg);
        place(filter, cfg);
        filter.add(inserted.keys(), cfg.backend);
        filter.contains(queries.keys(), got, cfg.backend);
        expect_served(cfg);
        got_count = filter.count(queries.keys(), cfg.backend);
        expect_served(cfg);
      }
      std::optional<BloomFilter> built_by_reference;  // by the first reference that needs it
      const auto reference_filter = [&]() -> const BloomFilter& {
        if (!built_by_reference) {
          built_by_reference.emplace(s.num_blocks, s.k, s.layout);
          built_by_reference->add(inserted.keys(), Backend::Scalar);
        }
        return *built_by_reference;
      };
      expect_reference_outcome(
          "contains: filter " + input, Outcome{bytes_of(fetch(filter).data()), {}},
          [&] {
            ScopedBackend ref(reference_config());
            return Outcome{bytes_of(reference_filter().data()), {}};
          },
          "filter bytes (built by this configuration to query)");
      expect_reference_outcome(
          "contains: answers " + input, Outcome{got, {got_count}},
          [&] {
            ScopedBackend ref(reference_config());
            Outcome want{std::vector<std::uint8_t>(c.n, 7), {0}};
            reference_filter().contains(queries.keys(), want.bytes, Backend::Scalar);
            std::size_t not_bits = 0, false_negatives = 0;
            for (std::size_t i = 0; i < c.n; ++i) {
              not_bits += want.bytes[i] > 1;
              false_negatives += i % 2 == 0 && want.bytes[i] != 1;
              want.values[0] += want.bytes[i];
            }
            EXPECT_EQ(not_bits, 0u) << "reference answers other than 0 and 1";
            EXPECT_EQ(false_negatives, 0u) << "reference false negatives";
            return want;
          },
          "contains() outputs", "count()");
    }
  });
}

TEST_P(Identity, HllAddGivesReferenceRegistersAndEstimate) {
  const BackendConfig& cfg = GetParam();
  // Registers, then the histogram and the estimate's bits.
  const auto outcome = [](const HyperLogLog& h) {
    Outcome o{bytes_of(h.registers()), {}};
    for (std::uint32_t x : h.histogram()) o.values.push_back(x);
    o.values.push_back(std::bit_cast<std::uint64_t>(h.estimate()));
    return o;
  };
  for_each_input(true, 3, [&](KeyKind kind, const InputCase& c, const KeyColumn& col) {
    for (std::uint32_t p : {4u, 14u, 18u}) {
      for (HashSpec hash : kHashes) {
        // The large batch once per p: enough to fill every register at p = 18.
        if (c.n == kMillion.n && !(hash == HashSpec{})) continue;
        const std::string params = "p = " + std::to_string(p) + ", " + hash_name(hash);
        SCOPED_TRACE(params);
        HyperLogLog got(p, hash);
        {
          ScopedBackend on(cfg);
          place(got, cfg);
          got.add(col.keys(), cfg.backend);
          expect_served(cfg);
        }
        expect_reference_outcome(
            "hll " + trace(kind, c) + " " + params, outcome(fetch(got)),
            [&] {
              HyperLogLog want(p, hash);
              ScopedBackend ref(reference_config());
              want.add(col.keys(), Backend::Scalar);
              return outcome(want);
            },
            "registers", "the histogram and the estimate's bits (last)");
      }
    }
  });
}

// Fresh keys into warm registers: the bulk add screens them against the
// smallest register (src/hyperloglog.cc; hash_screened where a backend has
// it), which only happens once every register is above zero and the batch
// holds at least 2^p keys. Every key kind, with p = 4 and 10.
TEST_P(Identity, HllAddIntoWarmRegistersGivesReferenceRegisters) {
  const BackendConfig& cfg = GetParam();
  const InputCase warm{"warm", 20011, 0, 0, 24};
  const InputCase fresh{"fresh", 20011, 1, 0, 24};
  const std::vector<std::uint64_t> warm_values = make_values(warm, 11), fresh_values = make_values(fresh, 12);
  for (KeyKind kind : kAllKeyKinds) {
    SCOPED_TRACE(key_kind_name(kind));
    const KeyColumn warm_col(kind, warm_values, warm), fresh_col(kind, fresh_values, fresh);
    for (std::uint32_t p : {4u, 10u}) {
      for (HashSpec hash : kHashes) {
        SCOPED_TRACE("p = " + std::to_string(p) + ", " + hash_name(hash));
        HyperLogLog want(p, hash);
        {
          ScopedBackend ref(reference_config());
          want.add(warm_col.keys(), Backend::Scalar);
          const auto regs = want.registers();
          ASSERT_GT(*std::min_element(regs.begin(), regs.end()), 0) << "the warm-up left a register at zero";
          want.add(fresh_col.keys(), Backend::Scalar);
        }
        HyperLogLog got(p, hash);
        ScopedBackend on(cfg);
        place(got, cfg);
        got.add(warm_col.keys(), cfg.backend);
        got.add(fresh_col.keys(), cfg.backend);
        expect_served(cfg);
        expect_same_bytes(fetch(got).registers(), want.registers(), "registers");
        if (::testing::Test::HasFatalFailure()) return;
      }
    }
  }
}

// Adding in several calls, into a non-empty object, gives the same state.
TEST_P(Identity, RepeatedAddsAccumulateLikeTheReference) {
  const BackendConfig& cfg = GetParam();
  const InputCase c{"chunks", 100003, 3, 0, 30};
  const std::vector<std::uint64_t> values = make_values(c, 4);
  const KeyColumn col(KeyKind::Str64, values, c);
  BloomFilter want_f(777, 9), got_f(777, 9);
  HyperLogLog want_h(12), got_h(12);
  {
    ScopedBackend ref(reference_config());
    want_f.add(col.keys(), Backend::Scalar);
    want_h.add(col.keys(), Backend::Scalar);
  }
  ScopedBackend on(cfg);
  place(got_f, cfg);
  place(got_h, cfg);
  for (int round = 0; round < 3; ++round) {
    got_f.add(col.keys(), cfg.backend);
    got_h.add(col.keys(), cfg.backend);
  }
  expect_same_bytes(fetch(got_f).data(), want_f.data(), "filter bytes");
  expect_same_bytes(fetch(got_h).registers(), want_h.registers(), "registers");
}

// With only this configuration's target supported, Auto picks it.
TEST_P(Identity, AutoServesTheBestSupportedBackend) {
  const BackendConfig& cfg = GetParam();
  if (cfg.backend == Backend::Scalar && !simd_targets().empty()) GTEST_SKIP() << "Auto prefers Simd here";
  const ScopedEnv no_backend("PROBKIT_BACKEND", std::nullopt);
  const ScopedEnv no_target("PROBKIT_SIMD_TARGET", std::nullopt);
  ScopedBackend on(cfg);
  const std::vector<std::uint64_t> keys{1, 2, 3};
  BloomFilter f(4, 4);
  place(f, cfg);
  f.add(keys);
  expect_served(cfg);
  HyperLogLog h(10);
  place(h, cfg);
  h.add(keys);
  expect_served(cfg);
}

INSTANTIATE_TEST_SUITE_P(Backends, Identity, ::testing::ValuesIn(backend_matrix()), config_name);

// --- Dispatch: unavailable backends are errors; the environment is honoured.

const std::vector<std::uint64_t> kFew{10, 20, 30, 40};

// Starts from no environment overrides, whatever the caller's shell has set.
class Dispatch : public ::testing::Test {
 private:
  ScopedEnv no_backend_{"PROBKIT_BACKEND", std::nullopt};
  ScopedEnv no_target_{"PROBKIT_SIMD_TARGET", std::nullopt};
};

TEST_F(Dispatch, CudaOnAHostObjectThrowsAndChangesNothing) {
  BloomFilter f(8, 6);
  f.add(kFew);
  const BloomFilter before = f;
  EXPECT_THROW(f.add(std::vector<std::uint64_t>{99}, Backend::Cuda), Error);
  std::vector<std::uint8_t> out(kFew.size(), 7);
  EXPECT_THROW(f.contains(kFew, out, Backend::Cuda), Error);
  EXPECT_THROW((void)f.count(kFew, Backend::Cuda), Error);
  EXPECT_EQ(f, before);
  EXPECT_EQ(out, std::vector<std::uint8_t>(kFew.size(), 7));
  HyperLogLog h(8);
  h.add(kFew);
  const HyperLogLog h_before = h;
  try {
    h.add(std::vector<std::uint64_t>{99}, Backend::Cuda);
    ADD_FAILURE() << "Backend::Cuda on a host sketch did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cuda"), std::string::npos) << e.what();
  }
  EXPECT_EQ(h, h_before);
}

TEST_F(Dispatch, UnknownSimdTargetThrows) {
  EXPECT_THROW(set_simd_target("NOSUCHTARGET"), Error);
  EXPECT_THROW(set_simd_target("AVX9"), Error);
  BloomFilter f(8, 6);
  const BloomFilter before = f;
  const ScopedEnv env("PROBKIT_SIMD_TARGET", "NOSUCHTARGET");
  try {
    f.add(kFew, Backend::Simd);
    ADD_FAILURE() << "PROBKIT_SIMD_TARGET=NOSUCHTARGET did not throw";
  } catch (const Error& e) {
    // Either the target is named, or there is no Simd backend at all.
    const std::string msg = e.what();
    EXPECT_TRUE(msg.find("NOSUCHTARGET") != std::string::npos || msg.find("simd") != std::string::npos) << msg;
  }
  EXPECT_EQ(f, before);
}

TEST_F(Dispatch, TargetTheCpuLacksThrows) {
  const std::vector<std::string> targets = simd_targets();
  if (targets.size() < 2) GTEST_SKIP() << "needs two SIMD targets";
  // Pretend the CPU only has the weakest target; the best one must be refused.
  probkit::detail::set_supported_targets_for_test(hwy_target_bit(targets.back()));
  EXPECT_THROW(set_simd_target(targets.front()), Error);
  {
    const ScopedEnv env("PROBKIT_SIMD_TARGET", targets.front());
    BloomFilter f(8, 6);
    EXPECT_THROW(f.add(kFew, Backend::Simd), Error);
    EXPECT_THROW(f.add(kFew), Error);
    EXPECT_EQ(f, BloomFilter(8, 6));
  }
  probkit::detail::set_supported_targets_for_test(0);
}

TEST_F(Dispatch, EnvironmentBackendIsHonouredPerCall) {
  BloomFilter f(8, 6);
  {
    const ScopedEnv env("PROBKIT_BACKEND", "scalar");
    f.add(kFew);
    EXPECT_EQ(last_served().backend, Backend::Scalar);
    EXPECT_EQ(last_served().target, "scalar");
  }
  {
    const ScopedEnv env("PROBKIT_BACKEND", "SIMD");
    if (simd_targets().empty()) {
      EXPECT_THROW(f.add(kFew), Error);
    } else {
      f.add(kFew);
      EXPECT_EQ(last_served().backend, Backend::Simd);
      EXPECT_EQ(last_served().target, simd_targets().front());
    }
  }
  const BloomFilter before = f;
  {
    const ScopedEnv env("PROBKIT_BACKEND", "cuda");
    EXPECT_THROW(f.add(std::vector<std::uint64_t>{5}), Error);
  }
  {
    const ScopedEnv env("PROBKIT_BACKEND", "quantum");
    try {
      f.add(std::vector<std::uint64_t>{5});
      ADD_FAILURE() << "PROBKIT_BACKEND=quantum did not throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("quantum"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(f, before);
  {
    // Set but empty is not set (as PROBKIT_THREADS and PROBKIT_READ_BUFFER): Auto, not an unknown backend ''.
    const ScopedEnv env("PROBKIT_BACKEND", "");
    f.add(kFew);
    EXPECT_EQ(last_served().backend, simd_targets().empty() ? Backend::Scalar : Backend::Simd);
  }
  // An explicit backend wins over the environment.
  const ScopedEnv env("PROBKIT_BACKEND", "cuda");
  f.add(kFew, Backend::Scalar);
  EXPECT_EQ(last_served().backend, Backend::Scalar);
}

TEST_F(Dispatch, EnvironmentAndApiPinEachTarget) {
  HyperLogLog h(10);
  for (const std::string& t : simd_targets()) {
    SCOPED_TRACE(t);
    {
      const ScopedEnv env("PROBKIT_SIMD_TARGET", t);
      h.add(kFew);
      EXPECT_EQ(last_served().backend, Backend::Simd);
      EXPECT_EQ(last_served().target, t);
      EXPECT_EQ(simd_target(), t);
    }
    set_simd_target(t);
    h.add(kFew, Backend::Simd);
    EXPECT_EQ(last_served().target, t);
    set_simd_target("");
  }
}

// The API's pin stands over PROBKIT_SIMD_TARGET, and lifting it (an empty
// name) returns to the variable's target, not to the best one.
TEST_F(Dispatch, PinOverTheEnvironmentAndLifted) {
  const std::vector<std::string> targets = simd_targets();
  if (targets.size() < 2) GTEST_SKIP() << "needs two SIMD targets";
  const ScopedEnv env("PROBKIT_SIMD_TARGET", targets.back());
  EXPECT_EQ(simd_target(), targets.back());
  set_simd_target(targets.front());
  EXPECT_EQ(simd_target(), targets.front());
  set_simd_target("");
  EXPECT_EQ(simd_target(), targets.back());
}

TEST_F(Dispatch, AvailableBackendsListsScalarFirst) {
  const std::vector<Backend> b = available_backends();
  ASSERT_FALSE(b.empty());
  EXPECT_EQ(b.front(), Backend::Scalar);
  const bool has_simd = std::find(b.begin(), b.end(), Backend::Simd) != b.end();
  EXPECT_EQ(has_simd, !simd_targets().empty());
  for (const std::string& t : simd_targets()) EXPECT_NE(hwy_target_bit(t), 0) << t;
  EXPECT_THROW(parse_backend("gpu"), Error);
  EXPECT_EQ(parse_backend("CUDA"), Backend::Cuda);
}

}  // namespace
}  // namespace probkit::test
