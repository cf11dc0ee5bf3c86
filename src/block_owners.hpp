// Internal: multi-threaded insertion into one shared Bloom filter, without
// atomics. Each worker owns a range of blocks and is the only one to write
// them; a hash is inserted by the owner of its block. OR is order-independent,
// so the filter equals the 1-thread one. bloom_filter.cc uses these for
// filters too large to copy per worker (or batches too small to repay a copy).
#pragma once
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "bulk.hpp"
#include "probkit/layout/bloom.hpp"
#include "worker_pool.hpp"

namespace probkit::detail {

// Which worker owns a hash's block when `workers` workers divide the blocks
// into ranges: worker w owns blocks [F_w, F_w+1), F_w = ceil(w nb / workers),
// so block b belongs to worker b * workers / nb.
//
// block_index is non-decreasing in x = h >> 32, and block_index(h) >= F
// exactly when x >= ceil(F 2^32 / nb), so each worker owns a range of x. With
// workers <= nb the owner is e = x * workers / 2^32 or e - 1 (from
// b <= x nb / 2^32 < b + 1, b * workers / nb is at most x * workers / 2^32 and
// less than 1 below it): one multiply and one compare with the first x of e's
// range, where a division per hash cost more than the insertion it routes.
class HashOwners {
 public:
  HashOwners(unsigned workers, std::uint64_t num_blocks) : workers_(workers), first_(workers) {
    for (unsigned w = 0; w < workers; ++w) {
      // ceil(F 2^32 / nb) for F = ceil(w nb / workers) <= nb < 2^32: no overflow.
      const std::uint64_t f = (w * num_blocks + workers - 1) / workers;
      first_[w] = ((f << 32) + num_blocks - 1) / num_blocks;
    }
  }
  unsigned operator()(std::uint64_t h) const {
    const std::uint64_t x = h >> 32;
    const auto e = static_cast<unsigned>((x * workers_) >> 32);
    return e - static_cast<unsigned>(x < first_[e]);  // first_[0] = 0: never below 0
  }
  // The smallest h >> 32 whose block worker w owns.
  std::uint64_t first(unsigned w) const { return first_[w]; }
  // The hashes whose blocks worker w owns: h >> 32 from first(w) up to the
  // next worker's first. first(w) < 2^32 where workers <= num_blocks.
  HashRange range(unsigned w) const {
    const std::uint64_t lo = first_[w] << 32;
    const std::uint64_t hi = w + 1 < workers_ ? (first_[w + 1] << 32) - 1 : ~std::uint64_t{0};
    return {lo, hi - lo};
  }

