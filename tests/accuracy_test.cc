// Measured accuracy with fixed seeds (DESIGN.md §3, §4): false-positive rates
// against the blocked-filter model and the sizing promise, and HyperLogLog's
// relative error over independent hash seeds. Every run also asserts that no
// inserted key is ever reported absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bloom_shape.hpp"
#include "probkit/probkit.hpp"

namespace probkit {
namespace {

constexpr std::uint64_t kInserted = 1000000;
constexpr std::uint64_t kQueries = 10000000;

std::vector<std::uint64_t> iota_keys(std::uint64_t first, std::uint64_t n) {
  std::vector<std::uint64_t> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

// Inserts keys 0..n-1, checks every one is found, and returns the fraction of
// kQueries keys never inserted that the filter reports present.
double measured_fpr(BloomFilter& f, std::uint64_t n) {
  const std::vector<std::uint64_t> in = iota_keys(0, n);
  f.add(in);
  EXPECT_EQ(f.count(in), n) << "false negatives";
  const std::vector<std::uint64_t> out = iota_keys(std::uint64_t{1} << 40, kQueries);
  return static_cast<double>(f.count(out)) / static_cast<double>(kQueries);
}

// The false-positive rate of a cacheline512 filter computed exactly, as an
// oracle independent of the library: a query lands in a block holding i keys
// (Poisson, lambda = n / nb), whose i k probes set X of its 512 bits, and is
// a false positive with probability E[(X / 512)^k]. The library's model
// (DESIGN.md §3) raises the expected fill to the k, E[X / 512]^k, which
// Jensen's inequality puts below the truth: at 10 bits a key, by 0.2% at
// k = 3, 0.9% at k = 6, 2.5% at k = 12 and 3.1% at k = 16.
double exact_cacheline_fpr(std::uint64_t num_blocks, std::uint32_t k, std::uint64_t n) {
  const double lambda = static_cast<double>(n) / static_cast<double>(num_blocks);
  const int max_keys = static_cast<int>(lambda + 14 * std::sqrt(lambda) + 40);
  std::vector<double> bits_set(513, 0.0);  // P(X = x) after the probes so far
  bits_set[0] = 1.0;
  double fpr = 0.0;
  for (int i = 0; i <= max_keys; ++i) {
    double given_i = 0.0;  // E[(X / 512)^k] for a block of i keys
    for (int x = 1; x <= 512; ++x) given_i += bits_set[x] * std::pow(x / 512.0, k);
    fpr += std::exp(-lambda + i * std::log(lambda) - std::lgamma(i + 1.0)) * given_i;
    for (std::uint32_t probe = 0; probe < k; ++probe) {  // the next key's probes
      for (int x = 512; x >= 0; --x) {
        bits_set[x] = bits_set[x] * x / 512.0 + (x > 0 ? bits_set[x - 1] * (513 - x) / 512.0 : 0.0);
      }
    }
  }
  return fpr;
}

// How far a measured rate may stray from the truth: four standard deviations
// of kQueries Bernoulli trials (0.32% of the rate at 1%), plus 0.5% for the
// one random placement of keys in blocks that a filter is (about 0.12% a
// standard deviation at 10^6 keys, measured over 16 hash seeds).
double tolerance(double rate) {
  return rate * (4 * std::sqrt((1 - rate) / (rate * static_cast<double>(kQueries))) + 0.005);
}

// The kernels against the exact rate, and the model against it: below it by
// no more than what sizing allows for (detail::bloom_sizing_margin). Returns
// the measured rate.
double expect_cacheline_rates(std::uint64_t num_blocks, std::uint32_t k) {
  BloomFilter f(num_blocks, k);
  const double fpr = measured_fpr(f, kInserted);
  const double exact = exact_cacheline_fpr(num_blocks, k, kInserted);
  const double model = f.expected_fpr(kInserted);
  EXPECT_NEAR(fpr, exact, tolerance(exact)) << "nb = " << num_blocks << " k = " << k;
  EXPECT_LE(model, exact) << "k = " << k;
  EXPECT_GE(model * detail::bloom_sizing_margin(BloomLayout::Cacheline512, k), exact) << "k = " << k;
  std::printf("cacheline512 nb=%llu k=%u: measured %.4f%%, exact %.4f%%, model %.4f%% (exact / model %.4f)\n",
              static_cast<unsigned long long>(num_blocks), k, 100 * fpr, 100 * exact, 100 * model, exact / model);
  return fpr;
}

TEST(Accuracy, Cacheline512At10BitsPerKeyK6) {
  const double fpr = expect_cacheline_rates(kInserted * 10 / 512, 6);
  RecordProperty("fpr_percent", std::to_string(100 * fpr));
  // RocksDB's figure for this filter is 0.96%; the model says 0.958%.
  EXPECT_GE(fpr, 0.0090);
  EXPECT_LE(fpr, 0.0105);
}

// Away from the best k (6 or 7 at 10 bits a key: 0.97%) the rate climbs
// steeply (1.8% at k = 3 and at k = 12, 3.6% at k = 16): a wrong probe count
// shows, and the model's gap, which grows with k, is checked where it is
// largest.
TEST(Accuracy, Cacheline512OffTheBestK) {
  for (std::uint32_t k : {3u, 12u, 16u}) expect_cacheline_rates(kInserted * 10 / 512, k);
  expect_cacheline_rates(kInserted * 16 / 512, 9);  // RocksDB's 0.086% at 16 bits/key
}

TEST(Accuracy, ForCapacityKeepsItsPromise) {
  const double target = 0.01;
  BloomFilter f = BloomFilter::for_capacity(kInserted, target);
  EXPECT_LE(f.expected_fpr(kInserted), target);
  const double fpr = measured_fpr(f, kInserted);
  RecordProperty("fpr_percent", std::to_string(100 * fpr));
  EXPECT_LE(fpr, target) << "nb = " << f.num_blocks() << " k = " << f.k() << " model "
                         << f.expected_fpr(kInserted);
  // Sizing aims 1 + 0.005 k below the target, the model reads 0.9% low at k = 6: about 0.98 of it.
  EXPECT_GE(fpr, 0.96 * target) << "wastefully large";
  std::printf("for_capacity(1e6, 0.01): nb = %llu k = %u, measured %.4f%%, model %.4f%%\n", static_cast<unsigned long long>(f.num_blocks()), f.k(), 100 * fpr, 100 * f.expected_fpr(kInserted));
}

// for_capacity's promise by the exact rate, from 3% to 1e-16 (queries cannot
// measure the small ones). The model's gap grows with k (4.6% at k = 13), and
// below ~1e-7, where k stays at its cap (16) and the bits a key grow, blocks
// hold a few keys or fewer and the gap reaches 10.4%: a margin thinner than
// the gap at any k breaks the promise there, though it holds at k = 6.
TEST(Accuracy, ForCapacityKeepsItsPromiseByTheExactRate) {
  for (std::uint64_t n : {std::uint64_t{1000}, kInserted}) {
    for (double target : {0.03, 0.01, 1e-3, 1e-4, 3e-5, 3e-6, 1e-7, 1e-8, 1e-10, 1e-12, 1e-14, 1e-16}) {
      const BloomFilter f = BloomFilter::for_capacity(n, target);
      EXPECT_LE(exact_cacheline_fpr(f.num_blocks(), f.k(), n), target)
          << "n = " << n << " target " << target << " nb = " << f.num_blocks() << " k = " << f.k();
    }
  }
}

// for_capacity's choice: the fewest blocks that meet the target under sizing's
// rule (the model times the margin), and of the k that meet it there the
// smallest, the fewest probes a key (a tie went to the largest k, unseen:
// for_capacity(1, 0.01) then had k = 16).
TEST(Accuracy, ForCapacityTakesTheFewestBlocksThenTheSmallestK) {
  constexpr BloomLayout kLayout = BloomLayout::Cacheline512;
  for (const auto& shape : {std::pair<std::uint64_t, double>{1, 0.01}, {1000, 0.01}, {10000, 0.01}, {kInserted, 1e-3},
                            {kInserted, 1e-5}}) {
    // Named, not bound: Clang before 16 cannot capture structured bindings.
    const std::uint64_t n = shape.first;
    const double target = shape.second;
    const auto meets = [&](std::uint64_t nb, std::uint32_t k) {
      return bloom_model_fpr(kLayout, nb, k, n) * detail::bloom_sizing_margin(kLayout, k) <= target;
    };
    const BloomFilter f = BloomFilter::for_capacity(n, target);
    SCOPED_TRACE("n = " + std::to_string(n) + " target " + std::to_string(target));
    EXPECT_TRUE(meets(f.num_blocks(), f.k()));
    for (std::uint32_t k = 1; k <= layout::kMaxCachelineK; ++k) {
      if (f.num_blocks() > 1) {
        EXPECT_FALSE(meets(f.num_blocks() - 1, k)) << "fewer blocks meet it at k = " << k;
      }
      if (k < f.k()) {
        EXPECT_FALSE(meets(f.num_blocks(), k)) << "a smaller k meets it: " << k;
      }
    }
  }
}

// One bit in each of the block's 32-bit words: the sectorised model is exact.
TEST(Accuracy, ParquetSbbfMatchesItsModel) {
  for (double target : {0.01, 0.001}) {
    BloomFilter f = BloomFilter::for_capacity(kInserted, target, BloomLayout::ParquetSbbf);
    const double model = f.expected_fpr(kInserted);
    const double fpr = measured_fpr(f, kInserted);
    EXPECT_NEAR(fpr, model, tolerance(model)) << "target " << target << " nb = " << f.num_blocks();
    EXPECT_LE(fpr, target);
    std::printf("parquet_sbbf target %g: nb = %llu measured %.4f%%, model %.4f%%\n", target, static_cast<unsigned long long>(f.num_blocks()), 100 * fpr, 100 * model);
  }
}

// The popcount estimate of the distinct keys inserted (RedisBloom's BF.CARD),
// whose standard deviation at 10^6 keys is about 0.03%. The classic
// -(m / k) ln(1 - fill) read 0.5% low at k = 6 and 1.5% at k = 16.
TEST(Accuracy, EstimatedCountOfDistinctKeys) {
  const std::vector<std::uint64_t> keys = iota_keys(0, kInserted);
  const auto expect_count = [&](BloomFilter f) {
    f.add(keys);
    EXPECT_NEAR(f.estimated_count() / static_cast<double>(kInserted), 1.0, 0.002)
        << "layout " << static_cast<int>(f.layout()) << " k = " << f.k();
    std::printf("estimated_count, k=%u: %.0f of %llu\n", f.k(), f.estimated_count(),
                static_cast<unsigned long long>(kInserted));
  };
  for (std::uint32_t k : {1u, 6u, 16u}) expect_count(BloomFilter(kInserted * 10 / 512, k));
  expect_count(BloomFilter(kInserted * 10 / 256, 8, BloomLayout::ParquetSbbf));
  EXPECT_EQ(BloomFilter(100, 6).estimated_count(), 0.0);
}

struct RelativeError {
  double bias;           // mean of estimate / n - 1
  double rmse;           // root mean square of it
  double bias_stderr;    // the standard error of `bias`
};

// Sketches with hash seeds first_seed, first_seed + 1, ... over keys 0..n-1
// are independent experiments.
RelativeError relative_error(std::uint32_t p, std::span<const std::uint64_t> keys, int seeds, int first_seed) {
  double sum = 0, sum_sq = 0;
  for (int s = first_seed; s < first_seed + seeds; ++s) {
    HyperLogLog h(p, HashSpec{HashKind::Xxh64, static_cast<std::uint64_t>(s)});
    h.add(keys);
    const double rel = h.estimate() / static_cast<double>(keys.size()) - 1.0;
    sum += rel;
    sum_sq += rel * rel;
  }
  const double bias = sum / seeds, mean_sq = sum_sq / seeds;
  return {bias, std::sqrt(mean_sq), std::sqrt((mean_sq - bias * bias) / (seeds - 1))};
}

// An estimated RMSE may run 4 standard deviations over the true one: with
// 100 experiments its relative standard deviation is about 1 / sqrt(200).
constexpr double kRmseAllowance = 1 + 4 / 14.14;

// Ertl's estimator at p = 14: a standard error of about 1.04 / sqrt(2^14) =
// 0.81% (below 2.5 m keys, linear counting's sqrt(m (e^t - t - 1)) / n with
// t = n / m: 0.56% at 1000 keys) and no visible bias.
TEST(Accuracy, HllP14RelativeErrorOver100Seeds) {
  constexpr double m = 16384;
  const std::vector<std::uint64_t> keys = iota_keys(0, 10000000);
  for (std::uint64_t n : {std::uint64_t{1000}, std::uint64_t{100000}, std::uint64_t{10000000}}) {
    const RelativeError e = relative_error(14, std::span(keys.data(), n), 100, 0);
    const double t = static_cast<double>(n) / m;
    const double expected_rmse = std::min(1.04 / std::sqrt(m), std::sqrt(m * std::expm1(t) - m * t) / double(n));
    RecordProperty("rmse_percent_n" + std::to_string(n), std::to_string(100 * e.rmse));
    RecordProperty("bias_percent_n" + std::to_string(n), std::to_string(100 * e.bias));
    EXPECT_LE(e.rmse, kRmseAllowance * expected_rmse) << "n = " << n;
    EXPECT_LE(std::fabs(e.bias), 0.0025) << "n = " << n;  // 3.4 to 4.4 standard errors
    std::printf("HLL p=14 n=%llu: RMSE %.3f%% (expected %.3f%%), bias %+.3f%%\n", static_cast<unsigned long long>(n),
                100 * e.rmse, 100 * expected_rmse, 100 * e.bias);
  }
}

// The ends of the precision range. At p = 4 the estimator (as Redis computes
// it) reads high by about 1.08 / m on average once the keys are several
// times m, a quarter of its 26% standard error, as include/probkit/
// hyperloglog.hpp says; at p = 18 the bias is nothing and the error
// 1.04 / sqrt(2^18) = 0.2%.
TEST(Accuracy, HllAtPrecisions4And18) {
  const std::vector<std::uint64_t> keys = iota_keys(0, 1000000);
  const RelativeError p4 = relative_error(4, std::span(keys.data(), 10000), 4000, 1000);
  EXPECT_NEAR(p4.bias, 1.08 / 16, 4 * p4.bias_stderr);
  std::printf("HLL p=4 n=10^4, 4000 seeds: bias %+.2f%% +- %.2f%% (1.08 / m: %.2f%%), RMSE %.1f%%\n", 100 * p4.bias,
              100 * p4.bias_stderr, 100 * 1.08 / 16, 100 * p4.rmse);
  const RelativeError p18 = relative_error(18, keys, 100, 0);
  EXPECT_LE(std::fabs(p18.bias), 4 * p18.bias_stderr);
  EXPECT_LE(p18.rmse, kRmseAllowance * 1.04 / 512);
  std::printf("HLL p=18 n=10^6, 100 seeds: bias %+.3f%% +- %.3f%%, RMSE %.3f%%\n", 100 * p18.bias,
              100 * p18.bias_stderr, 100 * p18.rmse);
}

// The estimator (hll_estimate.cc: Ertl's improved raw estimator, in Redis's
// order of operations) against closed forms, exact to rounding, where the
// sketches above only see it through its statistics and Redis's PFCOUNT
// through llround (a constant wrong in its ninth digit passes both). With
// registers 0 < r < 65 - p only, tau(1) = sigma(0) = 0 and
//   z = sum_r C_r 2^-r, estimate = alpha_inf m^2 / z, alpha_inf = 1 / (2 ln 2).
// Registers at the top rank 65 - p bring in tau (Ertl 2017):
//   z = m tau(1 - C_{q+1} / m) 2^-q + ..., q = 64 - p,
//   tau(x) = (1 - x - sum_{k >= 1} (1 - x^(2^-k))^2 2^-k) / 3,
// summed here to 80 terms in long double (Redis stops when a term no longer
// changes the sum). Half the registers at q and half at q + 1 make tau as
// large a part of z as the rest.
TEST(Accuracy, HllEstimatorClosedForms) {
  const double alpha_inf = 1 / (2 * std::log(2.0));
  long double tau_half = 0.5L;  // 3 tau(1/2)
  for (int k = 1; k <= 80; ++k) {
    const long double weight = std::ldexp(1.0L, -k);
    const long double y = 1 - std::pow(0.5L, weight);
    tau_half -= y * y * weight;
  }
  for (std::uint32_t p = layout::kHllMinPrecision; p <= layout::kHllMaxPrecision; ++p) {
    const std::uint32_t q = 64 - p;
    const double m = std::ldexp(1.0, static_cast<int>(p));
    for (std::uint32_t r : {1u, 2u, 7u, q}) {
      std::vector<std::uint32_t> c(q + 2, 0);
      c[r] = 1u << p;  // every register at r: z = m 2^-r
      const double want = alpha_inf * m * std::ldexp(1.0, static_cast<int>(r));
      EXPECT_NEAR(hll_estimate_from_histogram(c, p), want, 1e-12 * want) << "p = " << p << ", every register " << r;
    }
    std::vector<std::uint32_t> c(q + 2, 0);
    c[q] = c[q + 1] = 1u << (p - 1);  // z = m 2^-q (tau(1/2) + 1/2)
    const double z = m * std::ldexp(static_cast<double>(tau_half / 3) + 0.5, -static_cast<int>(q));
    const double want = alpha_inf * m * m / z;
    EXPECT_NEAR(hll_estimate_from_histogram(c, p), want, 1e-12 * want) << "p = " << p << ", half the registers at "
                                                                      << q << " and half at " << q + 1;
  }
}

}  // namespace
}  // namespace probkit
