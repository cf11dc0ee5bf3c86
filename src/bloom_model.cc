// The blocked Bloom filter false-positive model (DESIGN.md §3) and sizing.
#include <cmath>
#include <cstdio>
#include <string>

#include "bloom_shape.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/error.hpp"

namespace probkit {
namespace {

// A rate as a message shows it: std::to_string's fixed six decimals made
// 1e-300 "0.000000".
std::string rate_text(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", x);
  return text;
}

// ln(i!). std::lgamma also stores the sign of Gamma in the global `signgam`:
// two threads sizing filters at once would race on it. glibc's lgamma_r
// (the same function) hands the sign back instead.
double log_factorial(double i) {
#if defined(__GLIBC__)
  int sign = 0;
  return ::lgamma_r(i + 1, &sign);
#else
  return std::lgamma(i + 1);
#endif
}

// P(a key falls in a block already holding i keys) = Pois(i; lambda); a query
// is a false positive when all its bits are set in its block:
//   cacheline512: (1 - (1 - 1/B)^(i k))^k with B = 512 bits;
//   parquet_sbbf: (1 - (1 - 1/32)^i)^8 (one bit per 32-bit word).
double poisson_mixture(double lambda, BloomLayout layout, std::uint32_t k) {
  if (lambda <= 0) return 0.0;
  const double sd = std::sqrt(lambda);
  const double lo = std::max(0.0, std::floor(lambda - 14 * sd - 20));
  const double hi = lambda + 14 * sd + 40;
  const double log_lambda = std::log(lambda);
  double sum = 0.0;
  double weight = 0.0;  // of the terms summed so far
  for (double i = lo; i <= hi; i += 1) {
    double fp;
    if (layout == BloomLayout::Cacheline512) {
      fp = std::pow(1.0 - std::pow(1.0 - 1.0 / 512, i * k), k);
    } else {
      fp = std::pow(1.0 - std::pow(1.0 - 1.0 / 32, i), 8);
    }
    // fp grows with i and is exactly 1 from i ~ 20000 on (sooner for larger
    // k): every later term is its Poisson weight, together what is left of 1.
    // So the sum ends within ~20000 terms even where lambda is so large that
    // i += 1 no longer moves i.
    if (fp == 1.0) {
      sum += std::max(0.0, 1.0 - weight);
      break;
    }
    const double pois = std::exp(-lambda + i * log_lambda - log_factorial(i));
    weight += pois;
    sum += pois * fp;
  }
  return std::min(1.0, sum);
}

}  // namespace

// Sizing aims this factor below the requested fpr. The model raises a block's
// expected fill to the k, where a query meets the expectation of the fill to
// the k, which is larger (Jensen): computed exactly from the distribution of
// the bits a block's keys set (tests/accuracy_test.cc, bench/report_accuracy.py),
// the truth is above the model by 0.2% at k = 3, 0.9% at k = 6, 2.5% at
// k = 12 and 3.1% at k = 16 at 10 bits a key, 4.6% at 24 bits a key and
// k = 13, and the measured rates sit on it. (The model is DESIGN.md §3's;
// this margin, which the tests hold above the gap, keeps the promise.)
// Measured (n = 10^6 u64 keys, 10^7 absent queries, three hash seeds,
// filters from for_capacity): k = 3 +0.2..0.4%, k = 5 +0.5..0.6%, k = 6
// +0.9..1.1%, k = 9 +2.2..3.4%, k = 12 +2.4..5.0% (1000 false positives:
// +-3% noise). parquet_sbbf matches its model (-0.5% at 1%,
// 0.0% at 0.1%); 1% keeps its measured rate at or below the target too.
// Rechecked over the whole range (for_capacity(10^6, fpr), three seeds
// pooled, 4000+ false positives per seed): measured / requested 0.982 at 3%
// (k = 5), 0.980 at 1% (k = 6), 0.977 at 0.1% (k = 9), 0.971 at 1e-4 (k = 12,
// measured / model 1.029 +- 0.004), 0.980 at 3e-5 (k = 13), 0.979 at 3e-6
// (k = 15, measured / model 1.053 +- 0.010).
// k = 16 is the largest k, so below ~1e-7 for_capacity keeps k = 16 and adds
// bits: at few keys a block the gap passes 1 + 0.005 k, up to 1.104 at 0.1
// keys a block (1e-8: 1.084, 1e-10: 1.091, 1e-16: 1.102, by the exact oracle
// of tests/accuracy_test.cc). No smaller k is chosen at such loads.
double detail::bloom_sizing_margin(BloomLayout layout, std::uint32_t k) {
  if (layout != BloomLayout::Cacheline512) return 1.01;
  return k >= layout::kMaxCachelineK ? 1.105 : 1.0 + 0.005 * k;
}

double bloom_model_fpr(BloomLayout layout, std::uint64_t num_blocks, std::uint32_t k,
                       std::uint64_t n) {
  detail::validate_bloom_shape(num_blocks, k, layout, "bloom_model_fpr");
  return poisson_mixture(static_cast<double>(n) / static_cast<double>(num_blocks), layout, k);
}

BloomFilter BloomFilter::for_capacity(std::uint64_t capacity, double fpr, BloomLayout layout,
                                      HashSpec hash) {
  if (capacity == 0) throw Error("for_capacity: capacity must be >= 1 (got 0)");
  if (!(fpr > 0.0 && fpr < 1.0)) {
    throw Error("for_capacity: fpr must be in (0, 1) (got " + rate_text(fpr) + ")");
  }
  if (layout != BloomLayout::Cacheline512 && layout != BloomLayout::ParquetSbbf) {
    throw Error("for_capacity: unknown layout " + std::to_string(static_cast<int>(layout)));
  }
  const double block_bits = layout == BloomLayout::Cacheline512 ? 512.0 : 256.0;
  // No filter beats log2(1/fpr) bits per key: a lower bound for the search.
  const double min_bits = static_cast<double>(capacity) * std::log2(1.0 / fpr);
  const std::uint64_t lo_bound = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::min(min_bits / block_bits, double(detail::kMaxBloomBlocks))));

  auto smallest_blocks = [&](std::uint32_t k) -> std::uint64_t {  // 0 = impossible
    const double aim = fpr / detail::bloom_sizing_margin(layout, k);
    if (bloom_model_fpr(layout, detail::kMaxBloomBlocks, k, capacity) > aim) return 0;
    std::uint64_t lo = lo_bound, hi = detail::kMaxBloomBlocks;  // invariant: model(hi) <= aim
    if (bloom_model_fpr(layout, lo, k, capacity) <= aim) return lo;
    while (hi - lo > 1) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (bloom_model_fpr(layout, mid, k, capacity) <= aim) hi = mid; else lo = mid;
    }
    return hi;
  };

  std::uint64_t best_blocks = 0;
  std::uint32_t best_k = layout::kSbbfK;
  if (layout == BloomLayout::ParquetSbbf) {
    best_blocks = smallest_blocks(layout::kSbbfK);
  } else {
    for (std::uint32_t k = 1; k <= layout::kMaxCachelineK; ++k) {
      const std::uint64_t nb = smallest_blocks(k);
      if (nb != 0 && (best_blocks == 0 || nb < best_blocks)) {
        best_blocks = nb;
        best_k = k;
      }
    }
  }
  if (best_blocks == 0) {
    throw Error("for_capacity: " + std::to_string(capacity) + " keys at fpr " + rate_text(fpr) +
                " need more than 2^32-1 blocks");
  }
  return BloomFilter(best_blocks, best_k, layout, hash);
}

double BloomFilter::expected_fpr(std::uint64_t n) const {
  detail::require_not_moved_from(storage_, "expected_fpr", "filter");  // a rate for memory it no longer holds
  return bloom_model_fpr(layout_, num_blocks_, k_, n);
}

}  // namespace probkit
