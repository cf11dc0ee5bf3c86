// Per-target hash_keys: every key kind -> 64-bit hashes. Fixed-width keys use
// hash-inl.h. Arrow-style string batches: on AVX-512 (AVX2) one string of up
// to 511 (127) bytes per 64-bit lane, each lane walking its own string in
// 32-byte windows; longer strings, and every string elsewhere, the
// reference's loop. Batches of strings all 8 or all 16 bytes long take
// fixed-width paths everywhere: plain vector loads (AVX-512 and AVX2) or the
// reference's hash with the width compiled in. Both XXH64 and MurmurHash64A.
// tests/simd_hash_kernels_test.cc holds the results to the scalar reference for
// lengths 0..600 and every alignment.

#if defined(PROBKIT_CPU_HASH_KEYS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_HASH_KEYS_INL_H_
#undef PROBKIT_CPU_HASH_KEYS_INL_H_
#else
#define PROBKIT_CPU_HASH_KEYS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "hash-inl.h"
#include "probkit/detail/hash_keys.hpp"
#include "probkit/detail/key_batch.hpp"
#include "probkit/layout/hash.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// Strings of mixed lengths hashed in vectors, one string a lane, in groups of
// a vector's lanes: every string at most kShortStringMax bytes long (XXH64's
// stripes start at 32) in the short form, at most three whole 8-byte lanes
// and a tail each; every string at most kVectorStringMax long in the long
// form, with XXH64's stripes of 32 bytes (MurmurHash64A: more 8-byte blocks)
// before them. Each lane reads its own string's bytes, 32 a window
// (load_words32). A group holding a longer string takes the scalar loop,
// lane by lane, whose branches on the length are few against its bytes.
// AVX-512 (a native 64-bit multiply) takes strings up to 511 bytes: from
// DRAM the long form's eight places at once cost more than the scalar loop's
// one stream past that (strings of 0-1000 bytes, all lanes up to 1023 in the
// long form: 0.86 of the scalar loop's rate; 100-400 bytes 1.7x). URL-like
// strings of 25-72 bytes hash at 3x the rate of the short form with the
// scalar loop for the rest. AVX2 (four lanes, an emulated multiply) up to 127
// bytes: with AVX2 pinned on a Zen 4 guest, against the scalar loop, short
// strings of 0-30 bytes 1.7x (XXH64) and 2.7x (MurmurHash64A), URL-like 1.2x,
// 0-250 bytes 1.02 / 1.00; there lanes up to 511 read 0.92 / 0.79 of the
// short form alone.
// (docs/PERF-NOTES.md, "Strings of up to 511 bytes in vectors")
inline constexpr std::uint64_t kShortStringMax = 31;
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
inline constexpr bool kVectorStrings = true;
inline constexpr std::uint64_t kVectorStringMax = 511;
#elif HWY_TARGET == HWY_AVX2
inline constexpr bool kVectorStrings = true;
inline constexpr std::uint64_t kVectorStringMax = 127;
#else
inline constexpr bool kVectorStrings = false;
#endif

template <class Offset>
HWY_INLINE V64 load_offsets(const Offset* p) {
  const D64 d;
  if constexpr (sizeof(Offset) == 8) {
    return hn::BitCast(d, hn::LoadU(hn::RebindToSigned<D64>(), p));
  } else {  // non-negative (validated): sign extension is zero extension
    return hn::BitCast(
        d, hn::PromoteTo(hn::RebindToSigned<D64>(), hn::LoadU(hn::Rebind<std::int32_t, D64>(), p)));
  }
}

// The targets of kVectorStrings only: SVE vectors cannot be struct members.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
// Each lane's 32 bytes at data + at[lane] as four vectors, word w of every
// lane's 32 bytes in vector w. AVX-512: eight 32-byte loads transposed in
// registers, four vinserti64x4, four vpunpck and four vshufi64x2 (in place of
// four gathers: strings of 25-87 bytes hashed 1.31x, 0-250 bytes 1.63x);
// AVX2: four loads, four vpunpck and four vperm2i128.
struct Words32 {
  V64 w0, w1, w2, w3;
};
HWY_INLINE Words32 load_words32(const std::uint8_t* data, V64 at) {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  alignas(64) std::uint64_t a[8];
  hn::Store(at, D64(), a);
  // Lanes l and l + 2 (l = 0, 1, 4, 5) in one register: after the 128-bit
  // interleaves, the block shuffles put the lanes back in order.
  const auto pair = [&](int low, int high) {
    const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + a[low]));
    const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + a[high]));
    return _mm512_inserti64x4(_mm512_castsi256_si512(x), y, 1);
  };
  const __m512i z02 = pair(0, 2), z13 = pair(1, 3), z46 = pair(4, 6), z57 = pair(5, 7);
  const __m512i even_low = _mm512_unpacklo_epi64(z02, z13), odd_low = _mm512_unpackhi_epi64(z02, z13);
  const __m512i even_high = _mm512_unpacklo_epi64(z46, z57), odd_high = _mm512_unpackhi_epi64(z46, z57);
  return {V64{_mm512_shuffle_i64x2(even_low, even_high, 0x88)}, V64{_mm512_shuffle_i64x2(odd_low, odd_high, 0x88)},
          V64{_mm512_shuffle_i64x2(even_low, even_high, 0xDD)}, V64{_mm512_shuffle_i64x2(odd_low, odd_high, 0xDD)}};
