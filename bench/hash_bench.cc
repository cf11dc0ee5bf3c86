// Hashing alone: the yardstick for HLL add ("HLL add >= 0.8 x computing the
// hashes alone") and a view of each target's hash kernel by itself.
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include <probkit/detail/kernels.hpp>

#include "bench_common.hpp"
#include "probes.hpp"
#include "bulk.hpp"

namespace probkit::bench {
namespace {

struct HashCase {
  KeyType type;
  HashSpec spec;
  const char* hash_name;
};
const HashCase kCases[] = {
    {KeyType::U64, HashSpec{}, "xxh64"},
    {KeyType::U64, HashSpec::redis(), "redis"},
    {KeyType::Str16, HashSpec{}, "xxh64"},
    {KeyType::Str8, HashSpec{}, "xxh64"},
    {KeyType::Url, HashSpec{}, "xxh64"},
    {KeyType::Id, HashSpec{}, "xxh64"},
};

void bm_hash(benchmark::State& state, HashCase c, Engine engine, unsigned threads) {
  const KeyPool& pool = column_pool(c.type);
  set_threads(threads);  // making a batch's Keys view checks string offsets over the call's threads
  const Rate probe = per_key(
      recent_sequential_read_bytes_per_s(static_cast<std::size_t>(pool.size() * key_bytes(c.type)), threads),
      key_bytes(c.type));
  std::size_t batch = 0;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    benchmark::DoNotOptimize(hash_pass(engine, pool.batch(batch * kBatchKeys, kBatchKeys), c.spec, threads));
    batch = (batch + 1) % kPoolBatches;
  }
  const double cpu = process_cpu_seconds() - cpu0;
  report(state, kBatchKeys, threads, cpu, probe, engine.target);
}

// One vCPU's speed: in-cache XXH64 of u64 keys with the benchmark's thread
// pinned to that CPU. A shared virtual machine's vCPUs need not be equal (one
// may share its physical core with another guest), and a 2-thread speed-up
// can then not reach 2 however well the work divides: the report sets the
// thread speed-ups beside these.
void bm_vcpu_speed(benchmark::State& state, Engine engine, int cpu) {
  cpu_set_t old_mask, one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  // Without the old mask there is nothing to restore afterwards: do not pin.
  if (pthread_getaffinity_np(pthread_self(), sizeof(old_mask), &old_mask) != 0 ||
      pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) {
    state.SkipWithError("cannot pin the benchmark thread to this CPU");
    return;
  }
  constexpr std::size_t kKeys = 8 * detail::kHashChunk;  // 64 KiB of keys, 8 KiB of hashes: in L2
  std::vector<std::uint64_t> keys(kKeys);
  for (std::size_t i = 0; i < kKeys; ++i) keys[i] = key_u64(i);
  const Keys batch(keys);
  for (auto _ : state) benchmark::DoNotOptimize(hash_pass(engine, batch, HashSpec{}, 1));
  pthread_setaffinity_np(pthread_self(), sizeof(old_mask), &old_mask);
  state.counters["keys_per_s"] = benchmark::Counter(double(kKeys), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(engine.target);
}

// Offsets of the pool's many 1-byte strings (the check reads only the
// offsets; the key width does not matter to it), in both widths.
struct OffsetPool {
  std::vector<std::uint8_t> data;
  std::vector<std::int32_t> off32;
  std::vector<std::int64_t> off64;
};

const OffsetPool& offset_pool() {
  static const OffsetPool pool = [] {
    OffsetPool p;
    const std::size_t n = kPoolBatches * kBatchKeys;
    p.data.assign(n, 'k');
    p.off32.resize(n + 1);
    p.off64.resize(n + 1);
    for (std::size_t i = 0; i <= n; ++i) p.off64[i] = p.off32[i] = static_cast<std::int32_t>(i);
    return p;
  }();
  return pool;
}

// Making a Keys view of a string batch checks its offsets (src/keys.cc): one
// pass over them, which every bulk call of strings pays first. Cold batches
// (the pool cycles), beside the sequential-read probe over the offsets.
void bm_keys_check(benchmark::State& state, bool wide, unsigned threads) {
  const OffsetPool& pool = offset_pool();
  const double bytes = wide ? 8.0 : 4.0;
  const Rate probe = per_key(
      recent_sequential_read_bytes_per_s(static_cast<std::size_t>(double(pool.data.size()) * bytes), threads), bytes);
  set_simd_target("");  // the check runs where Backend::Auto would: the best target
  set_threads(threads);
  std::size_t batch = 0;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    const std::size_t first = batch * kBatchKeys;
    const Keys keys = wide ? Keys(StringBatch<std::int64_t>{{pool.off64.data() + first, kBatchKeys + 1}, pool.data})
                           : Keys(StringBatch<std::int32_t>{{pool.off32.data() + first, kBatchKeys + 1}, pool.data});
    benchmark::DoNotOptimize(keys.size());
    batch = (batch + 1) % kPoolBatches;
  }
  const double cpu = process_cpu_seconds() - cpu0;
  const std::vector<Backend> backends = available_backends();
  const bool simd = std::find(backends.begin(), backends.end(), Backend::Simd) != backends.end();
  report(state, kBatchKeys, threads, cpu, probe, simd ? simd_target() : std::string("scalar"));
}

}  // namespace

