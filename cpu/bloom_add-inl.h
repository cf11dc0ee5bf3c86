// Per-target blocked Bloom filter add kernels (DESIGN.md §3): each key's k
// bits are ORed into its block, the block written once where the target
// allows. tests/simd_kernels_test.cc proves identity with the scalar
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
#include <utility>

#include "bloom_common-inl.h"
#include "cacheline_bit_table.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// cacheline512 add, k compiled in (no loop control between the probes).
//
// AVX-512: the key's 16-word mask is the OR of k lines of kCachelineBit (a
// 64-byte load each, combined three at a time by vpternlogd) and the block
// is written once. Other targets: k read-modify-writes of the block's words.
//
// Measured on the Emerald Rapids guest, k = 6, 256 KiB filter, one thread,
// M keys/s. Library, AVX3_DL, medians of 9 interleaved runs: table 250 vs
// read-modify-writes 209 pre-hashed, u64 190 vs 156, 16-byte strings 146 vs
// 128; 32 MiB 122 vs 115; 1 GiB alike (51.5, 51.4). The table's 32 KiB
// share L1 with the filter's lines; that cost is inside these figures.
// Microbenchmark, best of 15: table 322, read-modify-writes 224, and the
// floor, one 64-byte read-modify-write per random line with nothing else to
// do, ~620 (the bench's update probe). Slower: a mask built from the
// positions in registers (per probe a broadcast, a subtract and a variable
// shift: 1.3x slower than the read-modify-writes; or a broadcast, a compare
// and a masked OR per word group: 1.6x on AVX3, 5x on AVX2); a two-level
// table (a one-hot word line ANDed with a broadcast bit; 1.35x slower than
// the full one). Line offsets computed eight keys at a time in vectors pay
// only when computed a step ahead (add_cacheline_groups below). On AVX2 the
// table, as two 32-byte halves, was 1.1x faster in the microbenchmark but
// slower in the library (medians of 11 interleaved runs: pre-hashed 196 vs
// 216, u64 129 vs 159), so AVX2 keeps the read-modify-writes. Among their
// forms, every other position arithmetic measured as fast or slower: bit and
// word from lookup tables, positions from vectors stored for the scalar ORs
// (even a step ahead: alike in L1, 1.1x slower at 256 KiB), load/bts/store,
// lea addresses.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
inline constexpr bool kCachelineAddFromTable = true;
#else
inline constexpr bool kCachelineAddFromTable = false;
#endif

// Where probe i's line starts in kCachelineBit (one line per position).
HWY_INLINE std::uint32_t table_line_bytes(std::uint32_t x, std::uint32_t i) {
  return layout::cacheline_probe(x, i) * layout::kCachelineBytes;
}

// ORs the table lines at the given byte offsets (one per probe) into the
// block: the key's whole mask in registers, the block written once.
template <std::uint32_t kK>
HWY_INLINE void or_table_lines(std::uint32_t* block, const std::uint32_t* line_bytes) {
  const DBlock d;
  const char* table = reinterpret_cast<const char*>(kCachelineBit.word);
  for (std::size_t j = 0; j < layout::kCachelineWords; j += hn::Lanes(d)) {
    const auto part = [&](std::uint32_t i) {
      return hn::Load(d, reinterpret_cast<const std::uint32_t*>(table + line_bytes[i]) + j);
    };
    auto mask = part(0);
    std::uint32_t i = 1;
    for (; i + 1 < kK; i += 2) mask = hn::Or3(mask, part(i), part(i + 1));
    const auto old = hn::LoadU(d, block + j);
    hn::StoreU(i < kK ? hn::Or3(mask, part(i), old) : hn::Or(mask, old), d, block + j);
  }
}

template <std::uint32_t kK>
HWY_INLINE void cacheline_set(std::uint32_t* block, std::uint64_t h) {
  static_assert(kK >= 1 && kK <= layout::kMaxCachelineK);
  const auto x = static_cast<std::uint32_t>(h);
  if constexpr (kCachelineAddFromTable) {
    std::uint32_t line_bytes[kK];  // where probe i's table line starts
    for (std::uint32_t i = 0; i < kK; ++i) {
      line_bytes[i] = table_line_bytes(x, i);
    }
    or_table_lines<kK>(block, line_bytes);
  } else {
    for (std::uint32_t i = 0; i < kK; ++i) {
      // position = product >> 23 (layout::cacheline_probe): its word is
      // product >> 28, its bit the low five bits of the product rotated by
      // 23 (one rorx; the shift takes its count mod 32, so the mask is free).
      const std::uint32_t product = x * layout::bloom_salt(i);
      block[product >> 28] |= 1u << (std::rotr(product, 23) & 31);
    }
  }
}