#elif HWY_TARGET == HWY_AVX2
  alignas(32) std::uint64_t a[4];
  hn::Store(at, D64(), a);
  const auto load = [&](int l) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(data + a[l])); };
  const __m256i y0 = load(0), y1 = load(1), y2 = load(2), y3 = load(3);
  const __m256i even_01 = _mm256_unpacklo_epi64(y0, y1), odd_01 = _mm256_unpackhi_epi64(y0, y1);
  const __m256i even_23 = _mm256_unpacklo_epi64(y2, y3), odd_23 = _mm256_unpackhi_epi64(y2, y3);
  return {V64{_mm256_permute2x128_si256(even_01, even_23, 0x20)}, V64{_mm256_permute2x128_si256(odd_01, odd_23, 0x20)},
          V64{_mm256_permute2x128_si256(even_01, even_23, 0x31)}, V64{_mm256_permute2x128_si256(odd_01, odd_23, 0x31)}};
#endif
}

// XXH64's round of one stripe lane: rotl(acc + lane * P2, 31) * P1.
HWY_INLINE V64 xxh64_round(V64 acc, V64 lane) {
  return Lane8Steps<true>::mix1(hn::Add(acc, Lane8Steps<true>::mix0(lane)));
}
// XXH64's merge of the four stripe accumulators (layout::xxh64_merge_lanes).
HWY_INLINE V64 xxh64_merge_lanes(V64 v1, V64 v2, V64 v3, V64 v4) {
  const D64 d;
  const auto merge_round = [&](V64 h, V64 v) {
    const V64 k = Lane8Steps<true>::mix1(Lane8Steps<true>::mix0(v));  // round(0, v)
    return hn::Add(mul64(hn::Xor(h, k), layout::kXxhPrime1), hn::Set(d, layout::kXxhPrime4));
  };
  const V64 h = hn::Add(hn::Add(rotl64<1>(v1), rotl64<7>(v2)), hn::Add(rotl64<12>(v3), rotl64<18>(v4)));
  return merge_round(merge_round(merge_round(merge_round(h, v1), v2), v3), v4);
}

// The hash of the string at data[lo, lo + len) per lane, every len at most
// kMax (kShortStringMax or kVectorStringMax: the short or the long form).
// Each lane reads its own string in 32-byte windows, the last one reaching
// up to 31 bytes past the string's end: the caller asks only where every
// lane's windows lie inside data, which holds at least 32 bytes (lanes with
// no window left read at data). A loop runs for as long as its longest lane
// needs, the others masked.
template <bool kXxh, std::uint64_t kMax>
HWY_INLINE V64 hash_vector_strings(const std::uint8_t* data, V64 lo, V64 len, HashSpec spec) {
  const D64 d;
  V64 h;
  V64 at = lo;     // the lanes' bytes after XXH64's stripes
  V64 rest = len;  // and how many
  if constexpr (kXxh && kMax >= 32) {
    // Stripes of 32 bytes into four accumulators, while 32 bytes remain.
    const V64 stripes = hn::ShiftRight<5>(len);
    h = hn::Set(d, spec.seed + layout::kXxhPrime5);
    const auto striped = hn::Gt(stripes, hn::Zero(d));
    if (!hn::AllFalse(d, striped)) {
      V64 v1 = hn::Set(d, spec.seed + layout::kXxhPrime1 + layout::kXxhPrime2);
      V64 v2 = hn::Set(d, spec.seed + layout::kXxhPrime2);
      V64 v3 = hn::Set(d, spec.seed);
      V64 v4 = hn::Set(d, spec.seed - layout::kXxhPrime1);
      for (std::uint64_t s = 0;; ++s) {
        const auto active = hn::Lt(hn::Set(d, s), stripes);
        if (hn::AllFalse(d, active)) break;
        const Words32 w = load_words32(data, hn::IfThenElseZero(active, hn::Add(lo, hn::Set(d, 32 * s))));
        v1 = hn::IfThenElse(active, xxh64_round(v1, w.w0), v1);
        v2 = hn::IfThenElse(active, xxh64_round(v2, w.w1), v2);
        v3 = hn::IfThenElse(active, xxh64_round(v3, w.w2), v3);
        v4 = hn::IfThenElse(active, xxh64_round(v4, w.w3), v4);
      }
      h = hn::IfThenElse(striped, xxh64_merge_lanes(v1, v2, v3, v4), h);
      const V64 bytes = hn::ShiftLeft<5>(stripes);
      at = hn::Add(lo, bytes);
      rest = hn::Sub(len, bytes);
    }
    h = hn::Add(h, len);
  } else if constexpr (kXxh) {
    h = hn::Add(hn::Set(d, spec.seed + layout::kXxhPrime5), len);
  } else {
    h = hn::Xor(hn::Set(d, spec.seed), mul64(len, layout::kMurmurM));
  }
  // The rest in windows of 32 bytes (after XXH64's stripes one): its whole
  // 8-byte lanes, then the word holding its last len % 8 bytes (the tail),
  // their first byte its lowest and the bytes above them not the string's.
  const V64 whole = hn::And(rest, hn::Set(d, ~std::uint64_t{7}));
  const V64 tail_window = hn::And(whole, hn::Set(d, ~std::uint64_t{31}));
  const V64 tail_word = hn::And(hn::ShiftRight<3>(whole), hn::Set(d, 3));
  V64 tail = hn::Zero(d);
  constexpr std::uint64_t kRestMax = kXxh ? 31 : kMax;
  for (std::uint64_t c = 0; c <= kRestMax; c += 32) {
    const auto active = hn::Lt(hn::Set(d, c), rest);
    if (hn::AllFalse(d, active)) break;
    const Words32 w = load_words32(data, hn::IfThenElseZero(active, hn::Add(at, hn::Set(d, c))));
    h = hn::IfThenElse(hn::Lt(hn::Set(d, c), whole), Lane8Steps<kXxh>::lane(h, w.w0), h);
    h = hn::IfThenElse(hn::Lt(hn::Set(d, c + 8), whole), Lane8Steps<kXxh>::lane(h, w.w1), h);
    h = hn::IfThenElse(hn::Lt(hn::Set(d, c + 16), whole), Lane8Steps<kXxh>::lane(h, w.w2), h);
    h = hn::IfThenElse(hn::Lt(hn::Set(d, c + 24), whole), Lane8Steps<kXxh>::lane(h, w.w3), h);
    const V64 low = hn::IfThenElse(hn::Eq(tail_word, hn::Set(d, 1)), w.w1, w.w0);
    const V64 high = hn::IfThenElse(hn::Eq(tail_word, hn::Set(d, 3)), w.w3, w.w2);
    const V64 word = hn::IfThenElse(hn::Gt(tail_word, hn::Set(d, 1)), high, low);
    tail = hn::IfThenElse(hn::Eq(tail_window, hn::Set(d, c)), word, tail);
  }
  const V64 tail_bytes = hn::And(len, hn::Set(d, 7));
  const auto has_rest = hn::Ne(tail_bytes, hn::Zero(d));
  if (!hn::AllFalse(d, has_rest)) {
    if constexpr (kXxh) {
      const auto has4 = hn::And(has_rest, hn::Gt(tail_bytes, hn::Set(d, 3)));
      const V64 word4 = hn::And(tail, hn::Set(d, std::uint64_t{0xFFFFFFFF}));
      h = hn::IfThenElse(has4, xxh64_tail4(h, word4), h);
      tail = hn::IfThenElse(has4, hn::ShiftRight<32>(tail), tail);
      const V64 bytes = hn::IfThenElse(has4, hn::Sub(tail_bytes, hn::Set(d, 4)), tail_bytes);
      for (std::uint64_t j = 0; j < 3; ++j) {
        const auto more = hn::And(has_rest, hn::Lt(hn::Set(d, j), bytes));
        h = hn::IfThenElse(more, xxh64_tail1(h, hn::And(tail, hn::Set(d, std::uint64_t{0xFF}))), h);
        tail = hn::ShiftRight<8>(tail);
      }
    } else {
      // tail_bytes in 1..7: the mask below keeps its 8 * tail_bytes low bits.
      const V64 keep = hn::Sub(hn::Shl(hn::Set(d, std::uint64_t{1}), hn::ShiftLeft<3>(tail_bytes)),
                               hn::Set(d, std::uint64_t{1}));
      h = hn::IfThenElse(has_rest, mul64(hn::Xor(h, hn::And(tail, keep)), layout::kMurmurM), h);
    }
  }
  return Lane8Steps<kXxh>::finish(h);
}
#endif  // the targets of kVectorStrings

