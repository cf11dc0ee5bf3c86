// PKHL (docs/FORMAT.md): HyperLogLog::deserialize on arbitrary bytes. Bad
// bytes must give probkit::Error and nothing else; bytes that load must be a
// sketch that writes them back exactly and whose every operation is defined.
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <vector>

#include "fuzz_check.hpp"
#include "probkit/error.hpp"
#include "probkit/hyperloglog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using probkit::HyperLogLog;
  if (size == 0) return 0;
  const std::vector<std::uint8_t> blob = probkit::fuzz::blob_from_input(data, size);
  std::optional<HyperLogLog> h;
  try {
    h = HyperLogLog::deserialize(blob);
  } catch (const probkit::Error&) {
    return 0;
  }
  FUZZ_CHECK(h->serialize() == blob);
  const std::vector<std::uint32_t> histogram = h->histogram();
  FUZZ_CHECK(histogram.size() == 66 - h->precision());
  FUZZ_CHECK(std::accumulate(histogram.begin(), histogram.end(), std::uint64_t{0}) == h->num_registers());
  FUZZ_CHECK(probkit::fuzz::estimate_is_sound(*h));

  // Merging with itself changes nothing; folding to any smaller precision
  // gives a sketch that absorbs the original (merge folds it down) unchanged.
  HyperLogLog same = *h;
  same.merge(*h);
  FUZZ_CHECK(same == *h);
  const std::uint32_t p = 4 + data[0] % (h->precision() - 3);
  HyperLogLog folded = h->fold(p);
  FUZZ_CHECK(folded.precision() == p);
  HyperLogLog refolded = folded;
  refolded.merge(*h);
  FUZZ_CHECK(refolded == folded);
  FUZZ_CHECK(probkit::fuzz::estimate_is_sound(folded));

  if (h->precision() == 14 && h->hash() == probkit::HashSpec::redis()) {
    FUZZ_CHECK(HyperLogLog::from_redis(h->to_redis()) == *h);
  }
  return 0;
}
