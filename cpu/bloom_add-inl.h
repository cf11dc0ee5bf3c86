// Per-target blocked Bloom filter add kernels (DESIGN.md §3): each key's k
// bits are ORed into its block, the block written once where the target
// allows. tests/simd_bloom_kernels_test.cc proves identity with the scalar
// reference.

#if defined(PROBKIT_CPU_BLOOM_ADD_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_ADD_INL_H_
#undef PROBKIT_CPU_BLOOM_ADD_INL_H_
#else
#define PROBKIT_CPU_BLOOM_ADD_INL_H_
#endif

#include <hwy/highway.h>

#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <utility>

#include "add_masks.h"
#include "bloom_common-inl.h"
#include "cacheline_bit_table.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// cacheline512 add of one key, k compiled in (no loop control between the
// probes): k read-modify-writes of the block's words, each position from a
// scalar multiply. AVX-512 and AVX2 add whole steps of eight keys with
// add_cacheline_groups below and leave this loop the last n % 8 keys
// (kAddInSteps; or_key_bits says how each writes a key); other targets add
// every key here. Earlier, on the Emerald
// Rapids guest (AVX2, k = 6, 256 KiB, medians of 11 interleaved library
// runs): the OR of k lines of a one-bit-per-line table, as two 32-byte
// halves, was slower (pre-hashed 196 vs 216 M keys/s, u64 129 vs 159); masks
// built by compare and masked OR per word group 5x slower. Every other
// position arithmetic measured as fast or slower there: bit and word from
// lookup tables, positions from vectors stored for the scalar ORs,
// load/bts/store, lea addresses. On Zen 5 the stored positions won
// (AVX2's or_key_bits below).
template <std::uint32_t kK>
HWY_INLINE void cacheline_set(std::uint32_t* block, std::uint64_t h) {
  static_assert(kK >= 1 && kK <= layout::kMaxCachelineK);
  const auto x = static_cast<std::uint32_t>(h);
  for (std::uint32_t i = 0; i < kK; ++i) {
    // position = product >> 23 (layout::cacheline_probe): its word is
    // product >> 28, its bit the low five bits of the product rotated by
    // 23 (one rorx; the shift takes its count mod 32, so the mask is free).
    const std::uint32_t product = x * layout::bloom_salt(i);
    block[product >> 28] |= 1u << (std::rotr(product, 23) & 31);
  }
}

