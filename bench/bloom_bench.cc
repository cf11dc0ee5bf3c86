// Bloom filter add / contains / count per engine, key type, filter size and
// thread count, each beside the random-line-read probe of the same size (and
// add beside the random-line-update probe too); and the ideal of the
// multi-threaded add into a 1 GiB filter (bloom_add_owned).
#include <algorithm>
#include <map>
#include <memory>
#include <utility>

#include <probkit/detail/kernels.hpp>

#include "bench_common.hpp"
#include "block_owners.hpp"
#include "bulk.hpp"
#include "dispatch.hpp"
#include "probes.hpp"
#include "worker_pool.hpp"

namespace probkit::bench {
namespace {

enum class Op { Add, Contains, Count };
const char* to_string(Op op) { return op == Op::Add ? "add" : op == Op::Contains ? "contains" : "count"; }
const char* to_string(BloomLayout l) { return l == BloomLayout::Cacheline512 ? "cacheline512" : "parquet_sbbf"; }

constexpr std::size_t kSizes[] = {std::size_t{256} << 10, std::size_t{32} << 20, std::size_t{1} << 30};
// The sizes between them, for the plots of throughput against filter size and
// the prefetch thresholds that lie there (detail/kernels.hpp: one prefetch a
// block from 1 MiB, two from 8 MiB): u64 contains and add into cacheline512,
// one thread, the best target (and AVX2 below it).
constexpr std::size_t kSweepSizes[] = {std::size_t{1} << 20, std::size_t{4} << 20, std::size_t{8} << 20,
                                       std::size_t{16} << 20, std::size_t{128} << 20};
// The filters are loaded to 10 bits per key, k = 6 for cacheline512, the
// design point of the floors.
constexpr double kBitsPerKey = 10.0;
constexpr std::uint32_t kCachelineK = 6;
// Synthetic key indices from here on are never inserted into a loaded filter
// (which holds at most 2^37 keys).
constexpr std::uint64_t kFreshBase = std::uint64_t{1} << 40;

// The k of the in-cache benchmarks by k (bloom_contains_k, bloom_add_k): the
// AVX2 contains test changes shape past k = 8 (a second vector of probes),
// and the AVX2 add buffers 16 probe positions per key there instead of 8.
constexpr std::uint32_t kByKs[] = {4, 6, 8, 9, 12, 16};

BloomFilter make_filter(BloomLayout layout, std::size_t bytes, std::uint32_t k = kCachelineK) {
  return BloomFilter::for_bytes(bytes, layout == BloomLayout::Cacheline512 ? k : 8, layout);
}

std::uint64_t fill_count(std::size_t bytes) { return static_cast<std::uint64_t>(8.0 * bytes / kBitsPerKey); }

// URL- and ID-like strings come in pools of 4 batches, not kPoolBatches: 4 M
// URLs hold 250 MB, and 4 M keys still visit more lines of a 1 GiB filter
// than an L3 holds.
std::size_t pool_keys(KeyType type) {
  return (type == KeyType::Url || type == KeyType::Id ? 4 : kPoolBatches) * kBatchKeys;
}

// The filter is loaded with fill_count(bytes) keys of every kind a query asks
// about (key indices 0, 1, ... of each kind), so each kind of query finds
// inserted keys: strings only as many as their query pool can use (half of
// its keys are inserted ones; hashing 400 M strings to fill a 1 GiB filter
// would cost more than all the benchmarks), u64 keys the rest.
std::uint64_t inserted_count(KeyType type, std::size_t bytes) {
  const auto strings = [&](KeyType t, std::uint64_t share) {
    return std::min<std::uint64_t>(fill_count(bytes) / share, pool_keys(t) / 2);
  };
  switch (type) {
    case KeyType::Str16: return strings(type, 2);
    case KeyType::Url:
    case KeyType::Id: return strings(type, 8);
    default:  // u64 keys, and pre-hashed ones, which are their hashes
      return fill_count(bytes) - strings(KeyType::Str16, 2) - strings(KeyType::Url, 8) - strings(KeyType::Id, 8);
  }
}

BloomFilter loaded_filter(BloomLayout layout, std::size_t bytes, std::uint32_t k) {
  BloomFilter f = make_filter(layout, bytes, k);
  set_threads(0);
  constexpr std::uint64_t kChunk = std::uint64_t{1} << 22;
  for (KeyType type : {KeyType::U64, KeyType::Str16, KeyType::Url, KeyType::Id}) {
    const std::uint64_t n = inserted_count(type, bytes);
    for (std::uint64_t lo = 0; lo < n; lo += kChunk) {
      const KeyPool keys(type, std::min(kChunk, n - lo), [&](std::size_t j) { return lo + j; });
      f.add(keys.batch(0, keys.size()));
    }
  }
  return f;
}

// Everything a benchmark of one filter size needs, built on first use and
// kept, so that repetitions of every size can be shuffled together (random
// interleaving) without building a filter twice: 32 MiB and 1 GiB together
// hold about 5 GiB (both layouts, loaded and empty, and their query pools;
// bloom_add_owned adds the insertion pool's hashes split by owner, 128 MiB
// per thread count, and the pre-hashed pool they come from, 128 MiB), the
// sweep's 128 MiB (one layout and key type) about 400 MiB more, the URL- and
// ID-like strings' pools (insertions and 1 GiB queries) about 700 MB.
struct SizeState {
  std::map<std::pair<BloomLayout, std::uint32_t>, std::unique_ptr<BloomFilter>> loaded;  // by layout and k
  std::map<std::pair<BloomLayout, std::uint32_t>, std::unique_ptr<BloomFilter>> empty;   // by layout and k
  std::map<KeyType, std::unique_ptr<KeyPool>> queries;
};

SizeState& state_for(std::size_t bytes) {
  static std::map<std::size_t, SizeState> states;
  return states[bytes];
}

const BloomFilter& loaded(BloomLayout layout, std::size_t bytes, std::uint32_t k = kCachelineK) {
  auto& slot = state_for(bytes).loaded[{layout, k}];
  if (!slot) slot = std::make_unique<BloomFilter>(loaded_filter(layout, bytes, k));
  return *slot;
}

BloomFilter& empty(BloomLayout layout, std::size_t bytes, std::uint32_t k = kCachelineK) {
  auto& slot = state_for(bytes).empty[{layout, k}];
  if (!slot) slot = std::make_unique<BloomFilter>(make_filter(layout, bytes, k));
  return *slot;
}

// Queries: even positions are inserted keys of the pool's kind (drawn at
// random), odd ones fresh keys, so half the answers are 1 (a branchy kernel
// cannot skip work).
const KeyPool& queries(KeyType type, std::size_t bytes) {
  auto& slot = state_for(bytes).queries[type];
  if (!slot) {
    const std::uint64_t inserted = inserted_count(type, bytes);
    slot = std::make_unique<KeyPool>(type, pool_keys(type), [&](std::size_t j) -> std::uint64_t {
      if (j % 2) return kFreshBase + j;
      const std::uint64_t r = key_u64(j ^ 0xABCDEF);
      return static_cast<std::uint64_t>((static_cast<unsigned __int128>(r) * inserted) >> 64);
    });
  }
  return *slot;
}

// Keys to insert: fresh, the same for every size.
const KeyPool& inserts(KeyType type) {
  static std::map<KeyType, std::unique_ptr<KeyPool>> pools;
  auto& slot = pools[type];
  if (!slot) {
    slot = std::make_unique<KeyPool>(type, pool_keys(type), [](std::size_t j) { return 2 * kFreshBase + j; });
  }
  return *slot;
}

// The probes a benchmark of `filter` sets its rate beside: random line reads
// of the filter's size, and for an add, which writes its block back, random
// line updates too. First the filter's pages are touched, so that no
// benchmark times their first faults.
struct FilterProbes {
  Rate reads, updates;
};
FilterProbes filter_probes(const BloomFilter& filter, unsigned threads, bool add) {
  const std::size_t bytes = filter.data().size();
  benchmark::DoNotOptimize(touch_pages(filter.data().data(), bytes));
  return {recent_random_line_reads_per_s(bytes, threads),
          add ? recent_random_line_updates_per_s(bytes, threads) : Rate{}};
}

// k: of the cacheline512 filter, a loaded one for contains and count, an
// empty one (filling up as the repetitions go) for add.
void bm_bloom(benchmark::State& state, Op op, BloomLayout layout, KeyType type, std::size_t bytes, Engine engine,
              unsigned threads, std::uint32_t k) {
  const KeyPool& pool = op == Op::Add ? inserts(type) : queries(type, bytes);
  BloomFilter* target = op == Op::Add ? &empty(layout, bytes, k) : nullptr;
  const BloomFilter& filter = op == Op::Add ? *target : loaded(layout, bytes, k);
  const FilterProbes probes = filter_probes(filter, threads, op == Op::Add);
  engine.apply(threads);
  std::vector<std::uint8_t> out(kBatchKeys);
  std::size_t batch = 0, last = 0;
  std::uint64_t hits = 0, last_hits = 0;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    const Keys keys = pool.batch(batch * kBatchKeys, kBatchKeys);
    last = batch;
    batch = (batch + 1) % (pool.size() / kBatchKeys);
    switch (op) {
      case Op::Add: target->add(keys, engine.backend); break;
      case Op::Contains: filter.contains(keys, out, engine.backend); break;
      case Op::Count: hits += last_hits = filter.count(keys, engine.backend); break;
    }
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const double cpu = process_cpu_seconds() - cpu0;
  report(state, kBatchKeys, threads, cpu, probes.reads, last_served().target, probes.updates);
  if (op == Op::Count && state.iterations() > 0) {
    state.counters["hit_rate"] = static_cast<double>(hits) / (state.iterations() * double(kBatchKeys));
  }
  // The last batch against the scalar backend, outside the timing: a kernel that skipped its work, or did
  // it wrong, cannot post a rate (the report lists a benchmark that failed).
  if (state.iterations() == 0) return;
  const Keys keys = pool.batch(last * kBatchKeys, kBatchKeys);
  if (op == Op::Add) {
    // On filters of the check's own, zeroed: the timed one is shared by every add of its size (engines and
    // thread counts alike) and at 256 KiB is full after one pass over the pool, so asking it about the keys
    // just added passed whatever the kernel did.
    BloomFilter got = make_filter(layout, bytes, k);
    BloomFilter want = make_filter(layout, bytes, k);
    got.add(keys, engine.backend);
    want.add(keys, Backend::Scalar);
    if (!(got == want)) state.SkipWithError("add: the filter differs from the scalar backend's for the same keys");
    return;
  }
  std::vector<std::uint8_t> want(kBatchKeys);
  filter.contains(keys, want, Backend::Scalar);
  const auto present = static_cast<std::uint64_t>(std::count(want.begin(), want.end(), 1));
  if (op == Op::Contains && out != want) state.SkipWithError("contains: answers differ from the scalar backend's");
  if (op == Op::Count && last_hits != present) state.SkipWithError("count: differs from the scalar backend's");
}

// The insertion pool's pre-hashed keys (the XXH64 hashes of the u64 keys
// the add benchmarks insert), each batch's split between `workers` block
// owners as the multi-threaded add splits them (detail::HashOwners), in key
// order: [batch * workers + w] holds worker w's. Built once per size and
// worker count.
const std::vector<std::vector<std::uint64_t>>& owned_hashes(std::uint64_t num_blocks, unsigned workers) {
  static std::map<std::pair<std::uint64_t, unsigned>, std::vector<std::vector<std::uint64_t>>> cache;
  auto& out = cache[{num_blocks, workers}];
  if (out.empty()) {
    const KeyPool& pool = inserts(KeyType::Prehashed);
    const auto* hashes = static_cast<const std::uint64_t*>(pool.batch(0, pool.size()).batch().keys);
    const detail::HashOwners owner_of(workers, num_blocks);
    out.resize(kPoolBatches * workers);
    for (std::size_t i = 0; i < pool.size(); ++i) {
      out[i / kBatchKeys * workers + owner_of(hashes[i])].push_back(hashes[i]);
    }
  }
  return out;
}

// The ideal of a multi-threaded add into a large filter: each worker inserts
// its own blocks' pre-hashed keys, sorted out beforehand, with the bare
// kernel in the inbox's steps of detail::kHashChunk keys and as many hashes
// ahead as the driver passes. No hashing and no exchange between the
// workers, so the speed-up over one thread is what the memory gives the
// kernel; the public add's own speed-up is set beside it in the report. As
// many workers as the public add of a batch would take.
void bm_bloom_add_owned(benchmark::State& state, std::size_t bytes, Engine engine, unsigned threads) {
  BloomFilter& filter = empty(BloomLayout::Cacheline512, bytes);
  // The benchmark's own filter (the add benchmarks' target): the kernel ORs
  // the same keys' bits into the words the object owns.
  auto* words = reinterpret_cast<std::uint32_t*>(const_cast<std::uint8_t*>(filter.data().data()));
  const detail::BloomRef ref{words, filter.num_blocks(), filter.k(), BloomLayout::Cacheline512};
  set_threads(threads);
  const unsigned workers = static_cast<unsigned>(std::min<std::uint64_t>(
      {detail::workers_for(kBatchKeys), detail::kMaxExchangeWorkers, ref.num_blocks}));
  const auto& owned = owned_hashes(ref.num_blocks, workers);
  const FilterProbes probes = filter_probes(filter, threads, true);
  const detail::CpuKernels& kernels = kernels_of(engine);
  const std::size_t max_ahead = detail::bloom_prefetch_keys_ahead(bytes);
  std::size_t batch = 0;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    detail::run_workers(workers, [&](unsigned w) {
      const std::vector<std::uint64_t>& h = owned[batch * workers + w];
      std::size_t primed = 0;
      for (std::size_t s = 0; s < h.size(); s += detail::kHashChunk) {
        const std::size_t c = std::min(detail::kHashChunk, h.size() - s);
        const std::size_t ahead = std::min(max_ahead, h.size() - s - c);
        kernels.bloom_add(ref, h.data() + s, c, detail::BloomLookahead{primed, ahead});
        primed = ahead;
      }
    });
    batch = (batch + 1) % kPoolBatches;
    benchmark::ClobberMemory();
  }
  const double cpu = process_cpu_seconds() - cpu0;
  report(state, kBatchKeys, threads, cpu, probes.reads, engine.target, probes.updates);
}

void add_one(Op op, BloomLayout layout, KeyType type, std::size_t bytes, const Engine& e, unsigned threads) {
  const std::string name = std::string("bloom_") + to_string(op) + "/layout=" + to_string(layout) +
                           "/keys=" + to_string(type) + "/size=" + size_label(bytes) +
                           "/engine=" + e.target + "/threads=" + std::to_string(threads);
  benchmark::RegisterBenchmark(name.c_str(), bm_bloom, op, layout, type, bytes, e, threads, kCachelineK)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

// contains or add of u64 keys in cache at one of kByKs, one thread: the same
// keys and, for contains, load (10 bits per key), so only the probes per key
// change.
void add_by_k(Op op, std::uint32_t k, const Engine& e) {
  const std::string name = std::string("bloom_") + to_string(op) +
                           "_k/layout=cacheline512/keys=u64/size=" + size_label(kSizes[0]) + "/k=" + std::to_string(k) +
                           "/engine=" + e.target + "/threads=1";
  benchmark::RegisterBenchmark(name.c_str(), bm_bloom, op, BloomLayout::Cacheline512, KeyType::U64, kSizes[0], e, 1u, k)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

struct Case {
  Op op;
  BloomLayout layout;
};
constexpr Case kCases[] = {
    {Op::Add, BloomLayout::Cacheline512},      {Op::Contains, BloomLayout::Cacheline512},
    {Op::Count, BloomLayout::Cacheline512},    {Op::Add, BloomLayout::ParquetSbbf},
    {Op::Contains, BloomLayout::ParquetSbbf},
};

}  // namespace

void register_bloom_benchmarks() {
  const std::vector<Engine> all = engines();
  // The full matrix for the reference and the best target; the other SIMD
  // targets at the smallest and largest size, one thread, u64 keys.
  std::vector<Engine> main{all.front()};
  if (all.size() > 1) main.push_back(all[1]);
  for (std::size_t bytes : kSizes) {
    for (unsigned threads : thread_counts()) {
      for (const Engine& e : main) {
        for (KeyType type : {KeyType::U64, KeyType::Str16}) {
          for (const Case& c : kCases) add_one(c.op, c.layout, type, bytes, e, threads);
        }
      }
      if (threads != 1 || bytes == kSizes[1]) continue;
      for (std::size_t i = 2; i < all.size(); ++i) {
        for (const Case& c : kCases) add_one(c.op, c.layout, KeyType::U64, bytes, all[i], 1);
      }
      // The filter kernels without hashing, in cache, on every engine: with
      // the hash benchmark they split a u64 rate into its two halves.
      if (bytes != kSizes[0]) continue;
      for (const Engine& e : all) {
        for (Op op : {Op::Add, Op::Contains}) {
          add_one(op, BloomLayout::Cacheline512, KeyType::Prehashed, bytes, e, 1);
        }
      }
    }
  }
  // URL- and ID-like strings (hashed with their lengths' forms, then tested or added) into the smallest and
  // largest filter: the reference and the best target, one thread.
  for (std::size_t bytes : {kSizes[0], kSizes[2]}) {
    for (const Engine& e : main) {
      for (KeyType type : {KeyType::Url, KeyType::Id}) {
        for (Op op : {Op::Add, Op::Contains}) add_one(op, BloomLayout::Cacheline512, type, bytes, e, 1);
      }
    }
  }
  // The sizes between, on the best target (the reference where it is the only engine) and AVX2 below it,
  // which the full matrix measures at its smallest and largest size only: here also at the middle one, so
  // that its plotted line runs through.
  for (std::size_t bytes : kSweepSizes) {
    for (const Engine* e : {&all[all.size() > 1 ? 1 : 0], avx2_below_best(all)}) {
      if (e == nullptr) continue;
      for (Op op : {Op::Add, Op::Contains}) add_one(op, BloomLayout::Cacheline512, KeyType::U64, bytes, *e, 1);
    }
  }
  if (const Engine* avx2 = avx2_below_best(all)) {
    for (Op op : {Op::Add, Op::Contains}) add_one(op, BloomLayout::Cacheline512, KeyType::U64, kSizes[1], *avx2, 1);
  }
  // contains and add by k: the reference, the best target and AVX2 below it.
  for (const Engine* e : {&all.front(), all.size() > 1 ? &all[1] : nullptr, avx2_below_best(all)}) {
    if (e == nullptr) continue;
    for (Op op : {Op::Contains, Op::Add}) {
      for (std::uint32_t k : kByKs) add_by_k(op, k, *e);
    }
  }
  // The ideal of the multi-threaded add into the largest filter, for the
  // best target and AVX2, at every thread count (where there are several).
  for (const Engine* e : {all.size() > 1 ? &all[1] : nullptr, avx2_below_best(all)}) {
    if (e == nullptr || all_threads() == 1) continue;
    for (unsigned threads : thread_counts()) {
      const std::string name = std::string("bloom_add_owned/layout=cacheline512/keys=prehashed/size=") +
                               size_label(kSizes[2]) + "/engine=" + e->target + "/threads=" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), bm_bloom_add_owned, kSizes[2], *e, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
  // The AVX2 target's thread speed-ups (the report's scaling table): u64 add
  // and contains at the smallest and largest size (one thread is above), and
  // the add of strings in cache.
  if (const Engine* avx2 = avx2_below_best(all)) {
    for (unsigned threads : thread_counts()) {
      if (threads != 1) {
        for (std::size_t bytes : {kSizes[0], kSizes[2]}) {
          for (Op op : {Op::Add, Op::Contains})
            add_one(op, BloomLayout::Cacheline512, KeyType::U64, bytes, *avx2, threads);
        }
      }
      add_one(Op::Add, BloomLayout::Cacheline512, KeyType::Str16, kSizes[0], *avx2, threads);
    }
  }
}

}  // namespace probkit::bench
