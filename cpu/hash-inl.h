// Per-target key hashing: XXH64 and MurmurHash64A of u64 and u32 keys, one key
// per 64-bit lane. Each step is the vector form of the layout function of the
// same name (include/probkit/layout/); tests/simd_hash_kernels_test.cc proves
// the results equal the scalar reference. Strings and the per-kind entry point
// are in hash_keys-inl.h.

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
#include <cstring>
#include <type_traits>

#include "probkit/detail/hash_keys.hpp"
#include "probkit/detail/key_batch.hpp"
#include "probkit/layout/hash.hpp"
#include "stream_prefetch.h"
#include "vendor_forms.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// HWY_SCALAR and HWY_EMU128 get no kernels: they would only repeat scalar.cc.
#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

using D64 = hn::ScalableTag<std::uint64_t>;
using V64 = hn::Vec<D64>;

// a * b mod 2^64 per lane. Highway 1.0.3 has no 64-bit lane multiply: AVX-512DQ
// has one natively; elsewhere a_lo * b_lo + ((a_hi * b_lo + a_lo * b_hi) << 32)
// (the high x high term only affects bits >= 64), as three 32x32->64
// multiplies (vpmuludq), or on AVX2 unless kThreeMuludq as below.
template <bool kThreeMuludq = false>
HWY_INLINE V64 mul64(V64 a, std::uint64_t b) {
  const D64 d;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return V64{_mm512_mullo_epi64(a.raw, hn::Set(d, b).raw)};
#else
  const hn::Repartition<std::uint32_t, D64> d32;
  const auto a32 = hn::BitCast(d32, a);
  if constexpr (HWY_TARGET == HWY_AVX2 && !kThreeMuludq) {
    // One vpmulld by b with its halves swapped gives both cross products,
    // mod 2^32, in the two halves of each lane; the low one shifted up plus
    // the high one is their sum, placed: six vector operations, two of them
    // multiplies, where three vpmuludq make seven with three (XXH64 of u64
    // keys, Zen 5 guest: 2.72 -> 2.31 TSC cycles per key). On Intel's cores
    // vpmulld is two uops with about 10 cycles' latency, and three vpmuludq
    // hashed u64 keys 1.14x as fast on the Intel guest: where the choice is
    // measured, the vendor makes it (Hash64Bit).
    // (docs/PERF-NOTES.md, "AVX2 64-bit multiply (mul64)")
    const auto cross =
        hn::BitCast(d, hn::Mul(a32, hn::BitCast(d32, hn::Set(d, (b >> 32) | (b << 32)))));
    const V64 lo_lo = hn::MulEven(a32, hn::BitCast(d32, hn::Set(d, b)));
    const V64 high =
        hn::Add(hn::ShiftLeft<32>(cross), hn::And(cross, hn::Set(d, ~std::uint64_t{0} << 32)));
    return hn::Add(lo_lo, high);
  } else {
    const auto b_lo = hn::BitCast(d32, hn::Set(d, b));
    const auto b_hi = hn::BitCast(d32, hn::Set(d, b >> 32));
    const V64 lo_lo = hn::MulEven(a32, b_lo);
    const V64 hi_lo = hn::MulEven(hn::BitCast(d32, hn::ShiftRight<32>(a)), b_lo);
    const V64 lo_hi = hn::MulEven(a32, b_hi);
    return hn::Add(lo_lo, hn::ShiftLeft<32>(hn::Add(hi_lo, lo_hi)));
  }
#endif
}

template <int kBits>
HWY_INLINE V64 rotl64(V64 v) {
  return hn::RotateRight<64 - kBits>(v);
}

template <int kBits>
HWY_INLINE V64 xor_shift(V64 h) {
  return hn::Xor(h, hn::ShiftRight<kBits>(h));
}

