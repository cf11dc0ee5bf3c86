// probkit_accuracy: the measurements behind docs/ACCURACY.md, as CSV on stdout.
//   probkit_accuracy hll   [--scale F]  HLL relative error vs cardinality, p = 10, 12, 14, 16
//   probkit_accuracy bloom [--scale F]  Bloom FPR vs bits/key for both layouts, with models
// --scale multiplies seed counts and query counts (default 1; < 1 for a quick look);
// --max-n caps the HLL cardinality (default 10^9); --keys sets the keys per Bloom filter (default 10^6).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <probkit/probkit.hpp>

namespace {

using probkit::BloomFilter;
using probkit::BloomLayout;
using probkit::HashSpec;
using probkit::HyperLogLog;

// What Backend::Auto runs here (the results are identical on every backend).
std::string auto_engine() {
  const auto b = probkit::available_backends();
  if (std::find(b.begin(), b.end(), probkit::Backend::Simd) != b.end()) return probkit::simd_target();
  return "scalar";
}

constexpr std::uint32_t kPrecisions[] = {10, 12, 14, 16};

// Log-spaced cardinalities 1 .. 10^9, ten per decade (all of 1..10 included).
std::vector<std::uint64_t> checkpoints(std::uint64_t max_n) {
  std::vector<std::uint64_t> out;
  for (int j = 0; j <= 90; ++j) {
    const auto n = static_cast<std::uint64_t>(std::llround(std::pow(10.0, j / 10.0)));
    if (n <= max_n && (out.empty() || n > out.back())) out.push_back(n);
  }
  for (std::uint64_t n = 2; n < 10; ++n) out.push_back(n);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Seeds and how far each goes: many seeds at small n, fewer at the largest,
// so a full run takes a few minutes on two cores.
struct Tier {
  int seeds;
  std::uint64_t max_n;
};

int run_hll(double scale, std::uint64_t cap) {
  const Tier tiers[] = {{12, 1'000'000'000}, {36, 100'000'000}, {150, 10'000'000}, {800, 1'000'000}};
  struct Job {
    std::uint64_t seed, max_n;
  };
  std::vector<Job> jobs;  // longest first, for balance across threads
  std::uint64_t seed = 1;
  for (const Tier& t : tiers) {
    const int n = std::max(2, static_cast<int>(std::lround(t.seeds * scale)));
    for (int i = 0; i < n; ++i) jobs.push_back({seed++, std::min(t.max_n, cap)});
  }
  const std::vector<std::uint64_t> points = checkpoints(tiers[0].max_n);
  constexpr std::size_t kNp = std::size(kPrecisions);
  // Per (precision, checkpoint): count, sum of relative errors, sum of squares.
  std::vector<double> cnt(kNp * points.size()), sum(kNp * points.size()), sum2(kNp * points.size());
  std::mutex merge;
  std::atomic<std::size_t> next{0};

  probkit::set_threads(1);  // parallel over seeds instead
  auto worker = [&] {
    std::vector<double> c(cnt.size()), s(cnt.size()), s2(cnt.size());
    std::vector<std::uint64_t> hashes;
    for (std::size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      const HashSpec spec{probkit::HashKind::Xxh64, jobs[j].seed};
      std::vector<HyperLogLog> sketches;
      for (std::uint32_t p : kPrecisions) sketches.emplace_back(p, spec);
      std::uint64_t added = 0;
      for (std::size_t ci = 0; ci < points.size() && points[ci] <= jobs[j].max_n; ++ci) {
        while (added < points[ci]) {
          const std::uint64_t c1 = std::min<std::uint64_t>(points[ci] - added, 1 << 20);
          hashes.resize(c1);
          for (std::uint64_t i = 0; i < c1; ++i) hashes[i] = probkit::hash(added + i, spec);
          const probkit::Keys keys(probkit::Prehashed{hashes});
          for (auto& sk : sketches) sk.add(keys, probkit::Backend::Auto);
          added += c1;
        }
        for (std::size_t pi = 0; pi < kNp; ++pi) {
          const double rel = sketches[pi].estimate() / static_cast<double>(points[ci]) - 1.0;
          const std::size_t at = pi * points.size() + ci;
          c[at] += 1;
          s[at] += rel;
          s2[at] += rel * rel;
        }
      }
    }
    std::lock_guard lock(merge);
    for (std::size_t i = 0; i < cnt.size(); ++i) {
      cnt[i] += c[i];
      sum[i] += s[i];
      sum2[i] += s2[i];
    }
  };
  std::vector<std::thread> pool;
  const unsigned nthreads = std::max(1u, std::thread::hardware_concurrency());
  for (unsigned t = 0; t < nthreads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();

  std::printf("# served: %s\n", auto_engine().c_str());
  std::printf("p,n,seeds,mean_rel_error,rmse_rel,theory_1.04/sqrt(m)\n");
  for (std::size_t pi = 0; pi < kNp; ++pi) {
    const double m = std::ldexp(1.0, static_cast<int>(kPrecisions[pi]));
    for (std::size_t ci = 0; ci < points.size(); ++ci) {
      const std::size_t at = pi * points.size() + ci;
      if (cnt[at] == 0) continue;
      std::printf("%u,%llu,%.0f,%.6e,%.6e,%.6e\n", kPrecisions[pi], static_cast<unsigned long long>(points[ci]),
                  cnt[at], sum[at] / cnt[at], std::sqrt(sum2[at] / cnt[at]), 1.04 / std::sqrt(m));
    }
  }
  return 0;
}

// The classic (unblocked) Bloom filter's false-positive rate for m bits, n keys, k hashes.
double classic_fpr(double m, double n, double k) { return std::pow(1.0 - std::exp(-k * n / m), k); }

int run_bloom(double scale, std::uint64_t num_keys) {
  const auto queries = static_cast<std::uint64_t>(std::max(1e5, 2e7 * scale));
  std::vector<std::uint64_t> keys(num_keys), probe(queries);
  for (std::uint64_t i = 0; i < num_keys; ++i) keys[i] = i;
  for (std::uint64_t i = 0; i < queries; ++i) probe[i] = (std::uint64_t{1} << 40) + i;  // never inserted
  probkit::set_threads(0);
  std::printf("# served: %s\n", auto_engine().c_str());
  std::printf("layout,bits_per_key,k,keys,queries,measured_fpr,model_fpr,classic_fpr,classic_best_k,classic_best_fpr\n");
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    const bool cl = layout == BloomLayout::Cacheline512;
    const double block_bits = cl ? 512.0 : 256.0;
    for (int bpk = 4; bpk <= 24; ++bpk) {
      const auto nb = static_cast<std::uint64_t>(std::llround(num_keys * bpk / block_bits));
      std::uint32_t k = 8;
      if (cl) {  // the k the blocked model says is best at this load
        double best = 2.0;
        for (std::uint32_t kk = 1; kk <= 16; ++kk) {
          const double f = probkit::bloom_model_fpr(layout, nb, kk, num_keys);
          if (f < best) best = f, k = kk;
        }
      }
      BloomFilter f(nb, k, layout);
      f.add(keys);
      const std::uint64_t fp = f.count(probe);
      const double m = static_cast<double>(nb) * block_bits;
      double classic_best = 2.0;
      std::uint32_t classic_k = 1;
      for (std::uint32_t kk = 1; kk <= 32; ++kk) {
        if (classic_fpr(m, num_keys, kk) < classic_best) classic_best = classic_fpr(m, num_keys, kk), classic_k = kk;
      }
      std::printf("%s,%.4f,%u,%llu,%llu,%.6e,%.6e,%.6e,%u,%.6e\n", cl ? "cacheline512" : "parquet_sbbf", m / num_keys, k,
                  static_cast<unsigned long long>(num_keys), static_cast<unsigned long long>(queries),
                  static_cast<double>(fp) / static_cast<double>(queries),
                  probkit::bloom_model_fpr(layout, nb, k, num_keys), classic_fpr(m, num_keys, k), classic_k,
                  classic_best);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double scale = 1.0;
  std::uint64_t cap = 1'000'000'000;
  std::uint64_t keys = 1'000'000;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--scale") == 0) scale = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--max-n") == 0) cap = std::strtoull(argv[i + 1], nullptr, 10);
    if (std::strcmp(argv[i], "--keys") == 0) keys = std::strtoull(argv[i + 1], nullptr, 10);
  }
  const std::string what = argc > 1 ? argv[1] : "";
  if (what == "hll") return run_hll(scale, cap);
  if (what == "bloom") return run_bloom(scale, std::max<std::uint64_t>(keys, 1000));
  std::fprintf(stderr, "usage: probkit_accuracy hll|bloom [--scale F]\n");
  return 2;
}