HWY_INLINE void sbbf_set(std::uint32_t* block, std::uint64_t h) {
  const DSbbf d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  for (std::size_t p = 0; p < layout::kSbbfWords; p += hn::Lanes(d)) {
    hn::StoreU(hn::Or(hn::LoadU(d, block + p), sbbf_bits(d, x, p)), d, block + p);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
// AVX-512 and AVX2 cacheline512 add, eight keys per step, software-pipelined:
// the probe positions of the next eight keys and their block offsets come
// from vector multiplies (vpmulld, vpmuludq) stored to a small buffer, while
// this step's keys set their bits (or_key_bits): on AVX-512 each key builds
// its 16-word mask in a register and writes its block once, on AVX2 each
// probe ORs its bit into its word. The buffer is written a whole step before
// it is read, so the reads never wait on a store still in flight.
//
// Probe p at position a sets word w to bit a - 32w when that lies in
// [0, 32). vpsrlvd gives 0 for shift counts of 32 or more, so the part is
// one vpsubd (the position broadcast from the buffer, folded into the
// instruction) and one vpsrlvd: 0x80000000 >> (32w + 31 - a). On AVX-512
// parts are ORed three at a time by vpternlogd.
//
// On AMD the shifts replaced k 64-byte lines of a 32 KiB one-bit-per-line
// table (then (2k - 3) / 4 line offsets from the buffer, two at k = 6, the
// others from scalar multiplies): their loads and address arithmetic were
// the bound, and the table shared L1 with the filter's lines; the ALU work
// that replaces them has four vector pipes on Zen 5. Zen 5
// guest, AVX3_DL, one thread, TSC cycles per key, min / median of 12-20
// alternated passes of the library's hash + add over u64 keys, table against
// registers: 256 KiB filter, k = 6: 6.93 / 9.37 against 4.09 / 5.10 (three
// rounds alike); 16 KiB 7.47 / 9.28 against 5.34 / 5.53; 32 MiB 23.9 / 24.2
// against 18.8 / 21.9; 256 KiB k = 1, 8, 16: 3.94 / 8.32 / 16.6 against
// 2.69 / 4.74 / 10.2 (mins); 16-byte strings 10.6 / 10.9 against 9.4 / 9.7.
//
// Intel cores give 512-bit ALU work two ports (vpsrlvd one), so there the
// shifts bound the add: k = 6 needs about 15 ALU operations per key. So on
// Intel (avx512_add_masks(), cpu/add_masks.h) a filter in the cache (no
// prefetching) takes each part as one 64-byte load from kCachelineBit, at
// the byte offset buffered in place of the position: no ALU work but the
// ORs. Family 6 model 167 guest (Intel, AVX-512, 2 vCPUs), AVX3_DL, one
// thread, ms per 2^20 keys (medians of 3) in three or four rounds of alternated
// binaries, shifts against table: bloom_add_k (u64 keys, hashing included,
// 256 KiB) k = 4 3.06-3.16 against 2.94-3.05, k = 6 3.78-3.84 against
// 3.46-3.53, k = 8 4.57-4.71 against 3.99-4.03, k = 12 6.52-6.62 against
// 5.39-5.51, k = 16 7.72-7.91 against 6.27-6.62; pre-hashed keys 2.97-3.09
// against 2.58-2.83, 16-byte strings 4.88-5.07 against 4.61-4.72. Filters
// that miss the cache keep the shifts: 32 MiB, u64, 5.10-5.24 against
// 6.00-6.24 with the table (whose 32 KiB likely push the prefetched blocks
// out of L1).
// Two offsets per 64-bit load (or_key_bits' kPairs, k <= 8) ran alike in the
// standalone copy below, but in the library, alternated (5-7 rounds, medians
// of 5, four runs, M keys/s) took the add of pre-hashed keys (256 KiB, k = 6)
// 445.5 -> 469.4, 429.6 -> 464.9, 406.4 -> 455.2 and 417.1 -> 453.9; u64 keys
// (bloom_add_keys) alike (399.0 / 395.1, k = 4 465.7 / 454.9, k = 8 327.6 /
// 338.4); with pairs at every k, k = 9 lost (273.2 -> 256.9, 272.3 ->
// 259.3), so past k = 8 each offset has its load. Tried there too: slower were offsets from
// scalar multiplies for the probes past the first (2k - 3) / 4, k / 2 or none
// (as the table's first form; k = 6: 3.62-3.95 against 3.31-3.55 all loaded),
// one to four shifted parts mixed into the loaded ones (in the standalone copy
// below, 16 KiB / 256 KiB, 6 loaded 7.6 / 8.9, 5 8.0 / 8.7-9.2, 4 8.3 /
// 9.0-9.2, 3 8.3 / 9.1-9.5, 2 8.8 / 9.2-9.5, none 9.4 / 9.7-10.0: each
// shifted part cost more than the loads it saved), the k word read-modify-
// writes AVX2 uses (k = 6 / 16: 4.15-4.40 / 8.44-9.32), and the first four to
// eight probes as a mask, then the others as words (k = 9: 5.6-9.2, each
// word's load waits for the mask's store). On the Emerald
// Rapids guest, masks built from scalar positions -- a broadcast from a
// general register per probe -- had measured 1.3x slower than
// read-modify-writes. On the model 167 guest, in a standalone copy of this
// loop (k = 6, pre-hashed, core cycles per key at the 3.75 GHz its imul
// chain read, medians of 51-101 passes over 2^16 keys, two runs; an earlier
// copy called each variant through a function pointer, and its figures, 1-2
// cycles higher, included that call): 256 KiB filter, the table 8.6-8.9 (8
// KiB: 7.8), two offsets per 64-bit load 8.5 (7.7), shifts 9.7-10.2, each
// probe's part as a masked broadcast of its bit (a 16-bit lane mask from a
// 32-byte table or a shift, the bit from a 128-byte table) 17.2-17.4, two
// such chains a key 12.2-12.6. Of the table's 8.6-8.9, the masks built and
// not written took 6.7-6.9, and a fixed mask written to each key's block
// (the offsets still computed) 5.0-5.3; six random 64-byte loads from a 32
// KiB table a key, their offsets shifted out of one register, took 4.7-5.7
// alone (consecutive lines: 0.58 a load), so the table's loads are most of
// the mask's cost. A bare loop writing random 64-byte lines of a 256 KiB
// buffer ran at 2.4-2.8 TSC cycles per line (prefetchw 8-64 lines ahead:
// 2.4-2.6), 1.7-1.9 in 8 KiB, against 6.7 for the library's add of
// pre-hashed keys.
inline constexpr std::size_t kAddGroup = 8;  // keys per step: one vector of hashes

// Positions buffered per key: probes 0-7 two keys per vector multiply, or
// all 16 one key per multiply when k > 8.
template <std::uint32_t kK>
inline constexpr std::size_t kBufferedProbes = kK <= 8 ? 8 : 16;

template <std::uint32_t kK>
struct AddGroupOffsets {
  // Key l's probe positions at kBufferedProbes<kK> * l (kFromTable: 64 x
  // each, the byte offset of its line in kCachelineBit).
  alignas(64) std::uint32_t positions[kAddGroup * kBufferedProbes<kK>];
  alignas(64) std::uint64_t block_bytes[kAddGroup];
};

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
using BlockCountVec = __m512i;

HWY_INLINE __m512i broadcast_block_count(std::uint64_t num_blocks) {
  return _mm512_set1_epi64(static_cast<long long>(num_blocks));
}

// Position (product >> 23), or its table line's byte offset (product >> 17
// less its low six bits).
template <bool kFromTable>
HWY_INLINE __m512i buffered_position(__m512i product) {
  if constexpr (kFromTable) {
    return _mm512_and_si512(_mm512_srli_epi32(product, 17), _mm512_set1_epi32(~std::int32_t{63}));
  } else {
    return _mm512_srli_epi32(product, 23);
  }
}

// The offsets of the eight keys whose hashes h holds.
template <std::uint32_t kK, bool kFromTable>
HWY_INLINE void add_group_offsets_of(__m512i h, __m512i num_blocks, AddGroupOffsets<kK>& out) {
  if constexpr (kBufferedProbes<kK> == 8) {
    const __m512i salt = _mm512_broadcast_i32x8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt)));
    for (int j = 0; j < 4; ++j) {
      const __m512i x = _mm512_permutexvar_epi32(key_pair_pick(j), h);  // hashes 2j, 2j + 1
      _mm512_store_si512(out.positions + 16 * j,
                         buffered_position<kFromTable>(_mm512_mullo_epi32(x, salt)));
    }
  } else {
    const __m512i salt = _mm512_loadu_si512(layout::kBloomSalt);
    for (int l = 0; l < static_cast<int>(kAddGroup); ++l) {
      const __m512i x = _mm512_permutexvar_epi32(_mm512_set1_epi32(2 * l), h);  // hash l
      _mm512_store_si512(out.positions + 16 * l,
                         buffered_position<kFromTable>(_mm512_mullo_epi32(x, salt)));
    }
  }
  // block_index(h) = ((h >> 32) * num_blocks) >> 32, times 64 bytes. vpmuludq
  // reads 32 bits of each: num_blocks < 2^32 (BloomFilter checks it).
  const __m512i block =
      _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(h, 32), num_blocks), 32);
  _mm512_store_si512(out.block_bytes, _mm512_slli_epi64(block, 6));
}

