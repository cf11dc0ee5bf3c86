// The AVX2 hashing of u64 keys and 16-byte strings in Intel's forms (declared
// in hash_keys-inl.h, which says why they have a translation unit of their
// own), compiled once per target like simd.cc; the other targets define
// nothing here.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "avx2_hash_intel.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "hash-inl.h"
#include "hash_keys-inl.h"
#include "probkit/layout/hash.hpp"
#include "vendor_forms.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
#if HWY_TARGET == HWY_AVX2

template <bool kXxh>
using IntelHash = Hash64Bit<kXxh, Avx2U64Hash::kMuludqTwoScalarKeys>;

void hash_u64_intel_forms(const std::uint64_t* keys, std::size_t count, HashSpec spec,
                          std::uint64_t* out) {
  spec.kind == HashKind::Xxh64 ? hash_fixed<IntelHash<true>>(keys, count, spec, out)
                               : hash_fixed<IntelHash<false>>(keys, count, spec, out);
}

std::size_t hash_u64_screened_intel_forms(const std::uint64_t* keys, std::size_t count,
                                          HashSpec spec, std::uint64_t screen,
                                          std::uint64_t* passed) {
  return spec.kind == HashKind::Xxh64
             ? hash_fixed_screened<IntelHash<true>>(keys, count, spec, screen, passed)
             : hash_fixed_screened<IntelHash<false>>(keys, count, spec, screen, passed);
}

std::size_t hash_width16_intel_forms(const std::uint8_t* p, std::size_t count, HashSpec spec,
                                     std::uint64_t* out) {
  return hash_width16_pipelined_with<kString16ScalarKeysIntel>(p, count, spec, out);
}

std::size_t hash_width16_screened_intel_forms(const std::uint8_t* p, std::size_t count,
                                              HashSpec spec, std::uint64_t screen,
                                              std::uint64_t* passed) {
  return spec.kind == HashKind::Xxh64
             ? hash_width16_screened<true, kString16ScalarKeysIntel>(p, count, spec, screen, passed)
             : hash_width16_screened<false, kString16ScalarKeysIntel>(p, count, spec, screen, passed);
}

#endif  // HWY_TARGET == HWY_AVX2
}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();
