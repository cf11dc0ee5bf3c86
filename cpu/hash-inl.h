// Per-target key hashing: XXH64 and MurmurHash64A of u64 and u32 keys, one key
// per 64-bit lane. Each step is the vector form of the layout function of the
// same name (include/probkit/layout/); tests/simd_kernels_test.cc proves the
// results equal the scalar reference. Strings and the per-kind entry point are in
// hash_keys-inl.h.

// Toggling include guard: foreach_target.h includes this once per target.
#if defined(PROBKIT_CPU_HASH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_HASH_INL_H_
#undef PROBKIT_CPU_HASH_INL_H_
#else
#define PROBKIT_CPU_HASH_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "probkit/detail/hash_keys.hpp"
#include "probkit/detail/key_batch.hpp"
#include "probkit/layout/hash.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// HWY_SCALAR and HWY_EMU128 get no kernels: they would only repeat scalar.cc.
#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

using D64 = hn::ScalableTag<std::uint64_t>;
using V64 = hn::Vec<D64>;

// a * b mod 2^64 per lane. Highway 1.0.3 has no 64-bit lane multiply: AVX-512DQ
// has one natively; elsewhere three 32x32->64 products (the high x high term
// only affects bits >= 64).
HWY_INLINE V64 mul64(V64 a, std::uint64_t b) {
  const D64 d;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return V64{_mm512_mullo_epi64(a.raw, hn::Set(d, b).raw)};
#else
  const hn::Repartition<std::uint32_t, D64> d32;
  const auto b_lo = hn::BitCast(d32, hn::Set(d, b));
  const auto b_hi = hn::BitCast(d32, hn::Set(d, b >> 32));
  const auto a32 = hn::BitCast(d32, a);
  const V64 lo_lo = hn::MulEven(a32, b_lo);
  const V64 hi_lo = hn::MulEven(hn::BitCast(d32, hn::ShiftRight<32>(a)), b_lo);
  const V64 lo_hi = hn::MulEven(a32, b_hi);
  return hn::Add(lo_lo, hn::ShiftLeft<32>(hn::Add(hi_lo, lo_hi)));
#endif
}

template <int kBits>
HWY_INLINE V64 rotl64(V64 v) {
  return hn::RotateRight<64 - kBits>(v);
}

// Vector forms of layout/xxh64.hpp.
HWY_INLINE V64 xxh64_round0(V64 input) {  // xxh64_round(0, input)
  return mul64(rotl64<31>(mul64(input, layout::kXxhPrime2)), layout::kXxhPrime1);
}
HWY_INLINE V64 xxh64_tail8(V64 h, V64 lane) {
  h = hn::Xor(h, xxh64_round0(lane));
  return hn::Add(mul64(rotl64<27>(h), layout::kXxhPrime1), hn::Set(D64(), layout::kXxhPrime4));
}
HWY_INLINE V64 xxh64_tail4(V64 h, V64 lane) {
  h = hn::Xor(h, mul64(lane, layout::kXxhPrime1));
  return hn::Add(mul64(rotl64<23>(h), layout::kXxhPrime2), hn::Set(D64(), layout::kXxhPrime3));
}
HWY_INLINE V64 xxh64_tail1(V64 h, V64 byte) {
  h = hn::Xor(h, mul64(byte, layout::kXxhPrime5));
  return mul64(rotl64<11>(h), layout::kXxhPrime1);
}
HWY_INLINE V64 xxh64_avalanche(V64 h) {
  h = mul64(hn::Xor(h, hn::ShiftRight<33>(h)), layout::kXxhPrime2);
  h = mul64(hn::Xor(h, hn::ShiftRight<29>(h)), layout::kXxhPrime3);
  return hn::Xor(h, hn::ShiftRight<32>(h));
}

// Vector forms of layout/murmur64a.hpp.
HWY_INLINE V64 murmur64a_block(V64 h, V64 k) {
  k = mul64(k, layout::kMurmurM);
  k = mul64(hn::Xor(k, hn::ShiftRight<layout::kMurmurR>(k)), layout::kMurmurM);
  return mul64(hn::Xor(h, k), layout::kMurmurM);
}
HWY_INLINE V64 murmur64a_finish(V64 h) {
  h = mul64(hn::Xor(h, hn::ShiftRight<layout::kMurmurR>(h)), layout::kMurmurM);
  return hn::Xor(h, hn::ShiftRight<layout::kMurmurR>(h));
}

