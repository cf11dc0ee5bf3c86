// PKBF (docs/FORMAT.md): BloomFilter::deserialize, deserialize_from and
// serialized_size on arbitrary bytes. Bad bytes must give probkit::Error and
// nothing else; bytes that load must be a filter that writes them back
// exactly, and the piecewise reader must agree with the whole-blob one.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "fuzz_check.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/error.hpp"

namespace {

using probkit::BloomFilter;

// A header may announce up to 256 GiB; a reader that cannot afford that asks
// serialized_size first, as this one does, and skips what it will not hold.
constexpr std::uint64_t kMaxStreamedBytes = std::uint64_t{64} << 20;

void check_loaded(const BloomFilter& f, std::span<const std::uint8_t> blob) {
  FUZZ_CHECK(f.serialize() == std::vector<std::uint8_t>(blob.begin(), blob.end()));
  FUZZ_CHECK(BloomFilter::serialized_size(blob) == blob.size());
  const double fill = f.fill_ratio();
  FUZZ_CHECK(fill >= 0.0 && fill <= 1.0);
  FUZZ_CHECK(f.estimated_count() >= 0.0);
  const double fpr = f.expected_fpr(1000);
  FUZZ_CHECK(fpr >= 0.0 && fpr <= 1.0);
  // Queries on whatever bits were loaded: defined answers, the same from
  // every backend, and a union or intersection with itself changes nothing.
  std::vector<std::uint64_t> keys(64);
  for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i * 0x9E3779B97F4A7C15ull;
  std::vector<std::uint8_t> scalar(keys.size()), simd(keys.size());
  f.contains(std::span<const std::uint64_t>(keys), scalar, probkit::Backend::Scalar);
  f.contains(std::span<const std::uint64_t>(keys), simd, probkit::Backend::Simd);
  FUZZ_CHECK(scalar == simd);
  FUZZ_CHECK(f.count(std::span<const std::uint64_t>(keys)) ==
             static_cast<std::uint64_t>(std::count(scalar.begin(), scalar.end(), 1)));
  BloomFilter g = f;
  g.union_with(f);
  FUZZ_CHECK(g == f);
  g.intersect_with(f);
  FUZZ_CHECK(g == f);
}

// deserialize_from over `blob` handed out `chunk` bytes at a time.
std::optional<BloomFilter> load_streamed(std::span<const std::uint8_t> blob, std::size_t chunk) {
  std::size_t pos = 0;
  const BloomFilter::ByteSource source = [&](std::span<std::uint8_t> out) {
    const std::size_t n = std::min({chunk, out.size(), blob.size() - pos});
    std::copy_n(blob.data() + pos, n, out.data());
    pos += n;
    return n;
  };
  try {
    return BloomFilter::deserialize_from(source);
  } catch (const probkit::Error&) {
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::vector<std::uint8_t> blob = probkit::fuzz::blob_from_input(data, size);
  const std::size_t chunk = 1 + (data[0] >> 1);  // 1..128 bytes a read

  std::optional<BloomFilter> whole;
  try {
    whole = BloomFilter::deserialize(blob);
  } catch (const probkit::Error&) {
  }
  if (whole) check_loaded(*whole, blob);

  std::optional<std::uint64_t> announced;
  try {
    announced = BloomFilter::serialized_size(blob);
  } catch (const probkit::Error&) {
  }
  // A header the size check refuses is refused by the streamed reader too,
  // before it takes any memory.
  if (!announced || *announced <= kMaxStreamedBytes) {
    const std::optional<BloomFilter> streamed = load_streamed(blob, chunk);
    FUZZ_CHECK(streamed.has_value() == whole.has_value());
    if (streamed) FUZZ_CHECK(*streamed == *whole);
  }
  return 0;
}