 private:
  std::uint64_t workers_;
  std::vector<std::uint64_t> first_;  // first_[w]: the smallest h >> 32 that worker w owns
};

// At most this many workers share a filter by going through the whole batch
// each (for_each_owned_key_chunk): every worker hashes every key, which two
// workers repay with what they no longer hand each other; more were not
// measured (w workers hash each key w times).
inline constexpr unsigned kOwnedKeysMaxWorkers = 2;

// Multi-threaded Bloom insertion into one shared filter where the backend
// hashes and adds one owner's keys in one loop (CpuKernels::
// bloom_add_owned_keys): each worker goes through the whole batch, `chunk`
// (<= kMaxKeyChunk) keys at a time, and adds the keys of its own blocks
// (HashOwners::range): fn(unsigned worker, std::size_t first_key, std::size_t
// count, HashRange own, std::uint64_t* buf), buf scratch of `chunk` hashes.
// Nothing passes between the workers and none waits for another (a pool
// thread that is late leaves its share to the calling thread). Against the
// exchange (for_each_exchanged_hash_chunk), two workers, Zen 4 guest,
// AVX3_DL, public add of 2^20 keys a call alternated call by call in one
// process, medians of 21: cacheline512 k = 6, u64 keys / 16-byte strings,
// 1 GiB 1.137 / 1.135, 256 MiB 1.128 / 1.133, 32 MiB 1.158 / 1.193, 16 MiB
// 1.303 / 1.178, 4 MiB 0.896 / 0.803 in one run and 1.244 / 1.118 in the
// next; parquet_sbbf 1 GiB 1.093 / 1.039, 32 MiB 1.092 / 1.104, 4 MiB
// 1.282-1.297 / 1.118. (docs/PERF-NOTES.md, "Block owners: each worker
// through the whole batch")
template <class Fn>
void for_each_owned_key_chunk(std::size_t n, unsigned workers, std::uint64_t num_blocks, Fn&& fn,
                              std::size_t chunk) {
  chunk = std::clamp<std::size_t>(chunk, 1, kMaxKeyChunk);
  workers = static_cast<unsigned>(std::clamp<std::uint64_t>(workers, 1, num_blocks));
  const HashOwners owners(workers, num_blocks);
  run_workers(
      workers,
      [&](unsigned w) {
        const HashRange own = owners.range(w);
        alignas(64) std::uint64_t buf[kMaxKeyChunk];
        for (std::size_t s = 0; s < n; s += chunk) fn(w, s, std::min(chunk, n - s), own, buf);
      },
      Shares::kIndependent);
}

// Asks for the cache lines of bytes [p, p + bytes) (a hint: p need not be
// valid when bytes is 0).
inline void prefetch_lines(const void* p, std::size_t bytes) {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  for (std::uintptr_t line = at & ~std::uintptr_t{63}; line < at + bytes; line += 64) {
    __builtin_prefetch(reinterpret_cast<const void*>(line));
  }
}

// A single-producer, single-consumer ring of hashes: how one worker hands
// another the hashes of the other's blocks.
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

  // Consumer: copies out the oldest of the hashes pushed and not yet popped,
  // at most max of them, to out; returns how many.
  std::size_t pop(std::uint64_t* out, std::size_t max) {
    const std::size_t head = head_.load(std::memory_order_acquire);
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    const std::size_t n = std::min(head - tail, max);
    const std::size_t at = tail & mask_;
    const std::size_t first = std::min(n, mask_ + 1 - at);
    std::copy_n(data_.get() + at, first, out);
    std::copy_n(data_.get(), n - first, out + first);
    tail_.store(tail + n, std::memory_order_release);
    return n;
  }
  // Consumer: true once the producer has closed; pops after it has read true
  // get every hash that remains.
  bool closed() const { return closed_.load(std::memory_order_acquire); }

 private:
  std::unique_ptr<std::uint64_t[]> data_;
  std::size_t mask_;
  // Each index on its own cache line: the producer writes head_ and the
  // consumer tail_ once per chunk, without taking each other's line away.
  alignas(64) std::atomic<std::size_t> head_{0};  // hashes pushed so far
  alignas(64) std::atomic<std::size_t> tail_{0};  // hashes popped so far
  alignas(64) std::atomic<bool> closed_{false};
};

// A worker's hashes for another that its ring had no room for: a FIFO that
// the worker drains into the ring whenever it hands that worker more
// (HashRing::push takes what fits). Once the worker has closed the ring (a
// release), the other reads what is left here itself (for_each_piece).
class HeldHashes {
 public:
  explicit HeldHashes(std::size_t capacity)  // a power of two
      : data_(new std::uint64_t[capacity]), mask_(capacity - 1) {}
  std::size_t size() const { return head_ - tail_; }
  std::size_t room() const { return mask_ + 1 - size(); }
  // n <= room().
  void append(const std::uint64_t* hashes, std::size_t n) {
    const std::size_t at = head_ & mask_;
    const std::size_t first = std::min(n, mask_ + 1 - at);
    std::copy_n(hashes, first, data_.get() + at);
    std::copy_n(hashes + first, n - first, data_.get());
    head_ += n;
  }
  // Pushes the oldest held hashes into `out` until it is full or none are left.
  void drain_into(HashRing& out) {
    while (size() != 0) {
      const std::size_t at = tail_ & mask_;
      const std::size_t piece = std::min(size(), mask_ + 1 - at);
      const std::size_t n = out.push(data_.get() + at, piece);
      tail_ += n;
      if (n < piece) return;
    }
  }
  // fn(const std::uint64_t* hashes, std::size_t count) for each contiguous piece held, oldest first.
  template <class Fn>
  void for_each_piece(Fn&& fn) const {
    const std::size_t at = tail_ & mask_;
    const std::size_t first = std::min(size(), mask_ + 1 - at);
    if (first != 0) fn(data_.get() + at, first);
    if (size() > first) fn(data_.get(), size() - first);
  }

