// Bloom filter add of keys hashed and added in one loop (DESIGN.md §3), u64
// keys and strings all 16 bytes long (other strings of a call are hashed,
// then added): CpuKernels::bloom_add_keys, on AVX-512 into a cacheline512
// filter (strings: one in the cache); elsewhere the filter hashes, then adds
// (bloom_add-inl.h). And CpuKernels::bloom_add_owned_keys, the same loop past
// the cache adding only one block owner's keys.
// Declared here for simd.cc's kernel table and defined in a translation unit
// of its own, bloom_add_keys.cc: compiled in simd.cc, its instantiations
// changed GCC's inlining in unrelated kernels there (the AVX2 hll_add lost an
// inlined copy of its loop and measured 744 -> 715 M keys/s).
// tests/simd_bloom_kernels_test.cc proves identity with the scalar reference.

#if defined(PROBKIT_CPU_BLOOM_ADD_KEYS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_ADD_KEYS_INL_H_
#undef PROBKIT_CPU_BLOOM_ADD_KEYS_INL_H_
#else
#define PROBKIT_CPU_BLOOM_ADD_KEYS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "probkit/detail/kernels.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
bool bloom_add_keys(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
                    std::size_t count, HashSpec spec, std::uint64_t* scratch);
inline constexpr auto kBloomAddKeys = &bloom_add_keys;
bool bloom_add_owned_keys(const detail::BloomRef& f, const detail::KeyBatch& keys, std::size_t begin,
                          std::size_t count, HashSpec spec, detail::HashRange own, std::uint64_t* scratch);
inline constexpr auto kBloomAddOwnedKeys = &bloom_add_owned_keys;
#else
inline constexpr bool (*kBloomAddKeys)(const detail::BloomRef&, const detail::KeyBatch&,
                                       std::size_t, std::size_t, HashSpec,
                                       std::uint64_t*) = nullptr;
inline constexpr bool (*kBloomAddOwnedKeys)(const detail::BloomRef&, const detail::KeyBatch&, std::size_t,
                                            std::size_t, HashSpec, detail::HashRange, std::uint64_t*) = nullptr;
#endif

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_ADD_KEYS_INL_H_