HWY_INLINE void sbbf_set(std::uint32_t* block, std::uint64_t h) {
  const DSbbf d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  for (std::size_t p = 0; p < layout::kSbbfWords; p += hn::Lanes(d)) {
    hn::StoreU(hn::Or(hn::LoadU(d, block + p), sbbf_bits(d, x, p)), d, block + p);
  }
}

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
// AVX-512 cacheline512 add, eight keys per step, software-pipelined: the
// table offsets of the next eight keys' probes and their block offsets come
// from vector multiplies (vpmulld, vpmuludq) stored to a small buffer, while
// this step's keys OR their table lines into their blocks. Per key that
// leaves one scalar load per probe, where cacheline_set spends a scalar
// imul: those multiplies, all on one port, bounded the per-key loop (the
// step loop now mixes the two: kLoadedLineOffsets below). The
// buffer is written a whole step before it is read, so the reads never wait
// on a store still in flight: computed and read in the same step, it was
// 1.3x slower than the per-key loop. k = 6, pre-hashed keys, one thread,
// TSC cycles per key, best of 10 alternating runs of the library kernel on a
// 256 KiB filter: AVX3_DL 6.33 against 6.84, AVX3 6.44 against 6.84; with
// the filter in L1 (microbenchmark) 5.2 against 6.2. 32 MiB and 1 GiB
// filters measured alike.
inline constexpr std::size_t kAddGroup = 8;  // keys per step: one vector of hashes

// How many of a key's table-line offsets the step loop reads from the
// buffer; it computes the others from the hash with a scalar multiply. All
// loaded, the loads (k offsets, k table lines, the block and its offset) bound
// the loop on the load ports; all computed, the multiplies bound it on port 1.
// Balanced, (2k - 3) / 4 loaded: k = 6, pre-hashed keys, TSC cycles per key,
// best of 14 alternated runs, all loaded against 2 loaded: 16 KiB filter 6.12
// against 6.02, 256 KiB 6.98 against 6.41 (1 or 3 loaded: no better).
template <std::uint32_t kK>
inline constexpr std::uint32_t kLoadedLineOffsets = kK >= 2 ? (2 * kK - 3) / 4 : 0;
inline constexpr std::size_t kBufferedProbes = 8;  // probes 0-7: one key per half vector
static_assert(kLoadedLineOffsets<layout::kMaxCachelineK> <= kBufferedProbes);

struct AddGroupOffsets {
  // Key l's probes 0-7 at kBufferedProbes * l: two keys per vector multiply.
  alignas(64) std::uint32_t line_bytes[kAddGroup * kBufferedProbes];
  alignas(64) std::uint64_t block_bytes[kAddGroup];
};

template <std::uint32_t kK>
HWY_INLINE void add_group_offsets(const std::uint64_t* hashes, __m512i num_blocks,
                                  AddGroupOffsets& out) {
  const __m512i h = _mm512_loadu_si512(hashes);
  if constexpr (kLoadedLineOffsets<kK> != 0) {
    const __m512i salt = _mm512_broadcast_i32x8(
        _mm256_loadu_si256(reinterpret_cast<const __m256i*>(layout::kBloomSalt)));
    const __m512i line_of = _mm512_set1_epi32(~std::int32_t{63});
    for (int j = 0; j < 4; ++j) {
      const __m512i x = _mm512_permutexvar_epi32(key_pair_pick(j), h);  // hashes 2j, 2j + 1
      // (x * salt) >> 23 is the position; << 6 its line's byte offset.
      const __m512i line_bytes =
          _mm512_and_si512(_mm512_srli_epi32(_mm512_mullo_epi32(x, salt), 17), line_of);
      _mm512_store_si512(out.line_bytes + 2 * kBufferedProbes * j, line_bytes);
    }
  }
  // block_index(h) = ((h >> 32) * num_blocks) >> 32, times 64 bytes. vpmuludq
  // reads 32 bits of each: num_blocks < 2^32 (BloomFilter checks it).
  const __m512i block =
      _mm512_srli_epi64(_mm512_mul_epu32(_mm512_srli_epi64(h, 32), num_blocks), 32);
  _mm512_store_si512(out.block_bytes, _mm512_slli_epi64(block, 6));
}