// XXH64 and MurmurHash64A over 8-byte lanes (vector forms of layout/xxh64.hpp
// and layout/murmur64a.hpp), in pieces of one multiply each, shared by the
// one-shot forms and the software pipelines: a lane is mixed (mix0, mix1) and
// folded into h (fold); h is finished (finish0, finish1). kThreeMuludq
// picks mul64's form.
template <bool kXxh, bool kThreeMuludq = false>
struct Lane8Steps {
  static constexpr int kR = layout::kMurmurR;
  // h before the first lane of a len-byte input.
  static std::uint64_t start(std::uint64_t seed, std::uint64_t len) {
    return kXxh ? seed + layout::kXxhPrime5 + len : seed ^ (len * layout::kMurmurM);
  }
  static HWY_INLINE V64 mix0(V64 lane) {
    return mul64<kThreeMuludq>(lane, kXxh ? layout::kXxhPrime2 : layout::kMurmurM);
  }
  static HWY_INLINE V64 mix1(V64 k) {  // with mix0: XXH64's round(0, lane)
    return kXxh ? mul64<kThreeMuludq>(rotl64<31>(k), layout::kXxhPrime1)
                : mul64<kThreeMuludq>(xor_shift<kR>(k), layout::kMurmurM);
  }
  static HWY_INLINE V64 fold(V64 h, V64 k) {
    return kXxh ? hn::Add(mul64<kThreeMuludq>(rotl64<27>(hn::Xor(h, k)), layout::kXxhPrime1),
                          hn::Set(D64(), layout::kXxhPrime4))
                : mul64<kThreeMuludq>(hn::Xor(h, k), layout::kMurmurM);
  }
  static HWY_INLINE V64 finish0(V64 h) {
    return kXxh ? mul64<kThreeMuludq>(xor_shift<33>(h), layout::kXxhPrime2)
                : mul64<kThreeMuludq>(xor_shift<kR>(h), layout::kMurmurM);
  }
  static HWY_INLINE V64 finish1(V64 h) {
    return kXxh ? xor_shift<32>(mul64<kThreeMuludq>(xor_shift<29>(h), layout::kXxhPrime3))
                : xor_shift<kR>(h);
  }
  // One-shot: a whole 8-byte lane into h, and h's finish.
  static HWY_INLINE V64 lane(V64 h, V64 v) { return fold(h, mix1(mix0(v))); }
  static HWY_INLINE V64 finish(V64 h) { return finish1(finish0(h)); }
};

// XXH64's tails of 4 bytes (a multiply, then a fold with one more) and 1 byte.
HWY_INLINE V64 xxh64_tail4_fold(V64 h, V64 k) {
  return hn::Add(mul64(rotl64<23>(hn::Xor(h, k)), layout::kXxhPrime2),
                 hn::Set(D64(), layout::kXxhPrime3));
}
HWY_INLINE V64 xxh64_tail4(V64 h, V64 lane) {
  return xxh64_tail4_fold(h, mul64(lane, layout::kXxhPrime1));
}
HWY_INLINE V64 xxh64_tail1(V64 h, V64 byte) {
  h = hn::Xor(h, mul64(byte, layout::kXxhPrime5));
  return mul64(rotl64<11>(h), layout::kXxhPrime1);
}

// One hash function for one key width, cut into stages of one multiply each
// (the run of vector operations up to and including it, plus what follows it
// up to the next): hash_fixed runs them as a software pipeline. stage<S> for S
// >= kStages passes its input through. The start value is kept as a scalar:
// SVE vectors are sizeless and cannot be struct members.
inline constexpr int kMaxStages = 5;

// u64 keys: one 8-byte lane. kAvx2 is AVX2's form (avx2_u64_hash(),
// vendor_forms.h): mul64's, and how many keys each step of the pipeline
// hashes in scalar code beside its vector (kScalarKeysPerStep). Other
// targets ignore it. Intel's is compiled in avx2_hash_intel.cc.
template <bool kXxh, Avx2U64Hash kAvx2 = Avx2U64Hash::kMulldOneScalarKey>
struct Hash64Bit {
  static constexpr bool kIntelForms = kAvx2 == Avx2U64Hash::kMuludqTwoScalarKeys;
  using Key = std::uint64_t;
  using Steps = Lane8Steps<kXxh, kIntelForms>;
  static constexpr int kStages = 5;
  static constexpr std::size_t kScalarKeysBeside = kIntelForms ? 2 : 1;
  static constexpr bool kScreenBeside = true;  // kScreenInPipeline
  std::uint64_t start;
  explicit Hash64Bit(std::uint64_t seed) : start(Steps::start(seed, 8)) {}
  template <int S>
  HWY_INLINE V64 stage(V64 v) const {
    if constexpr (S == 0) return Steps::mix0(v);
    if constexpr (S == 1) return Steps::mix1(v);
    if constexpr (S == 2) return Steps::fold(hn::Set(D64(), start), v);
    if constexpr (S == 3) return Steps::finish0(v);
    if constexpr (S == 4) return Steps::finish1(v);
    return v;
  }
};
using Xxh64U64 = Hash64Bit<true>;
using Murmur64AU64 = Hash64Bit<false>;