 private:
  std::unique_ptr<std::uint64_t[]> data_;  // not initialised: pages are touched only as hashes are held
  std::size_t mask_;
  std::size_t head_ = 0;  // appended so far
  std::size_t tail_ = 0;  // drained so far
};

// At most this many workers share one filter's blocks: they need a ring for
// every ordered pair (64 workers: 4032 rings of 128 hashes, 4 MiB).
inline constexpr unsigned kMaxExchangeWorkers = 64;

// Hashes per HashRing between two of `workers` workers: about eight chunks'
// worth of what one worker sends another (a chunk's 1/workers share), so a
// producer runs several chunks ahead of its consumers before it waits.
inline std::size_t exchange_ring_capacity(unsigned workers) {
  return std::bit_ceil(std::max<std::size_t>(64, 8 * kHashChunk / std::max(1u, workers)));
}

// Hashes one worker may hold for another (HeldHashes) when their ring is
// full: 2^21 among all pairs (16 MiB), but a chunk's at least (64 workers:
// 4032 pairs, 33 MiB), and no more than about a worker's share of the batch.
// Allocated per call and touched only as hashes are held: mostly when other
// work keeps a receiver off its core.
inline std::size_t exchange_held_capacity(unsigned workers, std::size_t share) {
  const std::size_t pairs = std::size_t{workers} * (workers - 1);
  const std::size_t limit = std::max<std::size_t>(kHashChunk, (std::size_t{1} << 21) / std::max<std::size_t>(1, pairs));
  return std::bit_floor(std::clamp(share, kHashChunk, limit));
}