// Adds the first n - n % 8 keys; returns how many it added.
template <bool kPrefetch, std::uint32_t kK>
std::size_t add_cacheline_groups(const detail::BloomRef& f, const std::uint64_t* hashes,
                                 std::size_t n) {
  const std::size_t groups = n / kAddGroup;
  if (groups == 0) return 0;
  char* const words = reinterpret_cast<char*>(f.words);
  const __m512i num_blocks = _mm512_set1_epi64(static_cast<long long>(f.num_blocks));
  AddGroupOffsets offsets[2];
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, n);
  add_group_offsets<kK>(hashes, num_blocks, offsets[0]);
  for (std::size_t g = 0; g < groups; ++g) {
    const std::size_t i = g * kAddGroup;
    const AddGroupOffsets& now = offsets[g & 1];
    if (g + 1 < groups) add_group_offsets<kK>(hashes + i + kAddGroup, num_blocks, offsets[~g & 1]);
    prefetch_stream(hashes + i);
    for (std::size_t l = 0; l < kAddGroup; ++l) {
      if constexpr (kPrefetch) {
        if (i + l + kPrefetchDistance < n)
          prefetch_block<true>(f, hashes[i + l + kPrefetchDistance]);
      }
      char* block = words + now.block_bytes[l];
      asm("" : "+r"(block));  // one register for the block's address
      std::uint32_t line_bytes[kK];
      const auto x = static_cast<std::uint32_t>(hashes[i + l]);
      for (std::uint32_t p = 0; p < kK; ++p) {
        line_bytes[p] = p < kLoadedLineOffsets<kK> ? now.line_bytes[l * kBufferedProbes + p]
                                                   : table_line_bytes(x, p);
      }
      or_table_lines<kK>(reinterpret_cast<std::uint32_t*>(block), line_bytes);
    }
  }
  return groups * kAddGroup;
}
#else
template <bool kPrefetch, std::uint32_t kK>
std::size_t add_cacheline_groups(const detail::BloomRef&, const std::uint64_t*, std::size_t) {
  return 0;  // the per-key loop adds every key
}
#endif

// kK: the filter's k, compiled in (parquet_sbbf's is always 8).
template <bool kPrefetch, BloomLayout kLayout, std::uint32_t kK>
void add_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n) {
  constexpr std::uint32_t kWords =
      kLayout == BloomLayout::Cacheline512 ? layout::kCachelineWords : layout::kSbbfWords;
  if constexpr (kLayout == BloomLayout::Cacheline512) {
    const std::size_t added = add_cacheline_groups<kPrefetch, kK>(f, hashes, n);
    hashes += added;
    n -= added;
  }
  std::uint32_t* const words = f.words;  // copies: the word stores may alias f
  const std::uint64_t num_blocks = f.num_blocks;
  if constexpr (kPrefetch) prefetch_first<true>(f, hashes, n);
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) {
      if (i + kPrefetchDistance < n) prefetch_block<true>(f, hashes[i + kPrefetchDistance]);
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

using AddLoop = void (*)(const detail::BloomRef&, const std::uint64_t*, std::size_t);

// cacheline512 add loops for k = 1..16 (index k - 1), k compiled in.
template <bool kPrefetch, std::uint32_t... kKs>
constexpr std::array<AddLoop, sizeof...(kKs)> cacheline_add_loops(
    std::integer_sequence<std::uint32_t, kKs...>) {
  return {&add_loop<kPrefetch, BloomLayout::Cacheline512, kKs + 1>...};
}

inline void bloom_add(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n) {
  static constexpr auto kCachelineLoops = cacheline_add_loops<false>(
      std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>());
  static constexpr auto kCachelinePrefetchLoops = cacheline_add_loops<true>(
      std::make_integer_sequence<std::uint32_t, layout::kMaxCachelineK>());
  const bool prefetch = filter_bytes(f) >= detail::kBloomPrefetchMinBytes;
  if (f.layout == BloomLayout::Cacheline512) {
    return (prefetch ? kCachelinePrefetchLoops : kCachelineLoops)[f.k - 1](f, hashes, n);
  }
  return prefetch ? add_loop<true, BloomLayout::ParquetSbbf, layout::kSbbfK>(f, hashes, n)
                  : add_loop<false, BloomLayout::ParquetSbbf, layout::kSbbfK>(f, hashes, n);
}
#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_ADD_INL_H_