struct Xxh64U32 {  // finish(xxh64_tail4(start, key))
  using Key = std::uint32_t;
  using Steps = Lane8Steps<true>;
  static constexpr int kStages = 4;
  static constexpr std::size_t kScalarKeysBeside = 2;
  static constexpr bool kScreenBeside = false;
  std::uint64_t start;
  explicit Xxh64U32(std::uint64_t seed) : start(Steps::start(seed, 4)) {}
  template <int S>
  HWY_INLINE V64 stage(V64 v) const {
    if constexpr (S == 0) return mul64(v, layout::kXxhPrime1);
    if constexpr (S == 1) return xxh64_tail4_fold(hn::Set(D64(), start), v);
    if constexpr (S == 2) return Steps::finish0(v);
    if constexpr (S == 3) return Steps::finish1(v);
    return v;
  }
};
struct Murmur64AU32 {  // finish((start ^ key) * M)
  using Key = std::uint32_t;
  using Steps = Lane8Steps<false>;
  static constexpr int kStages = 3;
  static constexpr std::size_t kScalarKeysBeside = 0;
  static constexpr bool kScreenBeside = true;
  std::uint64_t start;
  explicit Murmur64AU32(std::uint64_t seed) : start(Steps::start(seed, 4)) {}
  template <int S>
  HWY_INLINE V64 stage(V64 v) const {
    if constexpr (S == 0) return Steps::fold(hn::Set(D64(), start), v);
    if constexpr (S == 1) return Steps::finish0(v);
    if constexpr (S == 2) return Steps::finish1(v);
    return v;
  }
};

// One key, at any alignment: 8-byte strings hash as the u64 keys of their
// bytes wherever they lie (hash_width8). The copy compiles to the plain load.
template <class Key>
HWY_INLINE Key load_key(const Key* p) {
  Key key;
  std::memcpy(&key, p, sizeof(key));
  return key;
}

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

// v after stages 0 .. kN - 1 of hash.
template <int kN, class Hash>
HWY_INLINE V64 through_stages(const Hash& hash, V64 v) {
  if constexpr (kN == 0) {
    return v;
  } else {
    return hash.template stage<kN - 1>(through_stages<kN - 1>(hash, v));
  }
}

// The hash of one vector of keys: every stage in turn.
template <class Hash>
HWY_INLINE V64 hash_vector(const Hash& hash, V64 keys) {
  return through_stages<kMaxStages>(hash, keys);
}

// How each target hashes fixed-width keys: AVX3 and AVX2 run a software
// pipeline (hash_fixed_pipelined; XXH64 of u64 keys in cache, AVX3 on a
// Xeon: 1180 -> 1500 M keys/s), AVX2 with kScalarKeysPerStep keys hashed in
// scalar code beside each vector, so that the integer multiplier works while
// the vector one does. SSE4/SSSE3 run scalar code: two lanes of an emulated
// 64-bit multiply lose to the integer multiplier (vector 245, scalar 560 M
// keys/s). (docs/PERF-NOTES.md, "Fixed-width key hashing per target")
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
inline constexpr bool kPipelinedHash = true;
#else
inline constexpr bool kPipelinedHash = false;
#endif
// Keys hashed in scalar code beside each vector in each step of the
// pipeline: on AVX2 the hash's kScalarKeysBeside (u64 keys one on AMD, two on
// Intel; XXH64 of u32 keys two; MurmurHash64A of u32 keys, two multiplies,
// none: with two it was 0.86-0.90 against 1.10-1.27 in most runs but
// 1.64-1.71 against 1.26-1.52 when the scalar multiplier was slower). For u64
// keys one won on the Zen 3 guest (a loop hashing into an L1 buffer: 2.50
// against 2.77 TSC cycles per key for two), two on the Intel guest (1.12x).
template <class Hash>
inline constexpr std::size_t kScalarKeysPerStep =
    HWY_TARGET == HWY_AVX2 ? Hash::kScalarKeysBeside : 0;
