// Shared pieces of the benchmark programs: engines (backend + SIMD target),
// key pools, and the counters every benchmark reports.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <probkit/probkit.hpp>
#include <span>
#include <string>
#include <vector>

#include "probes.hpp"

namespace probkit::detail {
struct CpuKernels;
}

namespace probkit::bench {

// What serves a benchmark: the scalar reference or one pinned Highway target.
struct Engine {
  Backend backend = Backend::Scalar;
  std::string target;  // Highway target name for Simd; "scalar" for Scalar
  // Pins the target (Simd) and the thread count for the calls that follow.
  void apply(unsigned threads) const;
};

// Scalar first, then every Highway target this CPU supports, best first.
std::vector<Engine> engines();
// The kernels that serve an engine: its pinned target's (the scalar
// reference's for scalar, or for a target this build lacks).
const detail::CpuKernels& kernels_of(const Engine& e);
// The Highway AVX2 target when this CPU has it and serves something better:
// the instruction set issue 4's targets name, whose thread speed-ups the
// report shows beside the best engine's (a faster core reaches the memory's
// limits at fewer threads). Null otherwise.
const Engine* avx2_below_best(const std::vector<Engine>& all);
// Every core (what probkit uses with threads = 0).
unsigned all_threads();
// {1, all_threads()}, or {1} on a one-core machine.
std::vector<unsigned> thread_counts();

// Url: URL-like strings of 30 to 86 bytes (key_url), the keys of "is this URL
// already crawled?"; Id: ID-like strings of 9 to 31 bytes (key_id), the keys
// of "how many distinct visitors today?".
enum class KeyType { U64, Str16, Str8, Url, Id, Prehashed };
const char* to_string(KeyType t);
// Bytes of key column per key (strings: 16 or 8 data bytes, 59.5 on average
// for URLs, 20 for IDs, + one int32 offset).
double key_bytes(KeyType t);

// Key i of the synthetic key space: a bijective scramble of i, so distinct i
// give distinct keys; 16-byte strings are made from two scrambles, 8-byte
// strings are the bytes of the u64 key.
std::uint64_t key_u64(std::uint64_t i);
void key_str16(std::uint64_t i, std::uint8_t out[16]);
// Appends key i as a URL-like string: one of four schemes and hosts (17 to
// 31 bytes), the u64 key in base 36 (13 bytes: distinct keys give distinct
// strings) and 0 to 42 more path bytes, a length drawn from the key.
void key_url(std::uint64_t i, std::vector<std::uint8_t>& out);
// Appends key i as an ID-like string: key i in base 36 (9 characters for the
// pools' keys, 1 to 13 in all) and 0 to 22 capital letters (no digit of the
// key: distinct keys give distinct strings), a length drawn from the key.
void key_id(std::uint64_t i, std::vector<std::uint8_t>& out);

// A column of keys of one type with its Arrow-style offsets (strings), cut
// into batches that the benchmarks cycle through.
class KeyPool {
 public:
  // Key j of the pool is synthetic key index_of(j).
  template <class IndexOf>
  KeyPool(KeyType type, std::size_t n, IndexOf index_of) : type_(type), n_(n) {
    if (type == KeyType::Str16 || type == KeyType::Str8) {
      const std::size_t width = type == KeyType::Str16 ? 16 : 8;
      data_.resize(width * n);
      offsets_.resize(n + 1);
      for (std::size_t j = 0; j < n; ++j) {
        std::uint8_t* key = data_.data() + width * j;
        if (type == KeyType::Str16) {
          key_str16(index_of(j), key);
        } else {
          const std::uint64_t u = key_u64(index_of(j));
          std::memcpy(key, &u, 8);
        }
        offsets_[j] = static_cast<std::int32_t>(width * j);
      }
      offsets_[n] = static_cast<std::int32_t>(width * n);
    } else if (type == KeyType::Url || type == KeyType::Id) {
      data_.reserve(static_cast<std::size_t>(static_cast<double>(n) * (key_bytes(type) - 4)));
      offsets_.resize(n + 1);
      offsets_[0] = 0;
      for (std::size_t j = 0; j < n; ++j) {
        if (type == KeyType::Url) {
          key_url(index_of(j), data_);
        } else {
          key_id(index_of(j), data_);
        }
        offsets_[j + 1] = static_cast<std::int32_t>(data_.size());
      }
    } else {
      // Pre-hashed keys are the XXH64 hashes of the u64 keys, so a pre-hashed
      // query of a loaded filter finds what the u64 query would.
      u64_.resize(n);
      for (std::size_t j = 0; j < n; ++j) {
        const std::uint64_t key = key_u64(index_of(j));
        u64_[j] = type == KeyType::Prehashed ? probkit::hash(key) : key;
      }
    }
  }
  std::size_t size() const { return n_; }
  // Keys [first, first + count) as a probkit batch.
  Keys batch(std::size_t first, std::size_t count) const;

 private:
  KeyType type_;
  std::size_t n_;
  std::vector<std::uint64_t> u64_;
  std::vector<std::uint8_t> data_;
  std::vector<std::int32_t> offsets_;
};

// Keys per timed iteration, and how many batches a pool holds: enough that
// a 1 GiB filter's lines touched by one pass do not stay in a large L3.
inline constexpr std::size_t kBatchKeys = std::size_t{1} << 20;
inline constexpr std::size_t kPoolBatches = 16;

// The HLL key column, kPoolBatches batches: key j is synthetic key
// (3 << 40) + j (the peers' HLL column starts there too). HLL add, hashing
// alone (its yardstick) and the hash benchmark all read this one pool, so
// they hash the same keys.
const KeyPool& column_pool(KeyType type);

// Sets the counters every benchmark reports: keys_per_s (per wall-clock
// second), probe (the same-process speed-of-light rate in keys/s), vs_probe =
// keys_per_s / probe; the same per CPU second of each thread (keys_per_cpu_s,
// probe_cpu, vs_probe_cpu; `cpu_seconds` is the process CPU time of the timed
// loop); and, when `reference` is given, reference / vs_reference (HLL add
// against hashing alone, Bloom add against the random-line-update probe).
void report(benchmark::State& state, std::size_t keys_per_iteration, unsigned threads, double cpu_seconds,
            Rate probe, const std::string& served, Rate reference = {});

// Keys per second of computing the hashes alone (the engine's hash kernel
// into an L1-resident buffer, nothing else) over the column pool's keys: the
// median of 3 short runs, re-measured through recent() (probes.hpp) once the
// last measurement of this (engine, key type, hash, threads) is a few seconds
// old, as the probes are, so each repetition of HLL add is set beside one
// taken close to it.
Rate hashing_alone_keys_per_s(const Engine& engine, KeyType type, HashSpec spec, unsigned threads);
// One pass of hashing alone over a batch; returns a value that depends on
// every hash (so nothing is optimised away).
std::uint64_t hash_pass(const Engine& engine, const Keys& keys, HashSpec spec, unsigned threads);

// Rate in bytes/s -> keys/s for keys of `bytes_per_key` bytes.
inline Rate per_key(Rate bytes_per_s, double bytes_per_key) {
  return {bytes_per_s.per_s / bytes_per_key, bytes_per_s.per_cpu_s / bytes_per_key};
}

// Size label: 256KiB, 32MiB, 1GiB.
std::string size_label(std::size_t bytes);

// Registration hooks, one per benchmark source.
void register_bloom_benchmarks();
void register_hll_benchmarks();
void register_hash_benchmarks();

}  // namespace probkit::bench
