// Highway SIMD backend: every attainable target is compiled (cpu/CMakeLists.txt
// defines HWY_COMPILE_ALL_ATTAINABLE) and each one with real vector kernels
// gets a CpuKernels table. src/backend.cc picks among those the CPU supports.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "simd.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "bloom_add-inl.h"
#include "bloom_add_keys-inl.h"
#include "bloom_contains-inl.h"
#include "hash_keys-inl.h"
#include "hll-inl.h"
#include "offsets-inl.h"
#include "partition-inl.h"
#include "probkit/detail/kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
const detail::CpuKernels kKernels{&hash_keys,      kHashScreened,      &bloom_add,
                                  &bloom_contains, &hll_add,           kPartitionHashes,
                                  &check_offsets,  kBloomContainsKeys, kBloomAddKeys,
                                  kBloomAddOwnedKeys};
#endif
}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

namespace probkit::detail {
namespace {

// Best first (lower Highway bits are better). HWY_SCALAR and HWY_EMU128 are
// left out on purpose: they would only repeat the scalar backend. The Arm
// entries (all five compiled by GCC 12 for aarch64) are tested under qemu at
// several SVE vector lengths by scripts/test-arm64.sh.
// clang-format off
// constinit: the table is in place before any constructor runs, so a bulk
// call from a global's initialiser finds it (filled by hwy::TargetName at
// start-up, its names were still null there, and the call crashed). #T is
// the name hwy::TargetName gives.
#define PROBKIT_SIMD_TARGET(T) {HWY_##T, #T, &cpu::N_##T::kKernels},
constinit const SimdTarget kTargets[] = {
#if HWY_TARGETS & HWY_AVX3_DL
    PROBKIT_SIMD_TARGET(AVX3_DL)
#endif
#if HWY_TARGETS & HWY_AVX3
    PROBKIT_SIMD_TARGET(AVX3)
#endif
#if HWY_TARGETS & HWY_AVX2
    PROBKIT_SIMD_TARGET(AVX2)
#endif
#if HWY_TARGETS & HWY_SSE4
    PROBKIT_SIMD_TARGET(SSE4)
#endif
#if HWY_TARGETS & HWY_SSSE3
    PROBKIT_SIMD_TARGET(SSSE3)
#endif
#if HWY_TARGETS & HWY_SVE2_128
    PROBKIT_SIMD_TARGET(SVE2_128)
#endif
#if HWY_TARGETS & HWY_SVE_256
    PROBKIT_SIMD_TARGET(SVE_256)
#endif
#if HWY_TARGETS & HWY_SVE2
    PROBKIT_SIMD_TARGET(SVE2)
#endif
#if HWY_TARGETS & HWY_SVE
    PROBKIT_SIMD_TARGET(SVE)
#endif
#if HWY_TARGETS & HWY_NEON
    PROBKIT_SIMD_TARGET(NEON)
#endif
    {0, nullptr, nullptr}};  // keeps the array non-empty; not counted
#undef PROBKIT_SIMD_TARGET
// clang-format on

}  // namespace

std::size_t compiled_simd_targets(const SimdTarget** out) {
  *out = kTargets;
  return sizeof(kTargets) / sizeof(kTargets[0]) - 1;
}

}  // namespace probkit::detail
#endif  // HWY_ONCE