template <std::uint32_t kK, bool kFromTable>
HWY_INLINE void add_group_offsets(const std::uint64_t* hashes, __m512i num_blocks,
                                  AddGroupOffsets<kK>& out) {
  add_group_offsets_of<kK, kFromTable>(_mm512_loadu_si512(hashes), num_blocks, out);
}

// ORs the bits at the key's kK positions into its block, written once.
template <std::uint32_t kK, bool kFromTable>
HWY_INLINE void or_key_bits(char* block, const std::uint32_t* positions) {
  // Lane w: 32w + 31, so that (32w + 31 - a) is a's shift from bit 31 of word w.
  const __m512i top =
      _mm512_set_epi32(511, 479, 447, 415, 383, 351, 319, 287, 255, 223, 191, 159, 127, 95, 63, 31);
  const __m512i bit31 = _mm512_set1_epi32(static_cast<std::int32_t>(0x80000000u));
  // The table's line offsets two per 64-bit load for k <= 8 (the figures
  // above kAddGroup).
  constexpr bool kPairs = kFromTable && kK <= 8;
  std::uint64_t pairs[kPairs ? (kK + 1) / 2 : 1];
  if constexpr (kPairs) {
    for (std::uint32_t i = 0; i < (kK + 1) / 2; ++i) {
      std::memcpy(&pairs[i], positions + 2 * i, sizeof(pairs[i]));
      asm("" : "+r"(pairs[i]));  // one load, split in registers (not two 32-bit loads)
    }
  }
  const auto part = [&](std::uint32_t p) {
    if constexpr (kPairs) {
      const auto offset =
          static_cast<std::uint32_t>(p % 2 == 0 ? pairs[p / 2] : pairs[p / 2] >> 32);
      return _mm512_load_si512(reinterpret_cast<const char*>(kCachelineBit.word) + offset);
    } else if constexpr (kFromTable) {
      return _mm512_load_si512(reinterpret_cast<const char*>(kCachelineBit.word) + positions[p]);
    } else {
      const __m512i shift =
          _mm512_sub_epi32(top, _mm512_set1_epi32(static_cast<std::int32_t>(positions[p])));
      return _mm512_srlv_epi32(bit31, shift);
    }
  };
  constexpr int kOr3 = 0xFE;  // a | b | c
  __m512i mask = part(0);
  std::uint32_t p = 1;
  for (; p + 1 < kK; p += 2) mask = _mm512_ternarylogic_epi32(mask, part(p), part(p + 1), kOr3);
  const __m512i old = _mm512_loadu_si512(block);
  _mm512_storeu_si512(block, p < kK ? _mm512_ternarylogic_epi32(mask, part(p), old, kOr3)
                                    : _mm512_or_si512(mask, old));
}

