// Per-target code first (re-included by foreach_target), dispatch table last.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "cli/line_ends.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <bit>
#include <cstring>

#include "cli/line_ends.hpp"

HWY_BEFORE_NAMESPACE();
namespace probkit::cli::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

std::size_t FindNewlines(const std::uint8_t* p, std::size_t n, std::uint32_t* out) {
  // At most 64 lanes, so one vector's mask bits fit a uint64_t.
  const hn::CappedTag<std::uint8_t, 64> d;
  const std::size_t lanes = hn::Lanes(d);
  const auto newline = hn::Set(d, static_cast<std::uint8_t>('\n'));
  std::size_t count = 0;
  std::size_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto is_newline = hn::Eq(hn::LoadU(d, p + i), newline);
    std::uint8_t bytes[8] = {};
    hn::StoreMaskBits(d, is_newline, bytes);
    std::uint64_t bits;
    std::memcpy(&bits, bytes, sizeof bits);
    // Branch-free for the usual case (lines longer than 8 bytes): write 8
    // positions whatever the count, then advance by the true count. Writes
    // past the count land in the slack the caller provides.
    const auto base = static_cast<std::uint32_t>(i);
    const int found = std::popcount(bits);
    std::uint32_t* o = out + count;
    for (int k = 0; k < 8; ++k) {
      o[k] = base + static_cast<std::uint32_t>(std::countr_zero(bits));
      bits &= bits - 1;
    }
    for (int k = 8; k < found; ++k) {  // short lines: many ends per vector
      o[k] = base + static_cast<std::uint32_t>(std::countr_zero(bits));
      bits &= bits - 1;
    }
    count += static_cast<std::size_t>(found);
  }
  for (; i < n; ++i) {
    if (p[i] == '\n') out[count++] = static_cast<std::uint32_t>(i);
  }
  return count;
}

}  // namespace probkit::cli::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace probkit::cli {

HWY_EXPORT(FindNewlines);

std::size_t find_newlines(const std::uint8_t* p, std::size_t n, std::uint32_t* out) {
  return HWY_DYNAMIC_DISPATCH(FindNewlines)(p, n, out);
}

}  // namespace probkit::cli
#endif