// Whether hash_screened keeps the passing hashes as the pipeline computes
// them (hash_fixed_screened), rather than hashing all and then packing them
// (pack_passing). AVX-512 packs each vector with vpcompressq. AVX2 has no
// compress, and its vector pipes are the pipeline's bound: flags from three
// vector operations per vector (vpand, vpcmpeqq, vmovmskpd) cost 0.45 TSC
// cycles per key. So the pipeline hands each step's hashes, a step after
// their stores, to scalar code that packs them in place (AfterStep), where
// the hash's kScreenBeside says so; not for XXH64 of u32 keys, whose scalar
// side already hashes two keys a step. HyperLogLog::add of XXH64 u64 keys,
// Zen 5 guest, TSC cycles per key: 2.67-2.80 -> 2.51-2.62 into a sketch that
// has seen the keys, 6.28-6.42 -> 3.78-3.93 into a fresh one. Where few pass,
// a branch per hash (skip_pays) won when the machine ran slower.
// (docs/PERF-NOTES.md, "Screening in the AVX2 hash pipeline")
template <class Hash>
inline constexpr bool kScreenInPipeline = HWY_TARGET != HWY_AVX2 || Hash::kScreenBeside;
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kVectorHash = false;
#else
inline constexpr bool kVectorHash = true;
#endif

