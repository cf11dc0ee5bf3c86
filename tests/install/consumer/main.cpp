// The minimum API of a probkit user: size a filter, add and query keys in
// bulk, count distinct keys, save and load, and see which backend served.
#include <probkit/probkit.hpp>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  std::vector<std::uint64_t> keys(100000);
  std::iota(keys.begin(), keys.end(), 0);

  auto filter = probkit::BloomFilter::for_capacity(keys.size(), 0.01);
  filter.add(keys);
  std::vector<std::uint8_t> found(keys.size());
  filter.contains(keys, found);
  const auto served = probkit::last_served();
  if (std::accumulate(found.begin(), found.end(), 0u) != keys.size()) return 1;
  if (!filter.contains(std::uint64_t{42})) return 2;
  const auto loaded = probkit::BloomFilter::deserialize(filter.serialize());
  if (!(loaded == filter)) return 3;

  probkit::HyperLogLog hll(14);
  hll.add(keys);
  const double estimate = hll.estimate();
  if (std::fabs(estimate / keys.size() - 1) > 0.05) return 4;

  try {
    probkit::HyperLogLog bad(40);
    return 5;
  } catch (const probkit::Error&) {
  }
  // Every free function of the API once, so that one left out of a shared
  // library's exports (include/probkit/export.hpp) fails this program's link.
  if (probkit::parse_backend("scalar") != probkit::Backend::Scalar) return 6;
  if (probkit::available_backends().front() != probkit::Backend::Scalar) return 7;
  probkit::set_simd_target("");
  if (probkit::simd_targets().size() > 0 && probkit::simd_target() != probkit::simd_targets().front()) return 8;
  probkit::set_threads(probkit::threads());
  if (!(probkit::bloom_model_fpr(filter.layout(), filter.num_blocks(), filter.k(), keys.size()) < 0.02)) return 9;
  if (std::fabs(probkit::hll_estimate_from_histogram(hll.histogram(), hll.precision()) - estimate) > 1e-9 * estimate) {
    return 10;
  }

  std::printf("probkit consumer: filter %zu bytes k=%u, HLL estimate %.0f, served by %s %s\n",
              filter.size_bytes(), filter.k(), estimate, std::string(probkit::to_string(served.backend)).c_str(),
              served.target.c_str());
  return 0;
}
