// Redis HLL strings (docs/FORMAT.md): HyperLogLog::from_redis on arbitrary
// bytes, dense or sparse. Bad bytes must give probkit::Error and nothing
// else; a string that loads must survive to_redis and back, and a dense one
// must come back with the same register bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_check.hpp"
#include "probkit/error.hpp"
#include "probkit/hyperloglog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using probkit::HyperLogLog;
  const std::span<const std::uint8_t> bytes(data, size);
  std::optional<HyperLogLog> h;
  try {
    h = HyperLogLog::from_redis(bytes);
  } catch (const probkit::Error&) {
    return 0;
  }
  FUZZ_CHECK(h->precision() == 14 && h->hash() == probkit::HashSpec::redis());
  FUZZ_CHECK(probkit::fuzz::estimate_is_sound(*h));
  const std::vector<std::uint8_t> dense = h->to_redis();
  FUZZ_CHECK(HyperLogLog::from_redis(dense) == *h);
  if (bytes[4] == 0) {  // dense in, dense out: the 6-bit registers fill the payload exactly
    FUZZ_CHECK(std::equal(dense.begin() + 16, dense.end(), bytes.begin() + 16, bytes.end()));
  }
  return 0;
}
