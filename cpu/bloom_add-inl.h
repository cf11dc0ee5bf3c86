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

#include "bloom_common-inl.h"
#include "cacheline_bit_table.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"
#include "vendor_forms.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// cacheline512 add of one key, k compiled in (no loop control between the
// probes): k read-modify-writes of the block's words, each position from a
// scalar multiply. AVX-512 and AVX2 add whole steps of eight keys with
// add_cacheline_groups below and leave this loop the last n % 8 keys
// (kAddInSteps; or_key_bits says how each writes a key); other targets add
// every key here. Other position arithmetic and table masks measured no
// faster (docs/PERF-NOTES.md, "Per-key add (cacheline_set)").
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
// Where each part comes from on AVX-512 depends on the CPU's vendor
// (avx512_add_masks(), cpu/vendor_forms.h). AMD (Zen 4 and 5) has four vector
// pipes for the shifts, which beat k 64-byte loads from a 32 KiB
// one-bit-per-line table there (Zen 5, 256 KiB, k = 6: 4.09 against 6.93
// TSC cycles per key at best; Zen 4, whose pipes take two passes for 512-bit
// work and bound its add at 1.4 cycles a probe: the table 0.81-0.97 of the
// shifts' M keys/s). Intel cores give 512-bit ALU work two ports
// (vpsrlvd one), so there a filter in the cache (no prefetching) takes each
// part as one 64-byte load from kCachelineBit, at the byte offset buffered
// in place of the position (family 6 model 167, k = 6: 3.46-3.53 against
// 3.78-3.84 ms per 2^20 keys); filters that miss the cache keep the shifts
// (32 MiB: 5.10-5.24 against 6.00-6.24 with the table). For k <= 8 the
// table's offsets come two per 64-bit load (pre-hashed add 406-446 ->
// 454-469 M keys/s); past k = 8 each has its own load (pairs lost at k = 9).
// The forms tried and their figures: docs/PERF-NOTES.md, "AVX-512 add:
// shifts, table masks and the other forms tried".
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
// multiply per probe, unlike cacheline_set). The key's mask built in two
// 32-byte halves instead, as AVX-512 builds it, takes about 36 vector ALU
// operations per key at k = 6 where the words take none, and lost on the
// Zen 3 guest (AVX2 served) at every filter size; masks from small tables
// lost on Intel. On the Zen 3 guest the word stores bind this add (about
// one a cycle to scattered words). The forms tried and their figures:
// docs/PERF-NOTES.md, "AVX2 add: word read-modify-writes and the forms
// tried"; the Zen 3 guest's bounds: "What bounds the AVX2 Bloom kernels on
// the Zen 3 guest".
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
  const BlockPrefetch ahead = kPrefetch ? block_prefetch(f) : BlockPrefetch{};
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, around.primed, prefetch_end, ahead);
  add_group_offsets<kK, kFromTable>(hashes, num_blocks, offsets[0]);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t i = g * kAddGroup;
    const AddGroupOffsets<kK>& now = offsets[g & 1];
    if (g + 1 < groups) {
      add_group_offsets<kK, kFromTable>(hashes + i + kAddGroup, num_blocks, offsets[~g & 1]);
    }
    prefetch_stream(hashes + i);
    for (std::size_t l = 0; l < kAddGroup; ++l) {
      if constexpr (kPrefetch) prefetch_ahead<true>(f, hashes, i + l, prefetch_end, ahead);
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
  const BlockPrefetch ahead = kPrefetch ? block_prefetch(f) : BlockPrefetch{};
  // After the steps, the last n % 8 keys' blocks are prefetched already: the
  // steps reach the prefetch distances past their last key.
  if constexpr (kPrefetch) {
    if (added == 0) prefetch_first<true>(f, hashes, around.primed, prefetch_end, ahead);
  }
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) prefetch_ahead<true>(f, hashes, i, prefetch_end, ahead);
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
