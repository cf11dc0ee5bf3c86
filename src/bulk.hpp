// Internal: the CPU bulk driver. Splits a key batch over worker threads, hashes
// each worker's keys chunk by chunk into an L1-resident buffer, and hands each
// chunk of hashes to the structure's kernel.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "probkit/detail/kernels.hpp"
#include "worker_pool.hpp"

namespace probkit::detail {

inline constexpr std::size_t kHashChunk = 1024;  // 8 KiB of hashes

// A worker's own value (a count, a floor) on a cache line of its own: values
// that workers update chunk by chunk, packed together, put each update on a
// line other cores are writing too.
template <class T>
struct alignas(64) PerWorker {
  T value{};
};

// How for_each_hash_chunk feeds a Bloom kernel: keys per chunk, and how many
// hashes of the next keys ride along.
struct BloomChunks {
  std::size_t keys;
  std::size_t ahead;
};

// Fixed-width keys go in chunks of 256 (strings, whose hash pays per call,
// and pre-hashed keys, which are not copied, keep kHashChunk). Into a filter
// in the cache, 1024 keys' lines (64 KiB) pushed the next chunk's keys out of
// a 48 KiB L1 (Zen 5 guest, u64 cacheline512 contains: 2.95 -> 2.39 TSC
// cycles per key); into one that misses it, each chunk carries the hashes of
// the next bloom_prefetch_keys_ahead keys, whose blocks' misses are in flight
// while the next chunk is hashed, and 256 measured best or within 1% of it.
// (docs/PERF-NOTES.md, "Bloom chunks: 256 fixed-width keys")
inline constexpr std::size_t kFixedWidthBloomChunk = 256;
inline BloomChunks bloom_chunks(std::uint64_t filter_bytes, KeyKind kind) {
  const bool fixed_width = kind == KeyKind::U32 || kind == KeyKind::U64;
  return {fixed_width ? kFixedWidthBloomChunk : kHashChunk, bloom_prefetch_keys_ahead(filter_bytes)};
}

// The hashes of keys [first, first + count): pre-hashed keys where they are,
// any other kind hashed into buf (count <= kHashChunk).
inline const std::uint64_t* chunk_hashes(const CpuKernels& kernels, const KeyBatch& keys, std::size_t first,
                                         std::size_t count, HashSpec spec, std::uint64_t* buf) {
  if (keys.kind == KeyKind::Prehashed) return static_cast<const std::uint64_t*>(keys.keys) + first;
  kernels.hash(keys, first, count, spec, buf);
  return buf;
}

// Keys per piece of a multi-threaded call: each worker takes the next piece
// not yet taken until none is left, so that a worker whose vCPU the host
// slows, or whose thread wakes late, takes fewer. About kPiecesPerWorker
// pieces a worker, whole chunks (kHashChunk), at least kMinPieceKeys keys: a
// piece restarts the kernel's prefetching of the keys ahead.
inline constexpr std::size_t kPiecesPerWorker = 8;
inline constexpr std::size_t kMinPieceKeys = 4 * kHashChunk;
inline std::size_t piece_keys(std::size_t n, unsigned workers) {
  const std::size_t pieces = std::size_t{workers} * kPiecesPerWorker;
  const std::size_t even = (n + pieces - 1) / pieces;
  return std::max(kMinPieceKeys, (even + kHashChunk - 1) / kHashChunk * kHashChunk);
}

// fn(unsigned worker, std::size_t lo, std::size_t hi) for pieces [lo, hi) that
// together cover keys [0, n) once each (one piece, worker 0, when workers <= 1
// or n < 2). `worker` names what belongs to the worker (a private copy, a
// count), not a thread, and a worker may get any number of pieces, none
// included: calls for one worker come one after another, on one thread.
template <class Fn>
void for_each_worker_share(std::size_t n, unsigned workers, Fn&& fn) {
  if (workers <= 1 || n < 2) {
    fn(0u, std::size_t{0}, n);
    return;
  }
  const std::size_t piece = piece_keys(n, workers);
  std::atomic<std::size_t> next{0};  // the first key of the next piece
  run_workers(
      workers,
      [&](unsigned w) {
        for (std::size_t lo = 0; (lo = next.fetch_add(piece, std::memory_order_relaxed)) < n;) {
          fn(w, lo, std::min(n, lo + piece));
        }
      },
      Shares::kIndependent);
}

// Keys per call of the loops that hash u64 keys or a batch of 16-byte
// strings and test or add them in one (CpuKernels::bloom_contains_keys,
// bloom_add_keys): each call fills and drains the hash pipeline and, into a
// filter past the cache, the misses its prefetches keep in flight. 4096
// against 1024 keys a call, Zen 4 guest, AVX3_DL, k = 6, public API, medians
// of 21-41 calls alternated in one process, three to five runs: u64 contains
// 1 GiB 1.021-1.047, 32 MiB 1.029-1.039, 4 MiB 1.011-1.027; add 1 GiB
// 1.003-1.052, 32 MiB 1.014-1.022, 4 MiB 1.022-1.059; 16-byte strings
// contains 1 GiB 1.031-1.193, add 0.955-1.019, 32 MiB and 4 MiB 1.020-1.079;
// 256 KiB alike. Other strings keep kHashChunk: they are hashed into the
// scratch, then tested or added. (docs/PERF-NOTES.md, "Fused loops: 4096
// keys a call")
inline constexpr std::size_t kFusedLoopChunk = 4 * kHashChunk;
inline std::size_t fused_bloom_chunk(const KeyBatch& keys) {
  return keys.kind == KeyKind::U64 || is_string16_batch(keys) ? kFusedLoopChunk : kHashChunk;
}
// for_each_key_chunk's largest chunk, and its scratch buffer's hashes.
inline constexpr std::size_t kMaxKeyChunk = kFusedLoopChunk;

// fn(unsigned worker, std::size_t first_key, std::size_t count, std::uint64_t* buf):
// each piece of for_each_worker_share in chunks of at most `chunk` (<=
// kMaxKeyChunk) keys, with buf scratch of `chunk` hashes.
template <class Fn>
void for_each_key_chunk(std::size_t n, unsigned workers, Fn&& fn, std::size_t chunk = kHashChunk) {
  chunk = std::clamp<std::size_t>(chunk, 1, kMaxKeyChunk);
  for_each_worker_share(n, workers, [&](unsigned worker, std::size_t lo, std::size_t hi) {
    alignas(64) std::uint64_t buf[kMaxKeyChunk];
    for (std::size_t s = lo; s < hi; s += chunk) fn(worker, s, std::min(chunk, hi - s), buf);
  });
}

// fn(unsigned worker, std::size_t first_key, const std::uint64_t* hashes,
//    std::size_t count, BloomLookahead around): each piece of
// for_each_worker_share in chunks of at most `chunk` (<= kHashChunk) keys,
// and hashes[count, count + around.ahead) those of the piece's next keys, up
// to `max_ahead` (<= kBloomPrefetchKeysAhead) of them; around.primed is the
// chunk before's ahead (0 for a piece's first chunk). A chunk's own keys and
// those ahead are hashed before fn sees it; the rest of the next chunk after
// fn returns, so a kernel that prefetched the blocks of the keys ahead has
// those misses in flight while the hashing runs.
template <class Fn>
void for_each_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec, unsigned workers, Fn&& fn,
                         std::size_t chunk = kHashChunk, std::size_t max_ahead = 0) {
  chunk = std::clamp<std::size_t>(chunk, 1, kHashChunk);
  max_ahead = std::min(max_ahead, kBloomPrefetchKeysAhead);
  for_each_worker_share(keys.n, workers, [&](unsigned worker, std::size_t lo, std::size_t hi) {
    if (keys.kind == KeyKind::Prehashed) {
      const auto* hashes = static_cast<const std::uint64_t*>(keys.keys);
      std::size_t primed = 0;
      for (std::size_t s = lo; s < hi; s += chunk) {
        const std::size_t c = std::min(chunk, hi - s);
        const std::size_t ahead = std::min(max_ahead, hi - s - c);
        fn(worker, s, hashes + s, c, BloomLookahead{primed, ahead});
        primed = ahead;
      }
      return;
    }
    alignas(64) std::uint64_t buf[kHashChunk + kBloomPrefetchKeysAhead];
    std::size_t have = 0;  // buf holds the hashes of keys [s, s + have)
    std::size_t primed = 0;
    for (std::size_t s = lo; s < hi;) {
      const std::size_t c = std::min(chunk, hi - s);
      const std::size_t want = std::min(c + max_ahead, hi - s);
      if (want > have) {
        kernels.hash(keys, s + have, want - have, spec, buf + have);
        have = want;
      }
      fn(worker, s, static_cast<const std::uint64_t*>(buf), c, BloomLookahead{primed, have - c});
      primed = have - c;
      std::copy(buf + c, buf + have, buf);
      have -= c;
      s += c;
    }
  });
}

}  // namespace probkit::detail
