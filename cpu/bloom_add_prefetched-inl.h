// The loop of CpuKernels::bloom_add_keys past the cache (u64 keys and
// batches of 16-byte strings hashed and added in one loop, AVX-512), shared
// by bloom_add_keys.cc and, for one block owner's keys, by
// bloom_add_owned_keys.cc (CpuKernels::bloom_add_owned_keys): each in a
// translation unit of its own, so that neither's instantiations move GCC's
// inlining in the other's (the owned loop's, compiled beside them, changed
// the instructions of every loop in bloom_add_keys.cc).

#if defined(PROBKIT_CPU_BLOOM_ADD_PREFETCHED_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_ADD_PREFETCHED_INL_H_
#undef PROBKIT_CPU_BLOOM_ADD_PREFETCHED_INL_H_
#else
#define PROBKIT_CPU_BLOOM_ADD_PREFETCHED_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "bloom_add-inl.h"
#include "bloom_common-inl.h"
#include "hash-inl.h"
#include "hash_keys-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL

// Keys into a filter that misses the cache (one the kernels prefetch for):
// the hash pipeline stores each step's hashes (hash_fixed_pipelined's
// AfterStep), their blocks are prefetched as they are stored, into L2 where
// the kernels prefetch in two levels and for writing into L1 d.l2 - d.l1 keys
// later, and they are set d.l2 keys (d.l1 for one level) after their hashing,
// as add_cacheline_groups sets pre-hashed keys, each key's prefetches beside
// a key's bit setting. Hashed, then added, the hashing stopped every chunk's
// block prefetches for as long as it ran. Zen 4 guest, AVX3_DL, u64 keys,
// k = 6, one thread, public add, M keys/s, medians of 30-40 calls of 2^20
// keys alternated in one process with the hashed-then-added path: 1 GiB
// 126.6 -> 150.2 and 129.0 -> 151.8, 32 MiB 179.9 -> 218.7, 4 MiB 215.9 ->
// 226.3, 1 MiB 306.8 -> 328.7. With each step's sixteen prefetches issued
// together before its eight keys' bits, the loop lost (1 GiB 126.0 -> 109.4)
// (docs/PERF-NOTES.md, "Hashing in the loop for filters past the cache").
// Hash: the u64 keys' hash, or String16Pipeline for a batch of 16-byte
// strings, its pipeline picked by `if constexpr` here as in
// contains_hashing_prefetched (which says why not in a helper). Against
// hashed, then added, 16-byte strings: 1 GiB 1.12-1.13, 32 MiB 1.24-1.26, 4
// MiB 1.18-1.20. kLayout: parquet_sbbf (kK = 8) sets each key's words as
// add_loop does, the cacheline512 steps discarded at compile time: u64 keys
// 1 GiB 1.12-1.17, 32 MiB 1.14, 4 MiB 1.20-1.23; 16-byte strings 1.16-1.24,
// 1.20-1.28, 1.23-1.30 (docs/PERF-NOTES.md, "Hashing in the loop for filters
// past the cache").
//
// kOwned: bloom_add_owned_keys' loop, which adds only the keys whose hash is
// in `own` (one block owner's): each step's hashes, as the pipeline hands
// them over, are packed in place (vpcompressq) to the front of the scratch,
// and the steps above run over the packed hashes a whole step at a time, as
// they fill, the lead and prefetch distances counted in packed hashes.
template <class Hash, std::uint32_t kK, BloomLayout kLayout, bool kOwned>
HWY_INLINE void add_hashing_prefetched_body(const detail::BloomRef& f, const typename Hash::Key* keys,
                                            std::size_t count, HashSpec spec,
                                            [[maybe_unused]] detail::HashRange own, std::uint64_t* scratch) {
  static_assert(detail::kBloomPrefetchKeysAhead % kAddGroup == 0 && detail::kBloomNearPrefetchKeysAhead % kAddGroup == 0 &&
                    detail::kBloomL1PrefetchKeysAhead % kAddGroup == 0,
                "the steps add whole steps, from the first: the lead must be whole steps");
  char* const words = reinterpret_cast<char*>(f.words);
  [[maybe_unused]] const __m512i num_blocks = broadcast_block_count(f.num_blocks);
  const BlockPrefetch d = block_prefetch(f);
  // Keys between a key's hashing and its add: whole steps, as the pipeline stores them.
  const std::size_t lead = d.farthest();
  const std::size_t to_l1 = d.l2 != 0 ? d.l2 - d.l1 : 0;  // keys from the prefetch into L2 to that into L1
  // By step parity: one step's offsets are buffered a step ahead of its add (cacheline512).
  [[maybe_unused]] AddGroupOffsets<kK> offsets[2];
  const auto step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
    [[maybe_unused]] const AddGroupOffsets<kK>* now = nullptr;  // cacheline512: this step's buffered offsets
    if constexpr (kLayout == BloomLayout::Cacheline512) {
      if (first + kAddGroup >= lead) {
        const std::size_t next = first + kAddGroup - lead;
        add_group_offsets<kK, false>(hashes + next, num_blocks, offsets[(next / kAddGroup) & 1]);
      }
      now = first >= lead ? &offsets[((first - lead) / kAddGroup) & 1] : nullptr;
    }
    for (std::size_t l = 0; l < kAddGroup; ++l) {
      if (d.l2 != 0) {
        prefetch_block_to_l2(f, hashes[first + l]);
        if (first >= to_l1) prefetch_block<true>(f, hashes[first - to_l1 + l]);
      } else {
        prefetch_block<true>(f, hashes[first + l]);
      }
      if constexpr (kLayout == BloomLayout::ParquetSbbf) {
        // Each key's eight words set as add_loop sets them.
        if (first >= lead) {
          const std::uint64_t h = hashes[first - lead + l];
          std::uint32_t* block = f.words + layout::block_index(h, f.num_blocks) * layout::kSbbfWords;
          asm("" : "+r"(block));  // one register for the block's address
          sbbf_set(block, h);
        }
      } else if (now != nullptr) {
        char* block = words + now->block_bytes[l];
        asm("" : "+r"(block));  // one register for the block's address
        or_key_bits<kK, false>(block, now->positions + l * kBufferedProbes<kK>);
      }
    }
  };
  if constexpr (kOwned) {
    const __m512i lo = _mm512_set1_epi64(static_cast<long long>(own.lo));
    const __m512i span = _mm512_set1_epi64(static_cast<long long>(own.span));
    std::size_t owned = 0;    // scratch[0, owned): the hashes in `own` so far, packed
    std::size_t stepped = 0;  // of those, the ones the steps took (whole steps)
    // Packing writes a whole vector from scratch[owned], owned <= first: never
    // past this step's hashes, which the pipeline stored before this call.
    const auto pack_step = [&](std::uint64_t* hashes, std::size_t first, std::size_t) {
      const __m512i h = _mm512_loadu_si512(hashes + first);
      owned = append_lanes(_mm512_cmple_epu64_mask(_mm512_sub_epi64(h, lo), span), h, hashes, owned);
      if (owned >= stepped + kAddGroup) {
        step(hashes, stepped, kAddGroup);
        stepped += kAddGroup;
      }
    };
    std::size_t hashed;
    if constexpr (kIsString16Pipeline<Hash>) {
      hash_width16_pipelined_as<Hash::kXxhHash>(keys, count / kAddGroup, spec, scratch, pack_step);
      hashed = count / kAddGroup * kAddGroup;
    } else {
      hashed = hash_fixed_pipelined<false, Hash>(keys, count, spec, scratch, 0, pack_step);
    }
    for (std::size_t i = hashed; i < count; ++i) {
      std::uint64_t h;
      if constexpr (kIsString16Pipeline<Hash>) {
        h = layout::hash_bytes(spec, keys + 16 * i, 16);
      } else {
        h = hash_one(spec, keys[i]);
      }
      scratch[owned] = h;
      owned += own.contains(h) ? 1 : 0;
    }
    // As below, in packed hashes: the steps added [0, added) and asked for
    // the blocks up to `stepped`.
    const std::size_t added = stepped > lead ? stepped - lead : 0;
    add_loop<true, kLayout, kK, false>(f, scratch + added, owned - added,
                                       detail::BloomLookahead{stepped - added, 0});
  } else {
    std::size_t hashed;
    if constexpr (kIsString16Pipeline<Hash>) {
      hash_width16_pipelined_as<Hash::kXxhHash>(keys, count / kAddGroup, spec, scratch, step);
      hashed = count / kAddGroup * kAddGroup;
      for (std::size_t i = hashed; i < count; ++i) scratch[i] = layout::hash_bytes(spec, keys + 16 * i, 16);
    } else {
      hashed = hash_fixed_pipelined<false, Hash>(keys, count, spec, scratch, 0, step);
      for (std::size_t i = hashed; i < count; ++i) scratch[i] = hash_one(spec, keys[i]);
    }
    // The steps added keys [0, added); the rest have their blocks asked for as
    // far as the steps reached (into L2 up to `hashed`, into L1 up to hashed -
    // to_l1), and the add loop goes on from there.
    const std::size_t added = hashed > lead ? hashed - lead : 0;
    add_loop<true, kLayout, kK, false>(f, scratch + added, count - added, detail::BloomLookahead{hashed - added, 0});
  }
}

#endif  // HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_ADD_PREFETCHED_INL_H_