#else  // HWY_AVX2
using BlockCountVec = __m256i;

HWY_INLINE __m256i broadcast_block_count(std::uint64_t num_blocks) {
  return _mm256_set1_epi64x(static_cast<long long>(num_blocks));
}

template <std::uint32_t kK, bool kFromTable>
HWY_INLINE void add_group_offsets(const std::uint64_t* hashes, __m256i num_blocks,
                                  AddGroupOffsets<kK>& out) {
  static_assert(!kFromTable, "AVX2 sets words, with no table (kMasksFromTable)");
  const auto* salt = reinterpret_cast<const __m256i*>(layout::kBloomSalt);
  for (std::size_t l = 0; l < kAddGroup; ++l) {
    const __m256i x = _mm256_set1_epi32(static_cast<std::int32_t>(hashes[l]));
    auto* positions = reinterpret_cast<__m256i*>(out.positions + l * kBufferedProbes<kK>);
    _mm256_store_si256(positions,
                       _mm256_srli_epi32(_mm256_mullo_epi32(x, _mm256_loadu_si256(salt)), 23));
    if constexpr (kBufferedProbes<kK> == 16) {
      _mm256_store_si256(
          positions + 1,
          _mm256_srli_epi32(_mm256_mullo_epi32(x, _mm256_loadu_si256(salt + 1)), 23));
    }
  }
  // As on AVX-512, four hashes per vpmuludq.
  for (std::size_t l = 0; l < kAddGroup; l += 4) {
    const __m256i h = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(hashes + l));
    const __m256i block =
        _mm256_srli_epi64(_mm256_mul_epu32(_mm256_srli_epi64(h, 32), num_blocks), 32);
    _mm256_store_si256(reinterpret_cast<__m256i*>(out.block_bytes + l),
                       _mm256_slli_epi64(block, 6));
  }
}