// Runs a software pipeline over `vectors` steps of n keys each:
// step(load, store, loads, stores) advances every vector in flight by one
// stage, loads the keys from index `load` (the step's first key) if `loads`, and
// stores the finished one at `store` if `stores`. A vector loaded in step v is
// stored in step v + depth; the last depth steps only drain.
template <class Step>
HWY_INLINE void run_pipeline(std::size_t vectors, std::size_t n, std::size_t depth,
                             const Step& step) {
  const std::size_t fill = vectors < depth ? vectors : depth;
  std::size_t v = 0;
  for (; v < fill; ++v) step(v * n, 0, true, false);
  for (; v < vectors; ++v) step(v * n, (v - depth) * n, true, true);
  for (std::size_t e = 0; e < depth; ++e, ++v) step(0, (v - depth) * n, false, v >= depth);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Appends the lanes of v that `keep` selects, in order, to out[m, ...) and
// returns the new m: vpcompressq into a register and a plain store of the
// whole vector, so out needs room for 8 from m (the lanes past the new m are
// garbage that the next append or the caller overwrites). Highway 1.0.3's
// Compress for 64-bit lanes looks its indices up in a table that GCC builds
// on the stack at every call, and its CompressStore is vpcompressq's store
// form, slow on Intel and microcoded on Zen 4.
//
// The count goes through _cvtmask8_u32 (kmovb into a 32-bit register, zero
// extended), not a promotion of the __mmask8: under -fsanitize=thread GCC 12
// spilled the mask with a one-byte kmovb and popcounted the 32-bit slot,
// stale bytes and all, and the appends ran past the output.
HWY_INLINE std::size_t append_lanes(__mmask8 keep, __m512i v, std::uint64_t* out, std::size_t m) {
  _mm512_storeu_si512(out + m, _mm512_maskz_compress_epi64(keep, v));
  return m + static_cast<std::size_t>(__builtin_popcount(_cvtmask8_u32(keep)));
}

// Appends the lanes of h with every bit of `screen` clear to passed[m, ...).
HWY_INLINE std::size_t append_passing(V64 h, V64 screen, std::uint64_t* passed, std::size_t m) {
  return append_lanes(_mm512_testn_epi64_mask(h.raw, screen.raw), h.raw, passed, m);
}
#endif
// Appends h to passed[m, ...) if every bit of `screen` is clear in it, without
// a branch: passed[m] is written either way.
HWY_INLINE std::size_t append_passing(std::uint64_t h, std::uint64_t screen, std::uint64_t* passed,
                                      std::size_t m) {
  passed[m] = h;
  return m + ((h & screen) == 0 ? 1 : 0);
}

// Whether a branch per vector on "does a key pass the screen" pays: a key
// passes with probability 2^-floor (an HLL floor screen has `floor` bits),
// and the branch pays once at most about 1 vector in 8 has a passing key,
// lanes * 2^-floor <= 1/8. AVX2's packing in the pipeline takes it for its
// branch per hash too (pack_step).
inline bool skip_pays(std::uint32_t floor) { return floor >= hwy::FloorLog2(hn::Lanes(D64())) + 3; }

// Packs hashes[first, first + n) that pass `screen` to hashes[m, ...), in
// order, and returns the new m (m <= first): with a branch per hash where
// few pass (kFew), else every hash appended without one.
template <bool kFew>
HWY_INLINE std::size_t pack_step(std::uint64_t* hashes, std::size_t first, std::size_t n,
                                 std::uint64_t screen, std::size_t m) {
  for (std::size_t j = first; j < first + n; ++j) {
    if constexpr (kFew) {
      const std::uint64_t h = hashes[j];
      if (HWY_UNLIKELY((h & screen) == 0)) hashes[m++] = h;
    } else {
      m = append_passing(hashes[j], screen, hashes, m);
    }
  }
  return m;
}

#if HWY_TARGET == HWY_AVX2
// Moves the hashes with every bit of `screen` clear to the front of
// hashes[0, count), in order, and returns how many: where few pass, a branch
// per vector skips the others; elsewhere every hash is appended branch-free.
inline std::size_t pack_passing(std::uint64_t* hashes, std::size_t count, std::uint64_t screen) {
  const D64 d;
  const std::size_t n = hn::Lanes(d);
  std::size_t m = 0, i = 0;
  if (skip_pays(static_cast<std::uint32_t>(hwy::PopCount(screen)))) {
    const V64 screen_v = hn::Set(d, screen);
    for (; i + n <= count; i += n) {
      const V64 h = hn::LoadU(d, hashes + i);
      if (HWY_LIKELY(hn::AllFalse(d, hn::Eq(hn::And(h, screen_v), hn::Zero(d))))) continue;
      m = pack_step<false>(hashes, i, n, screen, m);
    }
  }
  return pack_step<false>(hashes, i, count - i, screen, m);
}
#endif

// A hash is one chain of dependent multiplies: XXH64 of a u64 key has five,
// and vpmullq takes 15 cycles (AVX2's emulated multiply, a chain of about
// six operations, fills the scheduler alike). Hashed one vector after
// another, the later operations of every vector wait in the scheduler for its
// earlier ones, and the scheduler fills long before the multiplier is busy.
// So this loop is a software pipeline: each step runs stage S of the vector
// loaded S steps earlier, for every S at once, and every stage's input was
// computed a whole step before.
//
// Each step loads one vector of keys and hashes the kScalarKeys keys after
// it in scalar code. Without a screen it stores every hash to out[i] and
// returns how many keys it hashed (count less count % (lanes + kScalarKeys));
// with kScreened (AVX-512) it keeps only the hashes that pass `screen` (see
// kernels.hpp's hash_screened), packed from out[0], and returns how many.
//
// after(out, first, n), where given, gets each step's hashes out[first, first
// + n) in key order, one step after the step that stored the last of them:
// its work runs beside the next steps' hashing (on AVX2, scalar work beside
// the bound vector pipes). It may rewrite out below first + n: the pipeline
// stores nothing there again.
struct NoAfterStep {
  void operator()(std::uint64_t*, std::size_t, std::size_t) const {}
};
template <bool kScreened, class Hash, std::size_t kScalarKeys = 0, class AfterStep = NoAfterStep>
HWY_INLINE std::size_t hash_fixed_pipelined(const typename Hash::Key* keys, std::size_t count,
                                            HashSpec spec, std::uint64_t* out,
                                            std::uint64_t screen = 0,
                                            const AfterStep& after = AfterStep()) {
  static_assert(!kScreened || HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL,
                "only AVX-512 screens in the pipeline (elsewhere: an AfterStep)");
  static_assert(!kScreened || kScalarKeys == 0, "a screened pipeline keeps vector lanes only");
  constexpr bool kAfter = !std::is_same_v<AfterStep, NoAfterStep>;
  static_assert(!(kScreened && kAfter), "a screened pipeline does not keep every step's hashes");
  const D64 d;
  const Hash hash(spec.seed);
  const std::size_t per_step = hn::Lanes(d) + kScalarKeys;
  const std::size_t vectors = count / per_step;
  if (vectors == 0) return 0;
  [[maybe_unused]] const V64 screen_v = hn::Set(d, screen);
  std::size_t m = 0;  // hashes kept so far (kScreened)
  // s1..s4: the vectors loaded 1..4 steps ago, after stages 0..3. Before the
  // pipeline fills they hold zeros, whose results are never stored.
  V64 s1 = hn::Zero(d), s2 = hn::Zero(d), s3 = hn::Zero(d), s4 = hn::Zero(d);
  // Oldest stage first, so that each reads its input before it is replaced.
  const auto step = [&](std::size_t load, std::size_t store, bool loads, bool stores) {
    if (stores) {
      const V64 h = hash.template stage<4>(s4);
      if constexpr (kScreened) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
        m = append_passing(h, screen_v, out, m);
#endif
      } else {
        hn::StoreU(h, d, out + store);
      }
      // The step stored before this one: its scalar keys' hashes were stored
      // when it loaded, its vector's in the call before this.
      if constexpr (kAfter) {
        if (store != 0) after(out, store - per_step, per_step);
      }
    }
    s4 = hash.template stage<3>(s3);
    s3 = hash.template stage<2>(s2);
    s2 = hash.template stage<1>(s1);
    if (loads) {
      for (std::size_t b = 0; b < per_step * sizeof(*keys); b += 64)
        prefetch_stream(keys + load + b / sizeof(*keys));
      s1 = hash.template stage<0>(load_keys(keys + load));
      for (std::size_t j = hn::Lanes(d); j < per_step; ++j) {
        out[load + j] = hash_one(spec, load_key(keys + load + j));
      }
    }
  };
  run_pipeline(vectors, per_step, kMaxStages - 1, step);
  if constexpr (kAfter) after(out, (vectors - 1) * per_step, per_step);  // the last step stored
  return kScreened ? m : vectors * per_step;
}

