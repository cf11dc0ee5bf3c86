// Internal: the CPU bulk driver. Splits a key batch over worker threads, hashes
// each worker's keys chunk by chunk into an L1-resident buffer, and hands each
// chunk of hashes to the structure's kernel.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "probkit/detail/kernels.hpp"
#include "worker_pool.hpp"

namespace probkit::detail {

inline constexpr std::size_t kHashChunk = 1024;  // 8 KiB of hashes

// Keys per chunk for a Bloom filter of `filter_bytes`. Fixed-width keys into a filter
// in the cache get short chunks: the kernel touches one filter line per key,
// and 1024 keys' lines (64 KiB) pushed the next chunk's keys (and, then,
// AVX-512 add's 32 KiB bit table) out of a 48 KiB L1. Zen 5 guest, 256 KiB
// filter, AVX3_DL, TSC cycles per key, medians of 30-40 alternated passes
// over 2^20 keys, 256 against 1024 keys per chunk: u64 cacheline512 contains
// 2.39 against 2.95 (128: 2.36, 512: 3.04), add 7.10 against 7.64 (since the
// add builds its masks in registers, min / median of 12-20 passes 4.09 / 5.10
// against 5.37 / 6.07); parquet_sbbf contains 3.69 against 4.38, add 2.70
// against 3.22. 16-byte strings went the other way (cacheline512 contains
// 7.58 against 6.61, parquet_sbbf add 6.94 against 6.45: the string hash
// pays per call), and pre-hashed keys are not copied at all: both keep
// kHashChunk. So does a filter that misses the cache: its kernels' prefetch
// pipelines restart with each chunk (1 GiB contains: 25.6 at 256 against
// 24.8).
inline constexpr std::size_t kCachedBloomChunk = 256;
inline std::size_t bloom_hash_chunk(std::uint64_t filter_bytes, KeyKind kind) {
  const bool fixed_width = kind == KeyKind::U32 || kind == KeyKind::U64;
  return fixed_width && filter_bytes < kBloomPrefetchMinBytes ? kCachedBloomChunk : kHashChunk;
}

// The hashes of keys [first, first + count): pre-hashed keys where they are,
// any other kind hashed into buf (count <= kHashChunk).
inline const std::uint64_t* chunk_hashes(const CpuKernels& kernels, const KeyBatch& keys, std::size_t first,
                                         std::size_t count, HashSpec spec, std::uint64_t* buf) {
  if (keys.kind == KeyKind::Prehashed) return static_cast<const std::uint64_t*>(keys.keys) + first;
  kernels.hash(keys, first, count, spec, buf);
  return buf;
}

// fn(unsigned worker, std::size_t first_key, std::size_t count, std::uint64_t* buf):
// the keys split over workers (worker 0 alone when workers <= 1 or n < 2),
// each worker's share in chunks of at most `chunk` (<= kHashChunk) keys, with
// buf that worker's L1-resident scratch of kHashChunk hashes.
template <class Fn>
void for_each_key_chunk(std::size_t n, unsigned workers, Fn&& fn, std::size_t chunk = kHashChunk) {
  chunk = std::clamp<std::size_t>(chunk, 1, kHashChunk);
  auto run = [&](unsigned worker, std::size_t lo, std::size_t hi) {
    alignas(64) std::uint64_t buf[kHashChunk];
    for (std::size_t s = lo; s < hi; s += chunk) fn(worker, s, std::min(chunk, hi - s), buf);
  };
  if (workers <= 1 || n < 2) {
    run(0, 0, n);
    return;
  }
  const std::size_t per = (n + workers - 1) / workers;
  run_workers(workers, [&](unsigned w) {
    const std::size_t lo = std::min(n, w * per);
    run(w, lo, std::min(n, lo + per));
  });
}

// fn(unsigned worker, std::size_t first_key, const std::uint64_t* hashes, std::size_t count)
template <class Fn>
void for_each_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec, unsigned workers, Fn&& fn,
                         std::size_t chunk = kHashChunk) {
  for_each_key_chunk(
      keys.n, workers,
      [&](unsigned worker, std::size_t s, std::size_t c, std::uint64_t* buf) {
        fn(worker, s, chunk_hashes(kernels, keys, s, c, spec, buf), c);
      },
      chunk);
}

}  // namespace probkit::detail
