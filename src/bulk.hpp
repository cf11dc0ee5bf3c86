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
#include "probkit/layout/bloom.hpp"
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

// floor(x / d) for x < 2^40 by a multiply: a 64-bit division per key cost
// more than the insertion it routes. x * floor((2^64 - 1) / d) / 2^64 is below
// x / d by less than 2x / 2^64, so at most one too small; one check fixes it.
class Divider {
 public:
  explicit Divider(std::uint64_t d) : d_(d), inverse_(~std::uint64_t{0} / d) {}
  std::uint64_t operator()(std::uint64_t x) const {
    const auto q = static_cast<std::uint64_t>((static_cast<unsigned __int128>(x) * inverse_) >> 64);
    return q + ((q + 1) * d_ <= x ? 1 : 0);
  }

 private:
  std::uint64_t d_, inverse_;
};

// The hashes whose blocks worker w of `workers` owns, blocks [F_w, F_w+1) with
// F_w = ceil(w nb / workers) (the partition of for_each_owned_hash_chunk):
// block_index is non-decreasing in h >> 32, and block_index(h) >= F exactly
// when (h >> 32) >= ceil(F 2^32 / nb), so ownership is a range of h >> 32.
class OwnedHashes {
 public:
  OwnedHashes(unsigned w, unsigned workers, std::uint64_t num_blocks)
      : first_(threshold(w, workers, num_blocks)), width_(threshold(w + 1, workers, num_blocks) - first_) {}
  bool contains(std::uint64_t h) const { return (h >> 32) - first_ < width_; }

 private:
  // ceil(F 2^32 / nb) for F = ceil(w nb / workers) <= nb < 2^32: no overflow.
  static std::uint64_t threshold(unsigned w, unsigned workers, std::uint64_t nb) {
    const std::uint64_t f = (w * nb + workers - 1) / workers;
    return ((f << 32) + nb - 1) / nb;
  }
  std::uint64_t first_, width_;  // h >> 32 in [first_, first_ + width_)
};

// Multi-threaded Bloom insertion for two workers: each hashes the whole batch
// and inserts the hashes of its own blocks (OwnedHashes), so no two write one
// block. Hashing every key twice costs less than sorting hashes by owner
// (for_each_owned_hash_chunk): no rounds, no barriers, nothing handed between
// cores. Each further worker would hash the whole batch once more.
// apply(const std::uint64_t* hashes, std::size_t count) inserts without atomics.
template <class Apply>
void for_each_own_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec, unsigned workers,
                             std::uint64_t num_blocks, Apply&& apply) {
  run_workers(workers, [&](unsigned w) {
    const OwnedHashes mine(w, workers, num_blocks);
    alignas(64) std::uint64_t buf[kHashChunk];
    alignas(64) std::uint64_t own[kHashChunk];
    for (std::size_t s = 0; s < keys.n; s += kHashChunk) {
      const std::size_t c = std::min(kHashChunk, keys.n - s);
      const std::uint64_t* h = chunk_hashes(kernels, keys, s, c, spec, buf);
      std::size_t m = 0;
      for (std::size_t i = 0; i < c; ++i) {  // branch-free: half the keys are ours, at random
        own[m] = h[i];
        m += mine.contains(h[i]) ? 1 : 0;
      }
      apply(own, m);
    }
  });
}

// Multi-threaded Bloom insertion without atomic word updates. Work proceeds in
// rounds: each worker hashes its next slice of keys and sorts the hashes by
// owner (worker w owns blocks [w nb / W, (w+1) nb / W)); after a barrier each
// worker inserts the hashes addressed to it, so no two workers ever write the
// same block. OR is order-independent: the filter equals the 1-thread one.
// apply(const std::uint64_t* hashes, std::size_t count) inserts without atomics.
template <class Apply>
void for_each_owned_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec,
                               unsigned workers, std::uint64_t num_blocks, Apply&& apply) {
  constexpr std::size_t kRound = 16 * kHashChunk;  // keys per worker per round
  const std::size_t per = (keys.n + workers - 1) / workers;
  const std::size_t rounds = (per + kRound - 1) / kRound;
  // sorted[w]: worker w's hashes of this round, grouped by owner;
  // starts[w][o]..starts[w][o+1]: those owned by o.
  std::vector<std::vector<std::uint64_t>> sorted(workers, std::vector<std::uint64_t>(kRound));
  std::vector<std::vector<std::size_t>> starts(workers, std::vector<std::size_t>(workers + 1));
  SpinBarrier sync(workers);
  const Divider owner_of(num_blocks);  // block b belongs to worker b * workers / num_blocks

  auto run = [&](unsigned w) {
    std::vector<std::uint64_t> hashes(kRound);
    std::vector<std::uint32_t> owner(kRound);
    std::vector<std::size_t> fill(workers);
    const std::size_t lo = std::min(keys.n, w * per);
    const std::size_t hi = std::min(keys.n, lo + per);
    for (std::size_t r = 0; r < rounds; ++r) {
      const std::size_t first = std::min(hi, lo + r * kRound);
      const std::size_t count = std::min(hi, first + kRound) - first;
      for (std::size_t s = 0; s < count; s += kHashChunk) {
        const std::size_t c = std::min(kHashChunk, count - s);
        if (keys.kind == KeyKind::Prehashed) {
          std::copy_n(static_cast<const std::uint64_t*>(keys.keys) + first + s, c, hashes.data() + s);
        } else {
          kernels.hash(keys, first + s, c, spec, hashes.data() + s);
        }
      }
      std::fill(fill.begin(), fill.end(), 0);
      for (std::size_t i = 0; i < count; ++i) {
        owner[i] = static_cast<std::uint32_t>(owner_of(layout::block_index(hashes[i], num_blocks) * workers));
        ++fill[owner[i]];
      }
      std::vector<std::size_t>& start = starts[w];
      start[0] = 0;
      for (unsigned o = 0; o < workers; ++o) start[o + 1] = start[o] + fill[o];
      for (unsigned o = 0; o < workers; ++o) fill[o] = start[o];
      for (std::size_t i = 0; i < count; ++i) sorted[w][fill[owner[i]]++] = hashes[i];
      sync.arrive_and_wait();  // every worker's hashes of this round are sorted
      for (unsigned src = 0; src < workers; ++src) {
        const std::size_t b = starts[src][w];
        apply(sorted[src].data() + b, starts[src][w + 1] - b);
      }
      sync.arrive_and_wait();  // all inserted: the buffers may be refilled
    }
  };
  run_workers(workers, run);
}

}  // namespace probkit::detail
