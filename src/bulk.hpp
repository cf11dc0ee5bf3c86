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
// each worker's share in chunks of at most kHashChunk keys, with buf that
// worker's L1-resident scratch of kHashChunk hashes.
template <class Fn>
void for_each_key_chunk(std::size_t n, unsigned workers, Fn&& fn) {
  auto run = [&](unsigned worker, std::size_t lo, std::size_t hi) {
    alignas(64) std::uint64_t buf[kHashChunk];
    for (std::size_t s = lo; s < hi; s += kHashChunk) fn(worker, s, std::min(kHashChunk, hi - s), buf);
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
void for_each_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec,
                         unsigned workers, Fn&& fn) {
  for_each_key_chunk(keys.n, workers, [&](unsigned worker, std::size_t s, std::size_t c, std::uint64_t* buf) {
    fn(worker, s, chunk_hashes(kernels, keys, s, c, spec, buf), c);
  });
}

}  // namespace probkit::detail