// ORs the bit at each of the key's kK positions into its word of the block:
// kK read-modify-writes, the positions those add_group_offsets buffered (no
// multiply per probe, unlike cacheline_set).
//
// AVX2 had the AVX-512 mask in two 32-byte halves too (per probe a broadcast
// from the buffer, two vpsubd, two vpsrlvd and two vpor; per key two 32-byte
// read-modify-writes): about 36 vector ALU operations per key at k = 6, where
// the words take none. In the cache the words took the fewest cycles: Zen 5
// guest, AVX2 pinned, 256 KiB, TSC cycles per key, scalar-multiply words
// (cacheline_set) / masks / buffered words: the kernel alone on pre-hashed
// keys, medians of 15 alternated rounds, k = 6 6.60-6.91 / 5.79-6.20 /
// 5.28-5.59 (16 KiB alike), k = 1 2.44 / 2.74 / 1.62, k = 8 8.43-8.94 /
// 7.72-8.23 / 6.60, k = 16 19.30 / 17.88 / 12.39; the library's add, one
// thread, 2^20 keys a call, medians of 9 rounds, cacheline_set's words
// against buffered ones: u64 9.07-9.12 against 7.23-7.41, pre-hashed
// 6.41-6.62 against 4.76-4.80 (in a busier minute 8.88-10.33 against
// 8.42-8.80 and 6.41-7.88 against 5.55-6.01). On a Zen 3 guest (AVX2 served; vpsrlvd two a
// cycle), library add, 256 KiB, medians of 9-11 alternated batches, three
// runs, words against masks: pre-hashed 10.41 / 15.98 / 10.58 against 11.59 /
// 17.72 / 11.88, u64 27.38 / 15.07 / 14.38 against 31.48 / 18.03 / 17.22.
// Each probe buffered instead as a 64-bit pair (the word's byte offset, its
// bit << 32: one shift per probe where the position takes two, the pairs from
// vector shifts and vpunpck{l,h}dq) ran alike there: 256 KiB, medians of 15
// alternated batches, positions against pairs, pre-hashed 11.23 / 11.16
// against 11.50 / 11.90, u64 13.91 / 13.96 against 13.92 / 13.82, k = 10 u64
// 20.02 against 20.48. The general-register work is not the bound. Nor
// are the buffer's loads: the first one, two or three probes of each key
// from scalar multiplies (as cacheline_set), the rest from the buffer, ran
// slower (256 KiB, TSC cycles per key, min / median of 15 alternated
// batches: pre-hashed 9.54 / 10.17 against 11.16 / 11.55, 12.04 / 12.39 and
// 11.73 / 12.33; u64 12.57 / 13.36 against 14.00 / 14.91, 14.83 / 16.23 and
// 13.45 / 15.08). The stores are: this core retires about one a cycle to
// scattered words (docs/HACKING.md), six a key at k = 6. The buffer's own
// stores halved (positions as 16 bits, two keys a 32-byte store by
// vpackusdw, the step's keys unrolled) ran alike: 256 KiB pre-hashed, min /
// median of 31 alternated batches, three runs, 9.79 / 10.58, 9.67 / 11.29,
// 9.52 / 10.32 against 9.16 / 10.09, 9.79 / 11.29, 9.50 / 10.15; 16 KiB
// 9.53 / 9.64, 9.19 / 9.55, 9.33 / 9.93 against 8.86 / 9.10, 8.99 / 9.70,
// 9.33 / 9.92.
//
// Masks from smaller tables (two aligned 32-byte loads a probe from a 16 KiB
// table of one-word halves, the high half 256 bytes before the low; or a 2
// KiB table of 64-byte windows onto a lone word, unaligned loads) lost to the
// words in a standalone copy on the family 6 model 167 guest (Intel, AVX2
// flags, pre-hashed, TSC cycles per key, medians of 41 alternated passes over
// 2^16 keys, 256 KiB filter): k = 6 words 8.6-8.9, 16 KiB table 9.0-9.5, 2
// KiB windows 10.0-10.6; k = 4 6.4-7.0 / 7.0-7.5 / 7.7-8.3; k = 8 10.9-11.6 /
// 10.9-11.5 / 12.7-14.2. Nor did a bit mask and word offset per probe
// buffered by vector shifts (k = 6 9.8). Not tried on AMD, where the stores
// bind but the table's loads take the same three address units. On the same
// guest the library's add with each next step's eight blocks prefetched
// (prefetchw, once their offsets are buffered) moved -0.8% to +5% in two runs of
// 5 and 7 alternated rounds (medians of 5, M keys/s): pre-hashed 324.6 ->
// 336.7 and 329.7 -> 333.3, u64 228.7 -> 234.9 and 228.1 -> 233.4, 16-byte
// strings 153.6 -> 160.1 and 158.7 -> 162.5, k = 8 201.4 -> 202.2, k = 12
// 147.7 -> 146.5. Not landed: on the Zen 3 guest this add ran as fast with a
// 16 KiB filter as with 256 KiB (docs/HACKING.md), so there the prefetches
// would be work and nothing more.
//
// For filters that miss the cache the masks had stayed, measured on Zen 5
// with AVX2 pinned (fewer, wider read-modify-writes; library, u64, masks
// against words: 2 MiB 9.09 against 9.99, 8 MiB 8.86 against 9.63, 32 MiB
// 11.37 against 13.06; earlier, against cacheline_set's words, 1 GiB 25.1
// against 27.8). Zen 5 serves AVX-512, though, and on the Zen 3 guest,
// a machine that serves AVX2, the words won there too: library add, one
// thread, TSC cycles per key, medians of 11 alternated calls of 2^20 keys,
// masks against words, three to five runs each: 1 GiB pre-hashed 91 / 126 /
// 113 / 115 / 152 against 62 / 94 / 73 / 72 / 101, u64 132 / 160 / 108 / 191
// / 157 against 89 / 131 / 80 / 139 / 129; 32 MiB pre-hashed 38.5 / 39.9 /
// 39.1 against 35.7 / 38.0 / 36.2, u64 46.3 / 46.3 / 42.4 against 42.7 /
// 43.6 / 38.4; 4 MiB pre-hashed 22.7 / 23.0 / 18.1 against 20.8 / 19.4 /
// 17.3, u64 27.5 / 27.8 / 28.0 against 25.2 / 25.6 / 25.3 (ties in its
// quietest minutes). A microbenchmark there (1 GiB, prefetchw 96 keys ahead,
// TSC cycles per key, medians of 9-11 passes) shows the cost is not the
// writes: two 32-byte read-modify-writes per key ran at 38-49, as fast as
// reading the lines (35-46), and at 78-164 when each key also built its mask
// in registers (77 with 64 keys' masks built first, then written). Likely
// cause: behind a miss at the head of the window, each key's three dozen
// vector results fill the 160 vector registers after a few keys, so few
// misses are in flight; the words use general registers. Not measured on an
// Intel core without AVX-512, where the masks would take about 12 cycles per
// key on three vector ports, and where the Emerald Rapids guest once found
// buffered positions no faster than cacheline_set's multiplies.
template <std::uint32_t kK, bool kFromTable>
HWY_INLINE void or_key_bits(char* block, const std::uint32_t* positions) {
  static_assert(!kFromTable);
  auto* const words = reinterpret_cast<std::uint32_t*>(block);
  for (std::uint32_t p = 0; p < kK; ++p) words[positions[p] >> 5] |= 1u << (positions[p] & 31);
}
#endif