std::uint64_t hash_pass(const Engine& engine, const Keys& keys, HashSpec spec, unsigned threads) {
  // probkit's own bulk driver: the same split over its persistent workers and
  // the same L1-resident chunks that the bulk calls hash into, with nothing
  // done to the hashes but what keeps them from being optimised away.
  // One cache line per worker: sharing one would bounce it between cores at
  // every chunk and charge that to hashing.
  struct alignas(64) Acc {
    std::uint64_t x = 0;
  };
  std::vector<Acc> acc(std::max(1u, threads));
  detail::for_each_hash_chunk(kernels_of(engine), keys.batch(), spec, std::max(1u, threads),
                              [&](unsigned w, std::size_t, const std::uint64_t* h, std::size_t c,
                                  detail::BloomLookahead) { acc[w].x ^= h[0] ^ h[c - 1]; });
  std::uint64_t out = 0;
  for (const Acc& a : acc) out ^= a.x;
  return out;
}

Rate hashing_alone_keys_per_s(const Engine& engine, KeyType type, HashSpec spec, unsigned threads) {
  using Clock = std::chrono::steady_clock;
  // Each of the 3 timed runs: whole batches until this long has passed, short
  // enough to take again beside every repetition of an HLL benchmark.
  constexpr auto kRunTime = std::chrono::milliseconds(20);
  const std::string key = "hashing/" + engine.target + "/" + to_string(type) + "/" +
                          std::to_string(static_cast<int>(spec.kind)) + "/" + std::to_string(spec.seed) + "/" +
                          std::to_string(threads);
  return recent(key, [&] {
    // The runs go on through the pool where the last one stopped, batch
    // after batch, as the HLL benchmark cycles through it: a few batches
    // alone (32 MB) would be served from a large L3 and make hashing look
    // faster than the key stream allows. (recent() runs one measurement at a
    // time, so the cursors need no lock of their own.)
    static std::map<std::string, std::size_t> next_batch;
    std::size_t& batch = next_batch[key];
    const KeyPool& pool = column_pool(type);
    set_threads(threads);  // as in bm_hash: the offsets check of each string batch runs on these threads
    std::vector<double> wall, cpu;
    std::uint64_t sink = 0;
    for (int rep = 0; rep < 3; ++rep) {
      std::size_t batches = 0;
      const auto t0 = Clock::now();
      const double c0 = process_cpu_seconds();
      do {
        sink ^= hash_pass(engine, pool.batch(batch * kBatchKeys, kBatchKeys), spec, threads);
        batch = (batch + 1) % kPoolBatches;
        ++batches;
      } while (Clock::now() - t0 < kRunTime);
      const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
      const double keys = double(batches) * kBatchKeys;
      wall.push_back(keys / secs);
      cpu.push_back(keys * threads / (process_cpu_seconds() - c0));
    }
    benchmark::DoNotOptimize(sink);
    std::sort(wall.begin(), wall.end());
    std::sort(cpu.begin(), cpu.end());
    return Rate{wall[wall.size() / 2], cpu[cpu.size() / 2]};
  });
}

void register_hash_benchmarks() {
  const std::vector<Engine> all = engines();
  for (unsigned threads : thread_counts()) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      for (const HashCase& c : kCases) {
        // Every target for u64 XXH64 at one thread; the rest for scalar and
        // the best; XXH64 at every thread count for AVX2 (its speed-ups).
        const bool main_engine = i < 2;
        const bool xxh64 = c.spec.kind == HashKind::Xxh64;
        const bool avx2 = &all[i] == avx2_below_best(all) && xxh64;
        if (!main_engine && !avx2 && (threads != 1 || c.type != KeyType::U64 || !xxh64)) continue;
        // 8-byte strings (their own pipeline, hash_width8_pipelined), URLs and
        // IDs at one thread only: no target or thread speed-up rests on them.
        if ((c.type == KeyType::Str8 || c.type == KeyType::Url || c.type == KeyType::Id) && threads != 1) continue;
        const std::string name = std::string("hash/keys=") + to_string(c.type) + "/hash=" + c.hash_name +
                                 "/engine=" + all[i].target + "/threads=" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), bm_hash, c, all[i], threads)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (unsigned threads : thread_counts()) {
    for (bool wide : {false, true}) {
      const std::string name = std::string("keys_check/keys=strings/offsets=") + (wide ? "int64" : "int32") +
                               "/threads=" + std::to_string(threads);
      benchmark::RegisterBenchmark(name.c_str(), bm_keys_check, wide, threads)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
  cpu_set_t mask;
  if (all_threads() > 1 && sched_getaffinity(0, sizeof(mask), &mask) == 0) {
    const Engine& best = all.size() > 1 ? all[1] : all[0];
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (!CPU_ISSET(cpu, &mask)) continue;
      const std::string name = "vcpu_speed/cpu=" + std::to_string(cpu) + "/engine=" + best.target + "/threads=1";
      benchmark::RegisterBenchmark(name.c_str(), bm_vcpu_speed, best, cpu)
          ->UseRealTime()
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace probkit::bench