// One hash function for one key width. The start value is kept as a scalar:
// SVE vectors are sizeless and cannot be struct members.
struct Xxh64U64 {
  using Key = std::uint64_t;
  std::uint64_t start;
  explicit Xxh64U64(std::uint64_t seed) : start(seed + layout::kXxhPrime5 + 8) {}
  HWY_INLINE V64 operator()(V64 key) const {
    return xxh64_avalanche(xxh64_tail8(hn::Set(D64(), start), key));
  }
};
struct Xxh64U32 {
  using Key = std::uint32_t;
  std::uint64_t start;
  explicit Xxh64U32(std::uint64_t seed) : start(seed + layout::kXxhPrime5 + 4) {}
  HWY_INLINE V64 operator()(V64 key) const {
    return xxh64_avalanche(xxh64_tail4(hn::Set(D64(), start), key));
  }
};
struct Murmur64AU64 {
  using Key = std::uint64_t;
  std::uint64_t start;
  explicit Murmur64AU64(std::uint64_t seed) : start(seed ^ (8 * layout::kMurmurM)) {}
  HWY_INLINE V64 operator()(V64 key) const {
    return murmur64a_finish(murmur64a_block(hn::Set(D64(), start), key));
  }
};
struct Murmur64AU32 {
  using Key = std::uint32_t;
  std::uint64_t start;
  explicit Murmur64AU32(std::uint64_t seed) : start(seed ^ (4 * layout::kMurmurM)) {}
  HWY_INLINE V64 operator()(V64 key) const {
    return murmur64a_finish(mul64(hn::Xor(hn::Set(D64(), start), key), layout::kMurmurM));
  }
};

template <class Key>
HWY_INLINE V64 load_keys(const Key* p) {
  const D64 d;
  if constexpr (sizeof(Key) == 8) {
    return hn::LoadU(d, p);
  } else {
    return hn::PromoteTo(d, hn::LoadU(hn::Rebind<std::uint32_t, D64>(), p));
  }
}

template <class Key>
HWY_INLINE std::uint64_t hash_one(HashSpec spec, Key key) {
  if constexpr (sizeof(Key) == 8) {
    return layout::hash_u64(spec, key);
  } else {
    return layout::hash_u32(spec, key);
  }
}

// How many keys the scalar multiplier hashes beside each vector, so that the
// vector and the integer multipliers both work (DESIGN.md §8). Measured, XXH64
// of u64 keys, one thread of a Xeon (Sapphire Rapids class), M keys/s:
//   AVX3 (8 lanes, native multiply): vector alone 800-1150, + 8 scalar 1180;
//   AVX2 (4 lanes, emulated):        vector alone 490, + 4 scalar 610, scalar 560;
//   SSE4/SSSE3 (2 lanes, emulated):  vector alone 245, best mix 500, scalar 560,
// so the 128-bit x86 targets hash in scalar code only.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
inline constexpr std::size_t kScalarKeysPerVector = 8;
#elif HWY_TARGET == HWY_AVX2
inline constexpr std::size_t kScalarKeysPerVector = 4;
#else
inline constexpr std::size_t kScalarKeysPerVector = 0;
#endif
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kVectorHash = false;
#else
inline constexpr bool kVectorHash = true;
#endif

template <class Hash>
void hash_fixed(const typename Hash::Key* keys, std::size_t count, HashSpec spec,
                std::uint64_t* out) {
  const D64 d;
  const std::size_t n = hn::Lanes(d);
  // u32 keys need fewer multiplies: the vector alone is faster there.
  const std::size_t step = n + (sizeof(typename Hash::Key) == 8 ? kScalarKeysPerVector : 0);
  const Hash hash(spec.seed);
  std::size_t i = 0;
  if (count >= step) {
    for (; i <= count - step; i += step) {
      for (std::size_t b = 0; b < step * sizeof(*keys); b += 64)
        prefetch_stream(keys + i + b / sizeof(*keys));
      hn::StoreU(hash(load_keys(keys + i)), d, out + i);
      for (std::size_t j = n; j < step; ++j) out[i + j] = hash_one(spec, keys[i + j]);
    }
  }
  for (; i < count; ++i) out[i] = hash_one(spec, keys[i]);
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_HASH_INL_H_
