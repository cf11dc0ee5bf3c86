// HyperLogLog add per engine, key type, hash and thread count, beside the
// sequential-read probe over the key column and beside hashing alone.
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "bench_common.hpp"
#include "probes.hpp"

namespace probkit::bench {
namespace {

constexpr std::uint32_t kPrecision = 14;

struct HllCase {
  KeyType type;
  HashSpec spec;
  const char* hash_name;
};
const HllCase kCases[] = {
    {KeyType::U64, HashSpec{}, "xxh64"},        {KeyType::U64, HashSpec::redis(), "redis"},
    {KeyType::Prehashed, HashSpec{}, "none"},   {KeyType::Str16, HashSpec{}, "xxh64"},
    {KeyType::Str16, HashSpec::redis(), "redis"}, {KeyType::Url, HashSpec{}, "xxh64"},
    {KeyType::Id, HashSpec{}, "xxh64"},
};

// The sketch the scalar backend makes of the whole pool (batch = nullopt), or of one batch.
HyperLogLog scalar_sketch(const HllCase& c, std::optional<std::size_t> batch) {
  const KeyPool& pool = column_pool(c.type);
  HyperLogLog sketch(kPrecision, c.spec);
  if (batch) {
    sketch.add(pool.batch(*batch * kBatchKeys, kBatchKeys), Backend::Scalar);
    return sketch;
  }
  static std::map<std::pair<int, std::string>, HyperLogLog> whole_pool;
  const auto key = std::make_pair(static_cast<int>(c.type), std::string(c.hash_name));
  auto it = whole_pool.find(key);
  if (it == whole_pool.end()) {
    for (std::size_t b = 0; b < kPoolBatches; ++b) {
      sketch.add(pool.batch(b * kBatchKeys, kBatchKeys), Backend::Scalar);
    }
    it = whole_pool.emplace(key, sketch).first;
  }
  return it->second;
}

// Steady state (fresh = false): the sketch has seen the whole pool once, as
// the timed loop's keys (which cycle through it) will keep it. Fresh: a new
// sketch per iteration and one add of a whole batch of distinct keys, the
// call that counts one column's distinct values; young registers take the
// kernels' raise path, and the floor screen starts only once the smallest
// register leaves 0 (after about m ln m = 160 K keys at p = 14).
void bm_hll_add(benchmark::State& state, HllCase c, Engine engine, unsigned threads, bool fresh) {
  const KeyPool& pool = column_pool(c.type);
  const Rate probe = per_key(
      recent_sequential_read_bytes_per_s(static_cast<std::size_t>(pool.size() * key_bytes(c.type)), threads),
      key_bytes(c.type));
  const Rate hashing =
      c.type == KeyType::Prehashed ? Rate{} : hashing_alone_keys_per_s(engine, c.type, c.spec, threads);
  HyperLogLog sketch(kPrecision, c.spec);
  engine.apply(threads);
  if (!fresh) {
    for (std::size_t b = 0; b < kPoolBatches; ++b) sketch.add(pool.batch(b * kBatchKeys, kBatchKeys), engine.backend);
  }
  std::size_t batch = 0, last = 0;
  const double cpu0 = process_cpu_seconds();
  for (auto _ : state) {
    if (fresh) sketch = HyperLogLog(kPrecision, c.spec);
    sketch.add(pool.batch(batch * kBatchKeys, kBatchKeys), engine.backend);
    last = batch;
    batch = (batch + 1) % kPoolBatches;
    benchmark::ClobberMemory();
  }
  const double cpu = process_cpu_seconds() - cpu0;
  report(state, kBatchKeys, threads, cpu, probe, last_served().target, hashing);
  // The registers against the scalar backend's, outside the timing: a kernel that skipped its work cannot
  // post a rate (the report lists a benchmark that failed). Steady state: the whole pool (made once per key
  // type and hash); fresh: the last batch.
  const std::optional<std::size_t> added = fresh ? std::optional<std::size_t>(last) : std::nullopt;
  if (state.iterations() > 0 && !(sketch == scalar_sketch(c, added))) {
    state.SkipWithError("hll add: registers differ from the scalar backend's");
  }
}

}  // namespace

void register_hll_benchmarks() {
  const std::vector<Engine> all = engines();
  for (unsigned threads : thread_counts()) {
    for (std::size_t i = 0; i < all.size(); ++i) {
      // Every target at one thread for u64 XXH64 and pre-hashed keys, and
      // for the fresh sketch; the whole matrix, and the fresh sketch at every
      // thread count, for scalar and the best target; the AVX2 target's
      // thread speed-ups (XXH64 of u64 and strings, pre-hashed).
      const bool main_engine = i < 2;
      const bool avx2 = &all[i] == avx2_below_best(all);
      for (const HllCase& c : kCases) {
        const bool sweep = threads == 1 && (c.type == KeyType::Prehashed ||
                                            (c.type == KeyType::U64 && c.spec.kind == HashKind::Xxh64));
        const bool scaling = avx2 && (c.type == KeyType::Prehashed || c.spec.kind == HashKind::Xxh64);
        if (!main_engine && !sweep && !scaling) continue;
        const std::string name = std::string("hll_add/keys=") + to_string(c.type) + "/hash=" + c.hash_name +
                                 "/engine=" + all[i].target + "/threads=" + std::to_string(threads);
        benchmark::RegisterBenchmark(name.c_str(), bm_hll_add, c, all[i], threads, false)
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
      if (!main_engine && threads != 1) continue;
      const HllCase& u64 = kCases[0];  // u64 keys, XXH64
      const std::string fresh = std::string("hll_add_fresh/keys=") + to_string(u64.type) + "/hash=" + u64.hash_name +
                                "/engine=" + all[i].target + "/threads=" + std::to_string(threads);
      benchmark::RegisterBenchmark(fresh.c_str(), bm_hll_add, u64, all[i], threads, true)
          ->UseRealTime()
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace probkit::bench