// Multi-threaded Bloom insertion into one shared filter. Each of the workers
// hashes its share of the batch, once, chunk by chunk; sifts each chunk's
// hashes by the owner of their blocks (HashOwners); hands each other worker
// its hashes through a HashRing (one per ordered pair of workers); and
// collects its own and the ones handed to it in an inbox, which it inserts
// kHashChunk or more at a time (so that a large filter's insertion keeps many
// block prefetches in flight however many workers there are). No barriers:
// hashes a ring has no room for are held (HeldHashes) and handed over with
// the next ones, and what is still held when a worker closes its rings its
// receivers read themselves. A worker waits only when it holds all it may
// for another, and for the others' rings to close at the end; while it
// waits it takes in what the others handed it, so every wait makes room for
// another. Waiting whenever a ring was full, two workers progressed only
// while both ran (two threads beside four busy loops, Zen 5 guest: 9.9 M
// keys/s then, 90 now). The exchange also replaced each worker hashing the
// whole batch, every key hashed and sifted twice (family 6 model 167 guest,
// 32 MiB, u64: 21.3-22.3 -> 19.3-20.6 TSC cycles per key), and rounds
// between barriers (2 workers, 32 MiB: 24.2-25.9 -> 19.2-20.2). With each
// worker's keys hashed and added in one loop, the whole batch each came back
// for two workers where the backend has that loop (for_each_owned_key_chunk).
// (docs/PERF-NOTES.md, "Block owners: the exchange against earlier forms")
// Uses min(workers, num_blocks, kMaxExchangeWorkers) workers.
//
// apply(const std::uint64_t* hashes, std::size_t count, BloomLookahead around)
// inserts hashes[0, count) without atomics; hashes[count, count +
// around.ahead), at most max_ahead (<= kBloomPrefetchKeysAhead) of them, are
// the first the worker inserts next, whose blocks the kernel may prefetch,
// and hashes[0, around.primed) those the worker's insertion before carried
// ahead. A chunk's keys are hashed `piece` (<= kHashChunk) at a time, and
// before each piece a share of the last full inbox is inserted. ring_capacity
// and held_capacity (powers of two; 0: exchange_ring_capacity,
// exchange_held_capacity) are for tests.
template <class Apply>
void for_each_exchanged_hash_chunk(const CpuKernels& kernels, const KeyBatch& keys, HashSpec spec, unsigned workers,
                                   std::uint64_t num_blocks, Apply&& apply, std::size_t max_ahead = 0,
                                   std::size_t piece = kHashChunk, std::size_t ring_capacity = 0,
                                   std::size_t held_capacity = 0) {
  max_ahead = std::min(max_ahead, kBloomPrefetchKeysAhead);
  piece = std::clamp<std::size_t>(piece, 1, kHashChunk);
  workers = static_cast<unsigned>(std::min<std::uint64_t>({workers, num_blocks, kMaxExchangeWorkers}));
  workers = std::max(workers, 1u);
  if (ring_capacity == 0) ring_capacity = exchange_ring_capacity(workers);
  const HashOwners owner_of(workers, num_blocks);
  // rings[to * workers + from] carries from's hashes for worker to (from != to).
  std::vector<std::unique_ptr<HashRing>> rings(std::size_t{workers} * workers);
  for (unsigned to = 0; to < workers; ++to) {
    for (unsigned from = 0; from < workers; ++from) {
      if (from != to) rings[to * workers + from] = std::make_unique<HashRing>(ring_capacity);
    }
  }
  const std::size_t per = (keys.n + workers - 1) / workers;
  if (held_capacity == 0) held_capacity = exchange_held_capacity(workers, per);
  // held[from * workers + to]: from's hashes for worker to that its ring had no room for. Allocated here, with
  // the rings, so that nothing a worker does can throw.
  std::vector<std::unique_ptr<HeldHashes>> held(std::size_t{workers} * workers);
  for (unsigned from = 0; from < workers; ++from) {
    for (unsigned to = 0; to < workers; ++to) {
      if (from != to) held[from * workers + to] = std::make_unique<HeldHashes>(held_capacity);
    }
  }
  const bool oversubscribed = more_workers_than_cores(workers);
  const auto partition =
      kernels.partition_hashes != nullptr ? kernels.partition_hashes : scalar_kernels().partition_hashes;
  run_workers(workers, [&](unsigned w) {
    alignas(64) std::uint64_t buf[kHashChunk];     // the chunk's hashes, where hashing writes them
    alignas(64) std::uint64_t theirs[kHashChunk];  // the chunk's hashes for other workers, by worker
    // Hashes of w's blocks not yet inserted: fewer than kHashChunk +
    // max_ahead between chunks (insert_if_full runs after every chunk and
    // every pop), so a chunk's own hashes always fit, and with them fewer
    // than 2 kHashChunk + max_ahead: each pop has room for at least one. The
    // last max_ahead of a full inbox stay for the next insertion and ride
    // along with this one as its hashes ahead: their blocks' misses are in
    // flight while w hashes and sorts the next chunk. 1-2% (Zen 5 guest, 1
    // GiB, u64, two workers, medians of 21 alternated calls of 2^20 keys,
    // four runs: 12.7-13.2 against 12.9-13.5 TSC cycles per key; min
    // 11.4-12.2 against 11.5-12.5).
    //
    // A full inbox becomes the ready one, inserted a share at a time between
    // the pieces of the next chunk's hashing (insert_ready), so that each
    // piece is hashed with the blocks of the hashes ahead of a share in
    // flight, as for_each_hash_chunk's short chunks are for one thread, while
    // the hashes still go between the workers a whole chunk at a time (256-key
    // chunks through the rings lost: PERF-NOTES.md). u64 keys in 256-key
    // pieces against one piece of 1024, Zen 5 guest, two threads, medians of
    // 5-8 alternated rounds, three runs: 32 MiB 1.056 / 1.025 / 1.034, 1 GiB
    // 0.991 / 0.961 / 1.020 (the ideal's rows, code alike, 0.974 and 1.007);
    // strings keep one piece (in 256: 0.916 at 32 MiB, 0.961 at 1 GiB).
    // (docs/PERF-NOTES.md, "Block owners: hashing in pieces between the insertions")
    alignas(64) std::uint64_t boxes[2][2 * kHashChunk + kBloomPrefetchKeysAhead];
    std::uint64_t* inbox = boxes[0];
    std::uint64_t* ready = boxes[1];
    std::size_t waiting = 0;
    std::size_t ready_n = 0;     // ready[0, ready_n) to insert, ready[ready_n, + max_ahead) the inbox's first
    std::size_t ready_done = 0;  // ready[0, ready_done) inserted
    std::size_t primed = 0;      // hashes the last insertion carried ahead
    const auto insert_ready = [&](std::size_t upto) {
      if (upto <= ready_done) return;
      apply(ready + ready_done, upto - ready_done, BloomLookahead{primed, max_ahead});
      primed = max_ahead;
      ready_done = upto;
    };
    const auto insert_if_full = [&] {
      if (waiting >= kHashChunk + max_ahead) {
        insert_ready(ready_n);
        std::swap(inbox, ready);
        ready_n = waiting - max_ahead;
        ready_done = 0;
        std::copy_n(ready + ready_n, max_ahead, inbox);
        waiting = max_ahead;
      }
    };
    // Takes in everything the other workers have handed w; returns how many.
    const auto receive = [&] {
      std::size_t got = 0;
      for (unsigned from = 0; from < workers; ++from) {
        if (from == w) continue;
        HashRing& in = *rings[w * workers + from];
        for (std::size_t n; (n = in.pop(inbox + waiting, std::size(boxes[0]) - waiting)) != 0;) {
          got += n;
          waiting += n;
          insert_if_full();
        }
      }
      return got;
    };
    // Owners as 32-bit words: stored as bytes (which may alias anything) the
    // counting sort took 1.12-1.18x as long (1024 hashes in L1, 3 to 64
    // workers, medians of 201: 4.4-5.0 against 5.3-5.8 TSC cycles per hash).
    std::uint32_t owner[kHashChunk];
    std::uint32_t first[kMaxExchangeWorkers + 1];  // theirs[first[o], first[o + 1]) are worker o's
    const std::size_t lo = std::min(keys.n, w * per);
    const std::size_t hi = std::min(keys.n, lo + per);
    for (std::size_t s = lo; s < hi; s += kHashChunk) {
      const std::size_t c = std::min(kHashChunk, hi - s);
      const std::uint64_t* h = buf;
      if (keys.kind == KeyKind::Prehashed) {
        // The partition reads pre-hashed keys where they lie, with no kernel
        // streaming them in: the next chunk's are asked for here, to arrive
        // under this insertion. Zen 5 guest, two threads, M keys/s, medians
        // of 11-21 calls of 2^20 keys, alternated runs: 1 GiB 413.6 / 418.3 /
        // 426.2 -> 434.4 / 443.8 / 443.4, 32 MiB 582.1 / 582.2 -> 637.0 /
        // 630.9. (docs/PERF-NOTES.md, "Block owners: pre-hashed keys")
        h = static_cast<const std::uint64_t*>(keys.keys) + s;
        prefetch_lines(h + c, std::min(kHashChunk, hi - s - c) * sizeof(std::uint64_t));
        insert_ready(ready_n);
      } else {
        for (std::size_t at = 0; at < c; at += piece) {
          const std::size_t n = std::min(piece, c - at);
          insert_ready(ready_done + (ready_n - ready_done) * n / (c - at));  // all that is left at the last
          kernels.hash(keys, s + at, n, spec, buf + at);
        }
      }
      std::uint64_t* const own = inbox + waiting;
      if (workers == 2) {
        // Worker 1's hashes are those from h >> 32 = split on. The counting
        // sort below took 1.08-1.16x as long in the whole add as the scalar
        // partition, and the AVX-512 partition (partition-inl.h) beats the
        // scalar one (Zen 5 guest, 1 GiB u64 add: 12.8-13.5 against
        // 13.8-14.3 TSC cycles per key).
        // (docs/PERF-NOTES.md, "Block owners: two workers' partition")
        const std::uint64_t split = owner_of.first(1);
        const std::size_t above = partition(h, c, split, w == 0 ? own : theirs, w == 0 ? theirs : own);
        const std::size_t m = w == 0 ? c - above : above;
        waiting += m;
        const unsigned other = 1 - w;
        first[other] = 0;
        first[other + 1] = static_cast<std::uint32_t>(c - m);
      } else {
        // A counting sort by owner: w's hashes to the inbox, the others' to
        // theirs, each worker's together.
        std::uint32_t count[kMaxExchangeWorkers] = {};
        for (std::size_t i = 0; i < c; ++i) {
          owner[i] = owner_of(h[i]);
          ++count[owner[i]];
        }
        std::uint64_t* next[kMaxExchangeWorkers];
        std::uint32_t at = 0;
        for (unsigned o = 0; o < workers; ++o) {
          first[o] = at;
          next[o] = theirs + at;
          if (o != w) at += count[o];
        }
        first[workers] = at;
        next[w] = own;
        for (std::size_t i = 0; i < c; ++i) *next[owner[i]]++ = h[i];
        waiting += count[w];
      }
      // Theirs first, so the others have them as soon as they look.
      for (unsigned step = 1; step < workers; ++step) {
        const unsigned to = (w + step) % workers;
        HashRing& out = *rings[to * workers + w];
        HeldHashes& kept = *held[w * workers + to];
        const std::uint64_t* const send = theirs + first[to];
        const std::size_t t = first[to + 1] - first[to];
        std::size_t sent = 0;
        for (SpinWait wait(oversubscribed);;) {
          kept.drain_into(out);  // the oldest first
          if (kept.size() == 0) sent += out.push(send + sent, t - sent);
          if (t - sent <= kept.room()) break;
          // Holding all it may: take in what the others handed w until `to` makes room.
          if (receive() == 0 && !wait.spin()) std::this_thread::yield();
        }
        kept.append(send + sent, t - sent);
      }
      insert_if_full();
      receive();
    }
    // What fits goes through the rings; the rest the others read from `held` once the rings are closed, so
    // that w waits for no other worker to make room.
    for (unsigned to = 0; to < workers; ++to) {
      if (to == w) continue;
      held[w * workers + to]->drain_into(*rings[to * workers + w]);
      rings[to * workers + w]->close();
    }
    SpinWait wait(oversubscribed);
    for (;;) {
      // Read before the receive: then that receive gets the rest.
      bool last = true;
      for (unsigned from = 0; from < workers; ++from) {
        if (from != w && !rings[w * workers + from]->closed()) last = false;
      }
      if (receive() == 0) {
        if (last) break;
        if (!wait.spin()) std::this_thread::yield();
      }
    }
    insert_ready(ready_n);
    if (waiting != 0) apply(inbox, waiting, BloomLookahead{primed, 0});
    // Every other worker has closed its ring to w (read with acquire above): what it held for w is final.
    for (unsigned from = 0; from < workers; ++from) {
      if (from != w) {
        held[from * workers + w]->for_each_piece(
            [&](const std::uint64_t* h, std::size_t n) { apply(h, n, BloomLookahead{}); });
      }
    }
  });
}

}  // namespace probkit::detail
