// Internal: multi-threaded insertion into one shared Bloom filter, without
// atomics. Each worker owns a range of blocks and is the only one to write
// them; a hash is inserted by the owner of its block. OR is order-independent,
// so the filter equals the 1-thread one. bloom_filter.cc uses these for
// filters too large to copy per worker (or batches too small to repay a copy).
#pragma once
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "bulk.hpp"
#include "probkit/layout/bloom.hpp"
#include "worker_pool.hpp"

namespace probkit::detail {

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

// A single-producer, single-consumer ring of hashes: how one worker hands
// another the hashes of the other's blocks. The consumer inserts straight from
// the ring's memory; the producer reuses a slot only after the consumer's
// insertion from it has returned.
class HashRing {
 public:
  explicit HashRing(std::size_t capacity)  // a power of two
      : data_(new std::uint64_t[capacity]), mask_(capacity - 1) {}

  // Producer: copies in the first of hashes[0, n) that fit; returns how many.
  std::size_t push(const std::uint64_t* hashes, std::size_t n) {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    const std::size_t room = mask_ + 1 - (head - tail_.load(std::memory_order_acquire));
    n = std::min(n, room);
    const std::size_t at = head & mask_;
    const std::size_t first = std::min(n, mask_ + 1 - at);  // up to the end of the buffer, then from its start
    std::copy_n(hashes, first, data_.get() + at);
    std::copy_n(hashes + first, n - first, data_.get());
    head_.store(head + n, std::memory_order_release);
    return n;
  }
  // Producer: nothing more will be pushed.
  void close() { closed_.store(true, std::memory_order_release); }

  // Consumer: fn(const std::uint64_t* hashes, std::size_t n) over everything
  // pushed and not yet drained (in at most two pieces); returns how many.
  template <class Fn>
  std::size_t drain(Fn&& fn) {
    const std::size_t head = head_.load(std::memory_order_acquire);
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    const std::size_t n = head - tail;
    if (n == 0) return 0;
    const std::size_t at = tail & mask_;
    const std::size_t first = std::min(n, mask_ + 1 - at);
    fn(data_.get() + at, first);
    if (first < n) fn(data_.get(), n - first);
    tail_.store(head, std::memory_order_release);
    return n;
  }
  // Consumer: true once the producer has closed; a drain after it has read
  // true gets every hash that remains.
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  std::unique_ptr<std::uint64_t[]> data_;
  std::size_t mask_;
  // Each index on its own cache line: the producer writes head_ and the
  // consumer tail_ once per chunk, without taking each other's line away.
  alignas(64) std::atomic<std::size_t> head_{0};  // hashes pushed so far
  alignas(64) std::atomic<std::size_t> tail_{0};  // hashes drained so far
  alignas(64) std::atomic<bool> closed_{false};
};

// Hashes per HashRing between two workers: four chunks, so a producer runs
// up to four chunks ahead of its consumer before it waits.
inline constexpr std::size_t kExchangeRing = 4 * kHashChunk;

// Multi-threaded Bloom insertion for two workers. Each hashes its half of the
// batch, once, inserts the hashes of its own blocks (OwnedHashes) and hands
// the others to the other worker through a HashRing; after each chunk, and
// while its outgoing ring is full, it inserts what the other handed it. No
// barriers: a worker waits only when it is a whole ring ahead of the other.
//
// It replaced each worker hashing the whole batch and keeping its own
// hashes, which hashed and sifted every key twice. Family 6 model 167 guest,
// AVX3_DL, cacheline512 k = 6, batches of 2^20 keys, TSC cycles per key,
// medians of 15-21 runs alternated in one process (two runs), this against
// hashing everything twice, one thread in brackets:
//   32 MiB, u64   19.3-20.6 against 21.3-22.3 (31.8-35.0)
//   32 MiB, str16 21.4-22.6 against 24.6-25.9 (36.2-39.4)
//   1 GiB,  u64   23.2 against 24.4 (37.0)
//   1 GiB,  str16 25.0 against 27.3 (39.9)
// Inserting each worker's hashes, sorted beforehand, with nothing else to do
// took 14-17 at 32 MiB: what is left is mostly hashing.
// apply(const std::uint64_t* hashes, std::size_t count) inserts without atomics;
// ring_capacity (a power of two) is for tests.
template <class Apply>
void for_each_exchanged_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec,
                                   std::uint64_t num_blocks, Apply&& apply, std::size_t ring_capacity = kExchangeRing) {
  HashRing to[2] = {HashRing(ring_capacity), HashRing(ring_capacity)};  // to[w]: hashes for worker w
  const std::size_t per = (keys.n + 1) / 2;
  run_workers(2, [&](unsigned w) {
    const OwnedHashes mine(w, 2, num_blocks);
    HashRing& in = to[w];
    HashRing& out = to[1 - w];
    alignas(64) std::uint64_t buf[kHashChunk];
    alignas(64) std::uint64_t own[kHashChunk];
    alignas(64) std::uint64_t theirs[kHashChunk];
    const std::size_t lo = std::min(keys.n, w * per);
    const std::size_t hi = std::min(keys.n, lo + per);
    for (std::size_t s = lo; s < hi; s += kHashChunk) {
      const std::size_t c = std::min(kHashChunk, hi - s);
      const std::uint64_t* h = chunk_hashes(kernels, keys, s, c, spec, buf);
      // Branch-free: half the keys are ours, at random, and GCC compiled a
      // second counter (t += ours ? 0 : 1) to a branch that cost 1.4x in the
      // whole add. Hash i goes to own[m] and to theirs[i - m], and m counts it
      // if it is ours.
      std::size_t m = 0;
      for (std::size_t i = 0; i < c; ++i) {
        const std::uint64_t x = h[i];
        own[m] = x;
        theirs[i - m] = x;
        m += static_cast<std::size_t>(mine.contains(x));
      }
      const std::size_t t = c - m;
      // Theirs first, so the other worker has them as soon as it looks.
      std::size_t sent = out.push(theirs, t);
      if (sent < t) {  // a ring ahead: insert what the other handed us until it makes room
        SpinWait wait(more_workers_than_cores(2));
        for (; sent < t; sent += out.push(theirs + sent, t - sent)) {
          if (in.drain(apply) == 0 && !wait.spin()) std::this_thread::yield();
        }
      }
      apply(own, m);
      in.drain(apply);
    }
    out.close();
    SpinWait wait(more_workers_than_cores(2));
    for (;;) {
      const bool last = in.closed();  // read before the drain: then that drain gets the rest
      if (in.drain(apply) == 0) {
        if (last) break;
        if (!wait.spin()) std::this_thread::yield();
      }
    }
  });
}

// Multi-threaded Bloom insertion for more than two workers, in rounds: each
// worker hashes its next slice of keys and sorts the hashes by owner (worker
// w owns blocks [w nb / W, (w+1) nb / W)); after a barrier each worker
// inserts the hashes addressed to it.
// apply(const std::uint64_t* hashes, std::size_t count) inserts without atomics.
template <class Apply>
void for_each_owned_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec, unsigned workers,
                               std::uint64_t num_blocks, Apply&& apply) {
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