// The width of every string of offsets[0..count] (count >= 1) if it is 8 or
// 16 for all of them (fixed-width keys), else 0.
template <class Offset>
HWY_INLINE std::uint64_t uniform_width(const Offset* offsets, std::size_t count) {
  const auto width = static_cast<std::uint64_t>(offsets[1] - offsets[0]);
  if (width != 8 && width != 16) return 0;
  // Most mixed batches fail here, without the scan.
  if (static_cast<std::uint64_t>(offsets[count] - offsets[0]) != width * count) return 0;
  std::uint64_t differ = 0;  // no early exit: the loop vectorises
  for (std::size_t i = 0; i < count; ++i) {
    differ |= static_cast<std::uint64_t>(offsets[i + 1] - offsets[i]) ^ width;
  }
  return differ == 0 ? width : 0;
}

// uniform_width of the batch's strings [begin, begin + count) at offsets:
// the batch's fixed width where its check found one (KeyBatch::fixed_width:
// every window of it has that width), else from a scan of the window's
// offsets. Skipping that scan (offsets last read when the batch was checked,
// a cold batch's 4 MiB earlier): hashing 16-byte strings 1.10-1.14x as fast,
// 8-byte 1.20-1.23x, on the Intel guest (docs/PERF-NOTES.md, "Fixed-width
// strings found by the batch check").
template <class Offset>
HWY_INLINE std::uint64_t window_width(const detail::KeyBatch& keys, const Offset* offsets,
                                      std::size_t count) {
  return keys.fixed_width != 0 ? keys.fixed_width : uniform_width(offsets, count);
}