template <class Hash>
void hash_fixed(const typename Hash::Key* keys, std::size_t count, HashSpec spec,
                std::uint64_t* out) {
  static_assert(Hash::kStages <= kMaxStages);
  std::size_t i = 0;
  if constexpr (kPipelinedHash) {
    i = hash_fixed_pipelined<false, Hash, kScalarKeysPerStep<Hash>>(keys, count, spec, out);
  } else {
    const D64 d;
    const std::size_t n = hn::Lanes(d);
    const Hash hash(spec.seed);
    if (count >= n) {
      for (; i <= count - n; i += n) {
        for (std::size_t b = 0; b < n * sizeof(*keys); b += 64)
          prefetch_stream(keys + i + b / sizeof(*keys));
        hn::StoreU(hash_vector(hash, load_keys(keys + i)), d, out + i);
      }
    }
  }
  for (; i < count; ++i) out[i] = hash_one(spec, load_key(keys + i));
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
// The keys after the pipeline's last whole step (fewer than a step), hashed
// one by one and appended to passed[m, ...) if they pass; returns the new m.
template <class Hash>
std::size_t append_tail_passing(const typename Hash::Key* keys, std::size_t count, HashSpec spec,
                                std::uint64_t screen, std::uint64_t* passed, std::size_t m) {
  const std::size_t per_step = hn::Lanes(D64()) + kScalarKeysPerStep<Hash>;
  for (std::size_t i = count - count % per_step; i < count; ++i) {
    m = append_passing(hash_one(spec, load_key(keys + i)), screen, passed, m);
  }
  return m;
}

// hash_screened for fixed-width keys: the pipeline keeps the passing hashes as
// it computes them (AVX-512: as each vector finishes; AVX2: a step later),
// and the last keys (fewer than a step) are hashed one by one; or, where
// kScreenInPipeline is false, all are hashed, then packed.
template <class Hash>
std::size_t hash_fixed_screened(const typename Hash::Key* keys, std::size_t count, HashSpec spec,
                                std::uint64_t screen, std::uint64_t* passed) {
#if HWY_TARGET == HWY_AVX2
  constexpr std::size_t kScalarKeys = kScalarKeysPerStep<Hash>;
  if constexpr (!kScreenInPipeline<Hash>) {
    hash_fixed<Hash>(keys, count, spec, passed);
    return pack_passing(passed, count, screen);
  } else {
    // Every hash is stored, and packed in place a step later: m stays at or
    // behind every hash not yet read. Where few pass (skip_pays), a branch per
    // hash (taken about once in 2^floor) is fewer operations than appending
    // every one without a branch.
    std::size_t m = 0;
    if (skip_pays(static_cast<std::uint32_t>(hwy::PopCount(screen)))) {
      const auto pack_few = [&m, screen](std::uint64_t* out, std::size_t first, std::size_t n) {
        m = pack_step<true>(out, first, n, screen, m);
      };
      hash_fixed_pipelined<false, Hash, kScalarKeys>(keys, count, spec, passed, 0, pack_few);
    } else {
      const auto pack = [&m, screen](std::uint64_t* out, std::size_t first, std::size_t n) {
        m = pack_step<false>(out, first, n, screen, m);
      };
      hash_fixed_pipelined<false, Hash, kScalarKeys>(keys, count, spec, passed, 0, pack);
    }
    return append_tail_passing<Hash>(keys, count, spec, screen, passed, m);
  }
#else
  return append_tail_passing<Hash>(
      keys, count, spec, screen, passed,
      hash_fixed_pipelined<true, Hash>(keys, count, spec, passed, screen));
#endif
}
#endif

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_HASH_INL_H_