// Whether cacheline512 adds go in steps of eight keys (add_cacheline_groups).
inline constexpr bool kAddInSteps = true;
// Whether a filter in the cache may take its masks from kCachelineBit
// (avx512_add_masks() says whether it does).
inline constexpr bool kMasksFromTable = HWY_TARGET != HWY_AVX2;

// Adds the first n - n % 8 keys; returns how many it added.
template <bool kPrefetch, std::uint32_t kK, bool kFromTable>
std::size_t add_cacheline_groups(const detail::BloomRef& f, const std::uint64_t* hashes,
                                 std::size_t n, detail::BloomLookahead around) {
  const std::size_t groups = n / kAddGroup;
  if (groups == 0) return 0;
  char* const words = reinterpret_cast<char*>(f.words);
  const BlockCountVec num_blocks = broadcast_block_count(f.num_blocks);
  AddGroupOffsets<kK> offsets[2];
  const std::size_t prefetch_end = n + around.ahead;
  const std::size_t distance = kPrefetch ? prefetch_distance(f) : 0;
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, around.primed, prefetch_end, distance);
  add_group_offsets<kK, kFromTable>(hashes, num_blocks, offsets[0]);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t i = g * kAddGroup;
    const AddGroupOffsets<kK>& now = offsets[g & 1];
    if (g + 1 < groups) {
      add_group_offsets<kK, kFromTable>(hashes + i + kAddGroup, num_blocks, offsets[~g & 1]);
    }
    prefetch_stream(hashes + i);
    for (std::size_t l = 0; l < kAddGroup; ++l) {
      if constexpr (kPrefetch) {
        if (i + l + distance < prefetch_end) prefetch_block<true>(f, hashes[i + l + distance]);
      }
      char* block = words + now.block_bytes[l];
      asm("" : "+r"(block));  // one register for the block's address
      or_key_bits<kK, kFromTable>(block, now.positions + l * kBufferedProbes<kK>);
    }
  }
  return groups * kAddGroup;
}
#else
inline constexpr bool kAddInSteps = false;  // the per-key loop adds every key
inline constexpr bool kMasksFromTable = false;
#endif