// The first byte of string `begin` of a batch of 16-byte strings
// (detail::is_string16_batch: they lie back to back).
HWY_INLINE const std::uint8_t* string_start(const detail::KeyBatch& keys, std::size_t begin) {
  return keys.data + (keys.kind == detail::KeyKind::Offsets32 ? static_cast<const std::int32_t*>(keys.keys)[begin]
                                                              : static_cast<const std::int64_t*>(keys.keys)[begin]);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
// Strings of exactly 16 bytes (fixed-width keys: UUIDs, IPv6 addresses) lie
// back to back: a vector's worth are read with plain loads and split into
// their first and second 8 bytes, instead of gathered.
inline constexpr bool kString16Vectors = true;

// Stands for the 16-byte strings' pipeline (hash_width16_pipelined_as) where
// a fused loop takes a Hash type (Xxh64U64, Murmur64AU64): its keys are the
// strings' bytes, back to back.
template <bool kXxh>
struct String16Pipeline {
  using Key = std::uint8_t;
  static constexpr bool kXxhHash = kXxh;
};
template <class Hash>
inline constexpr bool kIsString16Pipeline = false;
template <bool kXxh>
inline constexpr bool kIsString16Pipeline<String16Pipeline<kXxh>> = true;

struct String16Halves {
  V64 first, second;  // string i's first and second 8 bytes in lane i
};

// The Lanes(D64) 16-byte strings from p: AVX-512 reads eight with two loads
// and one two-table permute per half; AVX2 four, with an unpack and a lane
// permute per half.
HWY_INLINE String16Halves load_string16_halves(const std::uint8_t* p) {
#if HWY_TARGET == HWY_AVX2
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
  const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
  // Per 128-bit half: strings 0 and 2, then 1 and 3; 0xD8 puts them in order.
  return {V64{_mm256_permute4x64_epi64(_mm256_unpacklo_epi64(x, y), 0xD8)},
          V64{_mm256_permute4x64_epi64(_mm256_unpackhi_epi64(x, y), 0xD8)}};
#else
  const __m512i x = _mm512_loadu_si512(p), y = _mm512_loadu_si512(p + 64);
  const __m512i first = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i second = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  return {V64{_mm512_permutex2var_epi64(x, first, y)},
          V64{_mm512_permutex2var_epi64(x, second, y)}};
#endif
}

// One step of the middle of the 16-byte strings pipeline below: each vector
// that stages 0-3 gave moves on one stage (the caller loads stage 0's next
// vectors into a0 and b0 after, and takes stage 5's hashes from h4 before).
// bloom_add_keys.cc's loop for 16-byte strings steps the same pipeline.
template <bool kXxh>
HWY_INLINE void advance_string16_stages(V64 start, V64& h4, V64& h3, V64& h2, V64& b2, V64& a1,
                                        V64& b1, V64 a0, V64 b0) {
  using Steps = Lane8Steps<kXxh>;
  h4 = Steps::finish0(h3);
  h3 = Steps::fold(h2, b2);
  h2 = Steps::fold(start, a1);
  b2 = b1;
  a1 = Steps::mix1(a0);
  b1 = Steps::mix1(b0);
}

// A whole batch of 16-byte strings back to back from p, as a software pipeline
// (hash-inl.h says why): six stages of at most two independent multiplies, each
// step advancing five vectors in flight by one stage. The two 8-byte lanes a
// and b are mixed apart (stages 0-1), folded into h one after the other (2-3)
// and h is finished (4-5), Lane8Steps' pieces in the one-shot order. Hashes
// `vectors` steps of Lanes(D64) + kScalar strings: the vector's, then kScalar
// more hashed in scalar code as it loads (kString16ScalarKeys says why). On
// AVX2, whose 64-bit multiplies are emulated (mul64), it is 1.5x as fast as the
// scalar loop (hash_each_of_width): hashing alone 7.66-8.60 against 5.09-5.36
// TSC cycles per key, Zen 5 guest.
// (docs/PERF-NOTES.md, "AVX2 pipeline for 16-byte strings")
template <bool kXxh, std::size_t kScalar = 0, class AfterStep = NoAfterStep>
HWY_INLINE void hash_width16_pipelined_as(const std::uint8_t* p, std::size_t vectors, HashSpec spec,
                                          std::uint64_t* out,
                                          const AfterStep& after = AfterStep()) {
  constexpr bool kAfter = !std::is_same_v<AfterStep, NoAfterStep>;
  const D64 d;
  const std::size_t n = hn::Lanes(d);
  const std::size_t per_step = n + kScalar;
  using Steps = Lane8Steps<kXxh>;
  const V64 start = hn::Set(d, Steps::start(spec.seed, 16));
  // State after stage S of the vector loaded S + 1 steps ago.
  V64 a0 = hn::Zero(d), b0 = a0, a1 = a0, b1 = a0, h2 = a0, b2 = a0, h3 = a0, h4 = a0;
  // Inlined into run_pipeline's three loops, so that the vectors in flight
  // stay in registers: GCC had left the step out of line on every target,
  // its eight vectors loaded and stored through the captures at every step
  // (family 6 model 167 guest, 5 alternated rounds of 5: hashing 16-byte
  // strings AVX2 1.193, AVX3_DL 1.119; HLL add 1.173 / 1.151).
  const auto step = [&](std::size_t load, std::size_t store, bool loads, bool stores)
      __attribute__((always_inline)) {
    if (stores) {
      hn::StoreU(Steps::finish1(h4), d, out + store);
      if constexpr (kAfter) {
        if (store != 0) after(out, store - per_step, per_step);
      }
    }
    advance_string16_stages<kXxh>(start, h4, h3, h2, b2, a1, b1, a0, b0);
    if (loads) {
      const std::uint8_t* g = p + load * 16;
      for (std::size_t b = 0; b < 16 * per_step; b += 64) prefetch_stream(g + b);
      const String16Halves halves = load_string16_halves(g);
      a0 = Steps::mix0(halves.first);
      b0 = Steps::mix0(halves.second);
      if constexpr (kScalar != 0) {
        for (std::size_t j = n; j < per_step; ++j) {
          out[load + j] = kXxh ? layout::xxh64(g + 16 * j, 16, spec.seed)
                               : layout::murmur64a(g + 16 * j, 16, spec.seed);
        }
      }
    }
  };
  run_pipeline(vectors, per_step, 5, step);  // stages 0..5: stored five steps after the load
  if constexpr (kAfter) {
    if (vectors != 0) after(out, (vectors - 1) * per_step, per_step);  // the last step stored
  }
}
// 16-byte strings hashed in scalar code beside each step's vector (AVX2; as
// u64 keys, hash-inl.h): the integer multiplier works beside the emulated
// vector ones. How many is the vendor's form (avx2_string16_hash(),
// vendor_forms.h): AMD's one, compiled here (Zen 4 guest, AVX2 pinned,
// against two: hashing alone 1.136, HLL add 1.169, Bloom add 1.030; none
// 1.033 / 1.117 / 1.017), Intel's two, compiled in avx2_hash_intel.cc
// (family 6 model 167 guest: hashing alone 291.5 / 305.4 / 322.2 M keys/s with
// none / one / two; its core peaks at four to six).
// (docs/PERF-NOTES.md, "Scalar 16-byte strings beside the AVX2 pipeline")
inline constexpr std::size_t kString16ScalarKeys =
    HWY_TARGET == HWY_AVX2 ? scalar_keys(Avx2String16Hash::kOneScalarKey) : 0;
#if HWY_TARGET == HWY_AVX2
inline constexpr std::size_t kString16ScalarKeysIntel = scalar_keys(Avx2String16Hash::kTwoScalarKeys);
#endif
// Hashes the leading whole steps of `count` 16-byte strings, kScalar of each
// step in scalar code; returns how many.
template <std::size_t kScalar>
HWY_INLINE std::size_t hash_width16_pipelined_with(const std::uint8_t* p, std::size_t count,
                                                   HashSpec spec, std::uint64_t* out) {
  const std::size_t per_step = hn::Lanes(D64()) + kScalar;
  const std::size_t vectors = count / per_step;
  if (vectors == 0) return 0;
  spec.kind == HashKind::Xxh64 ? hash_width16_pipelined_as<true, kScalar>(p, vectors, spec, out)
                               : hash_width16_pipelined_as<false, kScalar>(p, vectors, spec, out);
  return vectors * per_step;
}
#if HWY_TARGET == HWY_AVX2
// hash_width16_pipelined and hash_width16_screened in Intel's form, defined in
// avx2_hash_intel.cc (below hash_u64_intel_forms, which says why).
std::size_t hash_width16_intel_forms(const std::uint8_t* p, std::size_t count, HashSpec spec,
                                     std::uint64_t* out);
std::size_t hash_width16_screened_intel_forms(const std::uint8_t* p, std::size_t count,
                                              HashSpec spec, std::uint64_t screen,
                                              std::uint64_t* passed);
#endif
// Hashes the leading whole steps of `count` 16-byte strings, in the forms
// this CPU's vendor takes on AVX2; returns how many.
HWY_INLINE std::size_t hash_width16_pipelined(const std::uint8_t* p, std::size_t count,
                                              HashSpec spec, std::uint64_t* out) {
#if HWY_TARGET == HWY_AVX2
  if (avx2_string16_hash() == Avx2String16Hash::kTwoScalarKeys) {
    return hash_width16_intel_forms(p, count, spec, out);
  }
#endif
  return hash_width16_pipelined_with<kString16ScalarKeys>(p, count, spec, out);
}
#else
inline constexpr bool kString16Vectors = false;
HWY_INLINE std::size_t hash_width16_pipelined(const std::uint8_t*, std::size_t, HashSpec,
                                              std::uint64_t*) {
  return 0;  // never called: kString16Vectors is false
}
#endif

#if HWY_TARGET == HWY_AVX2
// u64 keys hashed in Intel's forms (avx2_u64_hash(), vendor_forms.h):
// hash_fixed and hash_fixed_screened of Hash64Bit<kXxh,
// Avx2U64Hash::kMuludqTwoScalarKeys>. Defined in a translation unit of their
// own, avx2_hash_intel.cc: instantiated in simd.cc (at GCC's default
// inlining budget, which cpu/CMakeLists.txt has raised since), they changed
// GCC's inlining of the other forms' pipelines there (their steps left out
// of line: HLL add of XXH64 u64 keys 746 -> 518 M keys/s on the Intel guest).
void hash_u64_intel_forms(const std::uint64_t* keys, std::size_t count, HashSpec spec,
                          std::uint64_t* out);
std::size_t hash_u64_screened_intel_forms(const std::uint64_t* keys, std::size_t count,
                                          HashSpec spec, std::uint64_t screen,
                                          std::uint64_t* passed);
#endif

// count u64 keys from `keys` (any alignment: hash-inl.h loads them so), in
// the forms this CPU's vendor takes on AVX2.
HWY_INLINE void hash_u64_keys(const std::uint64_t* keys, std::size_t count, HashSpec spec,
                              std::uint64_t* out) {
#if HWY_TARGET == HWY_AVX2
  if (avx2_u64_hash() == Avx2U64Hash::kMuludqTwoScalarKeys) {
    return hash_u64_intel_forms(keys, count, spec, out);
  }
#endif
  return spec.kind == HashKind::Xxh64 ? hash_fixed<Xxh64U64>(keys, count, spec, out)
                                      : hash_fixed<Murmur64AU64>(keys, count, spec, out);
}

// count 8-byte strings back to back from p (where kPipelinedHash): each
// hashes as the u64 key of its bytes, so they are hashed as a column of u64
// keys at p, whatever its alignment, with the u64 keys' scalar keys and
// vendor forms: on AVX2 1.29x as fast as a pipeline of vector lanes only in
// AMD's forms (Intel guest). (docs/PERF-NOTES.md, "8-byte strings hashed as
// u64 keys")
HWY_INLINE void hash_width8(const std::uint8_t* p, std::size_t count, HashSpec spec,
                            std::uint64_t* out) {
  hash_u64_keys(reinterpret_cast<const std::uint64_t*>(p), count, spec, out);
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// Eight strings of exactly 8 or 16 bytes lie back to back in 64 or 128
// bytes: plain loads (load_string16_halves) instead of gathers.

template <bool kXxh, std::uint64_t kLen>
HWY_INLINE V64 hash_fixed_width_strings(const std::uint8_t* p, HashSpec spec) {
  const D64 d;
  V64 h = hn::Set(d, Lane8Steps<kXxh>::start(spec.seed, kLen));
  const auto step = [&](V64 lane) { h = Lane8Steps<kXxh>::lane(h, lane); };
  if constexpr (kLen == 8) {
    step(hn::LoadU(d, reinterpret_cast<const std::uint64_t*>(p)));
  } else {
    static_assert(kLen == 16);
    const String16Halves halves = load_string16_halves(p);
    step(halves.first);
    step(halves.second);
  }
  return Lane8Steps<kXxh>::finish(h);
}

// The group's hashes if every string has the same length 8 or 16.
HWY_INLINE bool hash_fixed_width_group(const std::uint8_t* data, V64 lo, V64 len, HashSpec spec,
                                       std::uint64_t* out) {
  const D64 d;
  const std::uint64_t first = hn::GetLane(len);
  if (first != 8 && first != 16) return false;
  if (!hn::AllTrue(d, hn::Eq(len, hn::Set(d, first)))) return false;
  const std::uint8_t* p = data + hn::GetLane(lo);  // Arrow strings are contiguous
  const bool xxh = spec.kind == HashKind::Xxh64;
  V64 h;
  if (first == 8) {
    h = xxh ? hash_fixed_width_strings<true, 8>(p, spec)
            : hash_fixed_width_strings<false, 8>(p, spec);
  } else {
    h = xxh ? hash_fixed_width_strings<true, 16>(p, spec)
            : hash_fixed_width_strings<false, 16>(p, spec);
  }
  hn::StoreU(h, d, out);
  return true;
}

// Hashes a batch of fixed-width strings: of 16 bytes, its leading whole steps
// as a pipeline; of 8, all of it as u64 keys. Returns how many keys it hashed
// (0 if the batch is not one width 8 or 16, or is shorter than a vector).
template <class Offset>
HWY_INLINE std::size_t hash_uniform_width(const detail::KeyBatch& keys, const Offset* offsets,
                                          std::size_t count, HashSpec spec, std::uint64_t* out) {
  if (count < hn::Lanes(D64())) return 0;
  const std::uint64_t width = window_width(keys, offsets, count);
  if (width == 0) return 0;
  const std::uint8_t* p = keys.data + offsets[0];
  if (width == 16) return hash_width16_pipelined(p, count, spec, out);
  hash_width8(p, count, spec, out);
  return count;
}
#else
HWY_INLINE bool hash_fixed_width_group(const std::uint8_t*, V64, V64, HashSpec, std::uint64_t*) {
  return false;
}
template <class Offset>
HWY_INLINE std::size_t hash_uniform_width(const detail::KeyBatch&, const Offset*, std::size_t,
                                          HashSpec, std::uint64_t*) {
  return 0;
}
#endif

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
template <class Offset>
void hash_strings(const detail::KeyBatch& keys, std::size_t begin, std::size_t count, HashSpec spec,
                  std::uint64_t* out) {
  const auto* offsets = static_cast<const Offset*>(keys.keys) + begin;
  const std::uint8_t* data = keys.data;
  const D64 d;
  const std::size_t n = hn::Lanes(d);
  const bool xxh = spec.kind == HashKind::Xxh64;
  std::size_t i = 0;
  // Fixed-width groups read 8 bytes at least, the other forms 32-byte
  // windows: smaller data (a handful of tiny strings) stays scalar.
  const bool windows_fit = keys.data_size >= 32;
  const V64 data_size = hn::Set(d, static_cast<std::uint64_t>(keys.data_size));
  if (keys.data_size >= 8 && count >= n) {
    i = hash_uniform_width(keys, offsets, count, spec, out);
    for (; i <= count - n; i += n) {
      prefetch_stream(offsets + i);
      const V64 lo = load_offsets(offsets + i);
      const V64 len = hn::Sub(load_offsets(offsets + i + 1), lo);
      // The group's bytes, kStreamAheadBytes ahead: its first four lines (all
      // of a group of short strings), and below for the long form the rest
      // (longer strings take the scalar loop, whose pace the hardware
      // prefetcher keeps). The long form's lanes read as many places at once:
      // on AVX-512 with two lines a group, enough for 16-byte strings, it
      // waited on DRAM (strings of 25-72 bytes: 44 against 95 M keys/s), and
      // with 1 KiB, strings of 100-400 bytes hashed at 0.59 of the rate with
      // all.
      const std::uint8_t* group = data + hn::GetLane(lo);
      for (std::uint64_t b = 0; b < 256; b += 64) prefetch_stream(group, b);
      if (hash_fixed_width_group(data, lo, len, spec, out + i)) continue;
      const bool short_form = hn::AllTrue(d, hn::Lt(len, hn::Set(d, kShortStringMax + 1)));
      const bool long_form = !short_form && hn::AllTrue(d, hn::Lt(len, hn::Set(d, kVectorStringMax + 1)));
      // The vector forms read 32-byte windows: a group with a window past the
      // data's end (the batch's last strings) takes the scalar loop too.
      const V64 windows_end = hn::Add(lo, hn::And(hn::Add(len, hn::Set(d, 31)), hn::Set(d, ~std::uint64_t{31})));
      const bool in_data = windows_fit && hn::AllFalse(d, hn::Gt(windows_end, data_size));
      if (HWY_UNLIKELY((!short_form && !long_form) || !in_data)) {
        for (std::size_t l = 0; l < n; ++l) {
          const auto at = static_cast<std::size_t>(offsets[i + l]);
          out[i + l] = layout::hash_bytes(spec, data + at, static_cast<std::size_t>(offsets[i + l + 1]) - at);
        }
        continue;
      }
      V64 h;
      if (long_form) {
        const auto span = static_cast<std::uint64_t>(offsets[i + n]) - hn::GetLane(lo);
        for (std::uint64_t b = 256; b < span; b += 64) prefetch_stream(group, b);  // < n * 512 bytes
        h = xxh ? hash_vector_strings<true, kVectorStringMax>(data, lo, len, spec)
                : hash_vector_strings<false, kVectorStringMax>(data, lo, len, spec);
      } else {
        h = xxh ? hash_vector_strings<true, kShortStringMax>(data, lo, len, spec)
                : hash_vector_strings<false, kShortStringMax>(data, lo, len, spec);
      }
      hn::StoreU(h, d, out + i);
    }
  }
  if (i < count) detail::hash_keys_reference(keys, begin + i, count - i, spec, out + i);
}
#endif

// Outside AVX-512 (whose groups find them), a batch of one width, 8 or 16
// bytes, is hashed by the reference's functions with the width a
// compile-time constant: straight-line code per key, without the loop over
// the bytes and the branches on the length (16-byte strings, AVX2, Zen 5
// guest: 10.38 -> 7.91 TSC cycles per key). AVX2 hashes the whole steps of
// 16- and 8-byte strings faster still, pipelined.
// (docs/PERF-NOTES.md, "Fixed-width string loops (hash_each_of_width)")
template <std::size_t kWidth>
HWY_INLINE void hash_each_of_width(const std::uint8_t* p, std::size_t count, HashSpec spec,
                                   std::uint64_t* out) {
  if (spec.kind == HashKind::Xxh64) {
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = layout::xxh64(p + kWidth * i, kWidth, spec.seed);
    }
  } else {
    for (std::size_t i = 0; i < count; ++i) {
      out[i] = layout::murmur64a(p + kWidth * i, kWidth, spec.seed);
    }
  }
}

template <class Offset>
void hash_string_keys(const detail::KeyBatch& keys, std::size_t begin, std::size_t count,
                      HashSpec spec, std::uint64_t* out) {
#if !(HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL)  // AVX-512's hash_strings finds these itself
  const auto* offsets = static_cast<const Offset*>(keys.keys) + begin;
  const std::uint64_t width = count != 0 ? window_width(keys, offsets, count) : 0;
  const std::uint8_t* first = width != 0 ? keys.data + offsets[0] : nullptr;
  if (width == 16) {
    std::size_t done = 0;
    if constexpr (kString16Vectors) done = hash_width16_pipelined(first, count, spec, out);
    return hash_each_of_width<16>(first + 16 * done, count - done, spec, out + done);
  }
  if (width == 8) {
    if constexpr (kPipelinedHash) return hash_width8(first, count, spec, out);  // AVX2
    return hash_each_of_width<8>(first, count, spec, out);
  }
#endif
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
  if constexpr (kVectorStrings) return hash_strings<Offset>(keys, begin, count, spec, out);
#endif
  detail::hash_keys_reference(keys, begin, count, spec, out);
}

inline void hash_keys(const detail::KeyBatch& keys, std::size_t begin, std::size_t count,
                      HashSpec spec, std::uint64_t* out) {
  const bool xxh = spec.kind == HashKind::Xxh64;
  if (keys.kind == detail::KeyKind::Offsets32) {
    return hash_string_keys<std::int32_t>(keys, begin, count, spec, out);
  }
  if (keys.kind == detail::KeyKind::Offsets64) {
    return hash_string_keys<std::int64_t>(keys, begin, count, spec, out);
  }
  if (!kVectorHash) return detail::hash_keys_reference(keys, begin, count, spec, out);
  switch (keys.kind) {
    case detail::KeyKind::U64:
      return hash_u64_keys(static_cast<const std::uint64_t*>(keys.keys) + begin, count, spec, out);
    case detail::KeyKind::U32: {
      const auto* k = static_cast<const std::uint32_t*>(keys.keys) + begin;
      return xxh ? hash_fixed<Xxh64U32>(k, count, spec, out)
                 : hash_fixed<Murmur64AU32>(k, count, spec, out);
    }
    default:
      break;
  }
  detail::hash_keys_reference(keys, begin, count, spec, out);
}

#if HWY_TARGET == HWY_AVX2
// hash_screened of `count` 16-byte strings back to back from p on AVX2: the
// pipeline hands each step's hashes to the pack a step after their stores,
// as hash_fixed_screened does for u64 keys (the scalar pack runs beside the
// vector pipes that bind the pipeline), where hashing them all and then
// packing them took a pass of its own. The last strings (fewer than a step)
// are hashed one by one.
// (docs/PERF-NOTES.md, "Screening in the AVX2 hash pipeline")
template <bool kXxh, std::size_t kScalar>
std::size_t hash_width16_screened(const std::uint8_t* p, std::size_t count, HashSpec spec,
                                  std::uint64_t screen, std::uint64_t* passed) {
  const std::size_t per_step = hn::Lanes(D64()) + kScalar;
  const std::size_t vectors = count / per_step;
  std::size_t m = 0;
  if (vectors != 0) {
    if (skip_pays(static_cast<std::uint32_t>(hwy::PopCount(screen)))) {
      const auto pack_few = [&m, screen](std::uint64_t* out, std::size_t first, std::size_t n) {
        m = pack_step<true>(out, first, n, screen, m);
      };
      hash_width16_pipelined_as<kXxh, kScalar>(p, vectors, spec, passed, pack_few);
    } else {
      const auto pack = [&m, screen](std::uint64_t* out, std::size_t first, std::size_t n) {
        m = pack_step<false>(out, first, n, screen, m);
      };
      hash_width16_pipelined_as<kXxh, kScalar>(p, vectors, spec, passed, pack);
    }
  }
  for (std::size_t i = vectors * per_step; i < count; ++i) {
    const std::uint64_t h = kXxh ? layout::xxh64(p + 16 * i, 16, spec.seed)
                                 : layout::murmur64a(p + 16 * i, 16, spec.seed);
    m = append_passing(h, screen, passed, m);
  }
  return m;
}

// The first string's bytes if strings [begin, begin + count) are all 16
// bytes long, else null.
template <class Offset>
HWY_INLINE const std::uint8_t* width16_strings(const detail::KeyBatch& keys, std::size_t begin,
                                               std::size_t count) {
  const auto* offsets = static_cast<const Offset*>(keys.keys) + begin;
  return count != 0 && window_width(keys, offsets, count) == 16 ? keys.data + offsets[0] : nullptr;
}
#endif

// hash_screened (kernels.hpp), on AVX-512 and AVX2. Fixed-width keys keep the
// passing hashes as the pipeline computes them, or hash and then pack them
// (hash_fixed_screened, kScreenInPipeline); so do 16-byte strings on AVX2
// (hash_width16_screened); other kinds are hashed into `passed` and packed in
// place (each vector is read before any store reaches it: m <= i). Elsewhere
// the kernel is absent and src/hyperloglog.cc hashes, then lets the HLL
// kernel screen.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
inline std::size_t hash_keys_screened(const detail::KeyBatch& keys, std::size_t begin,
                                      std::size_t count, HashSpec spec, std::uint64_t screen,
                                      std::uint64_t* passed) {
  const bool xxh = spec.kind == HashKind::Xxh64;
  if (keys.kind == detail::KeyKind::U64) {
    const auto* k = static_cast<const std::uint64_t*>(keys.keys) + begin;
#if HWY_TARGET == HWY_AVX2
    if (avx2_u64_hash() == Avx2U64Hash::kMuludqTwoScalarKeys) {
      return hash_u64_screened_intel_forms(k, count, spec, screen, passed);
    }
#endif
    return xxh ? hash_fixed_screened<Xxh64U64>(k, count, spec, screen, passed)
               : hash_fixed_screened<Murmur64AU64>(k, count, spec, screen, passed);
  }
  if (keys.kind == detail::KeyKind::U32) {
    const auto* k = static_cast<const std::uint32_t*>(keys.keys) + begin;
    return xxh ? hash_fixed_screened<Xxh64U32>(k, count, spec, screen, passed)
               : hash_fixed_screened<Murmur64AU32>(k, count, spec, screen, passed);
  }
#if HWY_TARGET == HWY_AVX2
  if (detail::has_offsets(keys.kind)) {
    const std::uint8_t* p = keys.kind == detail::KeyKind::Offsets32
                                ? width16_strings<std::int32_t>(keys, begin, count)
                                : width16_strings<std::int64_t>(keys, begin, count);
    if (p != nullptr) {
      if (avx2_string16_hash() == Avx2String16Hash::kTwoScalarKeys) {
        return hash_width16_screened_intel_forms(p, count, spec, screen, passed);
      }
      return xxh ? hash_width16_screened<true, kString16ScalarKeys>(p, count, spec, screen, passed)
                 : hash_width16_screened<false, kString16ScalarKeys>(p, count, spec, screen, passed);
    }
  }
#endif
  hash_keys(keys, begin, count, spec, passed);
#if HWY_TARGET == HWY_AVX2
  return pack_passing(passed, count, screen);
#else
  const D64 d;
  const V64 screen_v = hn::Set(d, screen);
  const std::size_t n = hn::Lanes(d);
  std::size_t m = 0, i = 0;
  for (; i + n <= count; i += n) m = append_passing(hn::LoadU(d, passed + i), screen_v, passed, m);
  return pack_step<false>(passed, i, count - i, screen, m);  // the last count % 8
#endif
}
inline constexpr auto kHashScreened = &hash_keys_screened;
#else
inline constexpr std::size_t (*kHashScreened)(const detail::KeyBatch&, std::size_t, std::size_t,
                                              HashSpec, std::uint64_t, std::uint64_t*) = nullptr;
#endif

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_HASH_KEYS_INL_H_
