// The bulk driver's pieces that are not covered through the public API.
#include "bulk.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

namespace probkit::detail {
namespace {

// The owner of a block is b * workers / num_blocks: the multiply-based
// division must equal the real one for every divisor and every numerator the
// driver can form (below 2^32 blocks times 2^8 workers), edges included.
TEST(Divider, EqualsDivisionEverywhereTheDriverUsesIt) {
  std::mt19937_64 rng(20261130);
  std::vector<std::uint64_t> divisors{
      1, 2, 3, 7, 1000, 65535, 65536, 65537, 0xFFFFFFFFULL, 0xFFFFFFFEULL};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 0xFFFFFFFFULL);
  for (std::uint64_t d : divisors) {
    const Divider div(d);
    const std::uint64_t limit = d * 256;  // b < d blocks, times at most 256 workers
    std::vector<std::uint64_t> xs{0, 1, d - 1, d, d + 1, limit - 1};
    for (std::uint64_t q :
         {std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{17}, std::uint64_t{255}}) {
      xs.push_back(q * d - 1);
      xs.push_back(q * d);
      xs.push_back(q * d + 1);
    }
    for (int i = 0; i < 200; ++i) xs.push_back(rng() % limit);
    for (std::uint64_t x : xs) {
      if (x >= limit) continue;
      ASSERT_EQ(div(x), x / d) << "x " << x << " d " << d;
    }
  }
}

}  // namespace
}  // namespace probkit::detail