// kK: the filter's k, compiled in (parquet_sbbf's is always 8). kFromTable:
// the eight-key steps' masks from kCachelineBit (kMasksFromTable targets).
template <bool kPrefetch, BloomLayout kLayout, std::uint32_t kK, bool kFromTable = false>
void add_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
              detail::BloomLookahead around) {
  constexpr std::uint32_t kWords =
      kLayout == BloomLayout::Cacheline512 ? layout::kCachelineWords : layout::kSbbfWords;
  std::size_t added = 0;
  if constexpr (kLayout == BloomLayout::Cacheline512 && kAddInSteps) {
    added = add_cacheline_groups<kPrefetch, kK, kFromTable>(f, hashes, n, around);
    hashes += added;
    n -= added;
  }
  std::uint32_t* const words = f.words;  // copies: the word stores may alias f
  const std::uint64_t num_blocks = f.num_blocks;
  const std::size_t prefetch_end = n + around.ahead;
  const std::size_t distance = kPrefetch ? prefetch_distance(f) : 0;
  // After the steps, the last n % 8 keys' blocks are prefetched already: the
  // steps reach the prefetch distance past their last key.
  if constexpr (kPrefetch) {
    if (added == 0) prefetch_first<true>(f, hashes, around.primed, prefetch_end, distance);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + distance < prefetch_end) prefetch_block<true>(f, hashes[i + distance]);
    }
    if (i % 8 == 0) prefetch_stream(hashes + i);
    const std::uint64_t h = hashes[i];
    std::uint32_t* block = words + layout::block_index(h, num_blocks) * kWords;
#if HWY_ARCH_X86
    // One register for the block's address, so that each probe's store
    // addresses block + 4 * word directly (GCC otherwise recomputes it with
    // an lea per probe from the filter base and the block offset).
    asm("" : "+r"(block));
#endif
    if constexpr (kLayout == BloomLayout::Cacheline512) {
      cacheline_set<kK>(block, h);
    } else {
      sbbf_set(block, h);
    }
  }
}

using AddLoop = void (*)(const detail::BloomRef&, const std::uint64_t*, std::size_t,
                         detail::BloomLookahead);

// cacheline512 add loops for k = 1..16 (index k - 1), k compiled in.
template <bool kPrefetch, bool kFromTable, std::uint32_t... kKs>
constexpr std::array<AddLoop, sizeof...(kKs)> cacheline_add_loops(
    std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_loop<kPrefetch, BloomLayout::Cacheline512, kKs + 1, kFromTable>...};
}

// Whether f's adds build their masks from kCachelineBit: a cacheline512
// filter in the cache (no prefetching) on a CPU for which avx512_add_masks()
// picks the table.
HWY_INLINE bool masks_from_table(const detail::BloomRef& f) {
  return kMasksFromTable && f.layout == BloomLayout::Cacheline512 && prefetch_distance(f) == 0 &&
         avx512_add_masks() == AddMasks::kBitTable;
}

inline void bloom_add(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                      detail::BloomLookahead around) {
  using Ks = std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>;
  static constexpr auto kCachelineLoops = cacheline_add_loops<false, false>(Ks());
  static constexpr auto kCachelinePrefetchLoops = cacheline_add_loops<true, false>(Ks());
  // (Where kMasksFromTable is false, the same loops as kCachelineLoops.)
  static constexpr auto kCachelineTableLoops = cacheline_add_loops<false, kMasksFromTable>(Ks());
  const bool prefetch = prefetch_distance(f) != 0;
  if (f.layout == BloomLayout::Cacheline512) {
    if (masks_from_table(f)) return kCachelineTableLoops[f.k - 1](f, hashes, n, around);
    return (prefetch ? kCachelinePrefetchLoops : kCachelineLoops)[f.k - 1](f, hashes, n, around);
  }
  return prefetch ? add_loop<true, BloomLayout::ParquetSbbf, layout::kSbbfK>(f, hashes, n, around)
                  : add_loop<false, BloomLayout::ParquetSbbf, layout::kSbbfK>(f, hashes, n, around);
}
#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_ADD_INL_H_
