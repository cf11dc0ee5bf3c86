// The SIMD targets themselves (compiled, supported, named, dispatched) and
// the HyperLogLog kernels of each against the scalar reference. Hashing:
// simd_hash_kernels_test.cc; Bloom filters: simd_bloom_kernels_test.cc.
#include <gtest/gtest.h>
#include <hwy/targets.h>
#if HWY_ARCH_ARM_A64 && defined(__linux__)
#include <sys/prctl.h>  // PR_SVE_GET_VL
#endif

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "dispatch.hpp"  // set_supported_targets_for_test
#include "probkit/backend.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/hll.hpp"
#include "simd_kernels.hpp"

namespace probkit::detail::simd_test {
namespace {

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

}  // namespace
}  // namespace probkit::detail::simd_test
