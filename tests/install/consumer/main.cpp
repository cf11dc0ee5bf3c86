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
  std::printf("probkit consumer: filter %zu bytes k=%u, HLL estimate %.0f, served by %s %s\n",
              filter.size_bytes(), filter.k(), estimate, std::string(probkit::to_string(served.backend)).c_str(),
              served.target.c_str());
  return 0;
}
