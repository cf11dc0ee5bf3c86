// The interface every CPU backend implements (scalar reference in
// cpu/scalar.cc, Highway targets in cpu/simd.cc). The bulk driver
// (src/bulk.hpp) hashes keys in chunks and hands each chunk to these.
#pragma once
#include <cstddef>
#include <cstdint>

#include "probkit/detail/key_batch.hpp"
#include "probkit/layout/bloom.hpp"
#include "probkit/layout/hash.hpp"

namespace probkit::detail {

// Bloom filters of at least this many bytes miss the cache: the kernels
// prefetch their blocks some keys ahead, and the bulk driver hands each chunk
// of hashes the next keys' too, so that those pipelines do not restart with
// each chunk (src/bulk.hpp). Smaller filters sit in L2, and prefetching
// their blocks into L1 lost: on a Zen 3 guest (AVX2, 512 KiB L2), 256 KiB,
// each step prefetching the next step's blocks (the AVX2 fused contains, six
// keys a step; the add, eight, with prefetchw), TSC cycles per key, medians
// of 21 batches, three runs: contains 9.24-9.71 -> 9.81-10.32, add
// 12.68-13.22 -> 14.25-14.51.
inline constexpr std::uint64_t kBloomPrefetchMinBytes = std::uint64_t{1} << 20;
// From this size on a filter's blocks come mostly from DRAM, and the kernels
// prefetch them further ahead (into L2 kBloomPrefetchKeysAhead keys ahead,
// then into L1). Where the last level cache is shared (a guest's vCPUs beside
// other tenants), filters well below its size already come from DRAM: Zen 4
// guest (32 MiB L3), AVX3_DL, public API, one thread, u64 keys, call by call
// in one process, from 8 MiB against from 16 MiB, medians of 21 calls:
// contains 8 MiB 0.991-1.125, 10 MiB 1.154, 12 MiB 1.441, 14 MiB 2.041; add
// 1.189-1.224, 1.264, 1.430, 1.616; at 12 MiB 16-byte strings 1.380 / 1.288,
// parquet_sbbf contains 1.383, AVX2 pinned 1.219 / 1.035, two threads 1.033 /
// 1.015; from 4 MiB lost at 4 and 6 MiB (contains 0.828, 0.853)
// (docs/PERF-NOTES.md, "Two-level block prefetching from 8 MiB").
inline constexpr std::uint64_t kBloomFarPrefetchMinBytes = std::uint64_t{8} << 20;
// How many keys ahead the kernels prefetch a filter's blocks (0: they do not),
// and so how many hashes of the next keys a chunk carries for them
// (BloomLookahead::ahead). From DRAM the distance must cover the miss
// latency at the rate keys go by: Zen 5 guest (2.6 GHz TSC), public API, one
// thread, u64, k = 6, TSC cycles per key, medians of 11 calls of 2^20 keys,
// two rounds, 32 keys against 96: 1 GiB add 18.6-22.9 against 12.0-12.6 (64:
// 13.0-15.0), contains 16.2-19.3 against 11.7-12.3; 32 MiB add 15.6-20.8
// against 8.8-13.9; 16 MiB add 11.4 against 9.9, contains 10.1 against 7.1.
// In the L3 the longer distance lost when each call's first prefetches
// repeated the call before's hashes ahead (352 prefetches per 256-key chunk
// against 288; 8 MiB add min 5.2-5.4 against 5.8-6.5, 2 MiB 5.0-5.1 against
// 5.5-5.7), and without those repeats it still loses at 2 MiB and ties at 8
// (medians of 21 alternated calls, AVX3_DL: 2 MiB add 6.32 against 6.68,
// contains 4.08 against 4.43; 8 MiB add 5.54 against 5.57, contains 3.65
// against 3.69).
inline constexpr std::size_t kBloomNearPrefetchKeysAhead = 32;
inline constexpr std::size_t kBloomPrefetchKeysAhead = 96;  // the most, for DRAM: what buffers hold
// The add's per-key tail relies on its eight-key steps having prefetched at
// least eight keys past their last (cpu/bloom_add-inl.h).
static_assert(8 <= kBloomNearPrefetchKeysAhead && kBloomNearPrefetchKeysAhead <= kBloomPrefetchKeysAhead);
inline constexpr std::size_t bloom_prefetch_keys_ahead(std::uint64_t filter_bytes) {
  return filter_bytes < kBloomPrefetchMinBytes      ? 0
         : filter_bytes < kBloomFarPrefetchMinBytes ? kBloomNearPrefetchKeysAhead
                                                    : kBloomPrefetchKeysAhead;
}
// How many keys ahead the kernels prefetch a block into L1. Where that is
// less than bloom_prefetch_keys_ahead (filters from DRAM), they prefetch it
// into L2 first, that far ahead: a prefetch into L1 holds one of L1's few
// miss buffers until its line comes, and for a whole DRAM miss those few
// bound how many misses are in flight; L2 tracks more, and from L2 the line
// comes to L1 in a few cycles. Zen 4 guest, AVX3_DL, one thread, u64 keys,
// k = 6, prefetchw 96 keys ahead against prefetcht1 96 and prefetchw 32
// ahead, M keys/s, medians of alternated rounds, two runs: add 1 GiB 79.3 ->
// 130.5 and 74.5 -> 103.6, 32 MiB 103.8 -> 186.3 and 93.3 -> 184.4
// (docs/PERF-NOTES.md, "Two-level block prefetching").
// The second prefetch comes kBloomL1PrefetchKeysAhead keys ahead, later than
// the one-level distance: the later it comes, the likelier its line is in L2
// by then and the shorter it holds its buffer. Same guest, public API, u64
// keys, one thread, call by call in one process, 16 against 32 keys ahead,
// medians of 21-31 calls a form: contains 1 GiB 1.069-1.127, 256 MiB 1.078,
// 64 MiB 1.093, 16 MiB 1.067, two threads 1.115; add 1 GiB 1.010-1.049, 64
// MiB 1.024, 16 MiB 1.054; 8 ahead read as 16 (docs/PERF-NOTES.md, "Two-level
// block prefetching: the second prefetch 16 keys ahead").
inline constexpr std::size_t kBloomL1PrefetchKeysAhead = 16;
// The add's per-key tail relies on its eight-key steps having prefetched at
// least eight keys past their last, and the fused loops step whole groups of
// eight keys between a key's two prefetches (cpu/bloom_add-inl.h,
// cpu/bloom_add_prefetched-inl.h).
static_assert(8 <= kBloomL1PrefetchKeysAhead && kBloomL1PrefetchKeysAhead < kBloomPrefetchKeysAhead &&
              kBloomL1PrefetchKeysAhead % 8 == 0);
inline constexpr std::size_t bloom_l1_prefetch_keys_ahead(std::uint64_t filter_bytes) {
  return filter_bytes < kBloomFarPrefetchMinBytes ? bloom_prefetch_keys_ahead(filter_bytes)
                                                  : kBloomL1PrefetchKeysAhead;
}

// Where a Bloom kernel call sits in its driver's run of calls, so that the
// kernel's block prefetches run on from one call to the next instead of
// restarting with each (kernels that do not prefetch ignore it).
struct BloomLookahead {
  // hashes[0, primed) (primed may exceed n) are the keys the call before, on
  // the same filter and thread, carried ahead: it prefetched their blocks, up
  // to its prefetch distance, and the kernel does not prefetch them again. A
  // wrong count changes no result; it only loses or repeats prefetches.
  // Zen 5 guest, public API, u64 keys, k = 6, one thread, medians of 15
  // alternated calls of 2^20 keys in one process, TSC cycles per key, each
  // call's first prefetches repeated against not: AVX3_DL 1 GiB add 12.54
  // against 12.05 and (a second run) 12.00 against 11.56, contains 12.21
  // against 11.79 and 11.72 against 11.21; 32 MiB add 8.80 against 8.49,
  // contains 7.69 against 7.18; 8 MiB add 5.57 against 5.34; AVX2 1 GiB add
  // 18.14 against 17.63, contains 15.01 against 14.10; 32 MiB add 13.63
  // against 13.13, contains 10.93 against 10.45.
  std::size_t primed = 0;
  // hashes[n, n + ahead) are those the next call will take: a kernel that
  // prefetches blocks prefetches theirs as well, up to its distance, so that
  // the next call starts with its misses in flight, and does nothing else
  // with them.
  std::size_t ahead = 0;
};

struct BloomRef {
  std::uint32_t* words;
  std::uint64_t num_blocks;
  std::uint32_t k;
  BloomLayout layout;
};

// The hashes whose blocks one of several workers owns (src/block_owners.hpp,
// HashOwners::range): h - lo <= span, unsigned, so that a range may end at
// 2^64 - 1. Block indices rise with h (layout::block_index), so each owner's
// blocks are one range of hashes.
struct HashRange {
  std::uint64_t lo = 0;
  std::uint64_t span = ~std::uint64_t{0};  // every hash
  bool contains(std::uint64_t h) const { return h - lo <= span; }
};

// What CpuKernels::check_offsets found.
struct OffsetsCheck {
  bool in_order = false;  // every offset <= limit, each but the first >= the one before
  // Where in order: 8 or 16 if every string (offsets[i + 1] - offsets[i] for
  // every i, at least one) is that long, else 0 (KeyBatch::fixed_width).
  std::uint8_t fixed_width = 0;
};

struct CpuKernels {
  // out[i] = hash of key begin + i, for i < count. Never called for Prehashed.
  void (*hash)(const KeyBatch& keys, std::size_t begin, std::size_t count, HashSpec spec,
               std::uint64_t* out);
  // Hashes keys [begin, begin + count) like `hash` but keeps only the hashes
  // with every bit of `screen` clear: those go to passed[0, m), in key order,
  // and m is returned. passed has room for count hashes (the kernel may use
  // it all as scratch). HLL add screens out, as it hashes, the keys whose rank
  // cannot exceed the smallest register. Null where a backend has nothing
  // faster than `hash` followed by a pass over the hashes; never called for
  // Prehashed.
  std::size_t (*hash_screened)(const KeyBatch& keys, std::size_t begin, std::size_t count, HashSpec spec,
                               std::uint64_t screen, std::uint64_t* passed);
  // Sets the bits of n hashed keys; `around`: how many of its first hashes
  // the call before carried ahead, and how many after them the next call
  // takes (BloomLookahead). Never called by two threads on one block at once
  // (src/bloom_filter.cc gives each worker its own blocks or copy).
  void (*bloom_add)(const BloomRef& filter, const std::uint64_t* hashes, std::size_t n, BloomLookahead around);
  // out[i] = 1 if hashed key i may be present else 0 (out may be null);
  // returns the number of 1s. `around` as for bloom_add.
  std::uint64_t (*bloom_contains)(const BloomRef& filter, const std::uint64_t* hashes, std::size_t n,
                                  BloomLookahead around, std::uint8_t* out);
  // registers[j] = max(registers[j], rank) for each hashed key. Every
  // register is >= floor (0 is always true): a backend may skip, without
  // reading its register, a key whose rank cannot exceed the floor.
  void (*hll_add)(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes,
                  std::size_t n, std::uint8_t floor);
  // A stable split of hashes[0, n) between two block owners: those with
  // h >> 32 < split go to below[0, n - m) and the others to above[0, m), each
  // in their order; returns m. below and above each have room for n (the
  // kernel may write anything in [n - m, n) of below and [m, n) of above).
  // Two workers that share one filter's blocks sift each chunk's hashes with
  // it (src/block_owners.hpp). Null where a backend has nothing faster than
  // the scalar reference's.
  std::size_t (*partition_hashes)(const std::uint64_t* hashes, std::size_t n, std::uint64_t split,
                                  std::uint64_t* below, std::uint64_t* above);
  // Checks `count` string offsets (int32, or int64 when `wide`): whether each
  // is <= limit (which fits their type) and each but the first >= the one
  // before it, and whether the strings they bound are all 8 or all 16 bytes
  // long. The key batch check (src/keys.cc) runs it over every host batch of
  // strings before any kernel reads one: a whole pass over the offsets, so
  // it is vectorised too, and it finds fixed-width keys
  // (KeyBatch::fixed_width) on the way.
  OffsetsCheck (*check_offsets)(const void* offsets, bool wide, std::size_t count,
                                std::int64_t limit);
  // Hashes keys [begin, begin + count) and tests them in one loop, with the
  // results of `hash` then `bloom_contains` (no keys ahead): out[i] for key
  // begin + i (out may be null), and *hits += the number of 1s. scratch has
  // room for count hashes. Returns false, having done nothing, where the
  // backend has no such loop for this filter and batch (its key kind, and
  // for strings the fixed width its check found: the same answer for every
  // chunk of it, so a call with count 0 asks); null where it has none at all.
  bool (*bloom_contains_keys)(const BloomRef& filter, const KeyBatch& keys, std::size_t begin, std::size_t count,
                              HashSpec spec, std::uint64_t* scratch, std::uint8_t* out, std::uint64_t* hits);
  // Hashes keys [begin, begin + count) and adds them in one loop, setting the
  // bits `hash` then `bloom_add` set (no keys ahead). scratch has room for
  // count hashes. Returns false, having done nothing, where the backend has
  // no such loop for this filter and batch (as for bloom_contains_keys; a
  // call with count 0 asks); null where it has none at all.
  bool (*bloom_add_keys)(const BloomRef& filter, const KeyBatch& keys, std::size_t begin, std::size_t count,
                         HashSpec spec, std::uint64_t* scratch);
  // bloom_add_keys for one of the workers that divide a filter's blocks:
  // hashes every key of [begin, begin + count) and adds, in the same loop,
  // only those whose hash is in `own`, so that each worker can go through the
  // whole batch and write its own blocks alone (src/block_owners.hpp,
  // for_each_owned_key_chunk). scratch has room for count hashes. Returns
  // false, having done nothing, where the backend has no such loop for this
  // filter and batch (a call with count 0 asks); null where it has none.
  bool (*bloom_add_owned_keys)(const BloomRef& filter, const KeyBatch& keys, std::size_t begin,
                               std::size_t count, HashSpec spec, HashRange own, std::uint64_t* scratch);
};

const CpuKernels& scalar_kernels();

// One compiled Highway target.
struct SimdTarget {
  std::int64_t bit;  // HWY_AVX2 etc.
  const char* name;  // hwy::TargetName(bit)
  const CpuKernels* kernels;
};

// Targets compiled into cpu/simd.cc, best first (whether or not this CPU supports them).
std::size_t compiled_simd_targets(const SimdTarget** out);

}  // namespace probkit::detail
