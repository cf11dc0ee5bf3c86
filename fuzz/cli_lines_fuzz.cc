// The command line's lines -> keys step (tools/cli/lines.hpp) against a plain
// splitter, on every Highway target the line-end search runs on here: the
// same keys and lines, whatever the bytes ('\r', '\n', delimiters, no final
// terminator), the field picked, the delimiter, and how many keys each call
// may take. Inputs are repeated up to eight times so that lines cross the
// splitter's 16 KiB scanning window.
#include <hwy/targets.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/lines.hpp"
#include "fuzz_check.hpp"

namespace {

using probkit::cli::KeySpec;

struct Split {
  std::vector<std::string> keys, lines;
  friend bool operator==(const Split&, const Split&) = default;
};

std::string field_of(std::string_view line, const KeySpec& spec) {
  if (spec.field == 0) return std::string(line);
  std::uint32_t f = 1;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= line.size(); ++i) {
    if (i == line.size() || line[i] == spec.delimiter) {
      if (f == spec.field) return std::string(line.substr(start, i - start));
      ++f;
      start = i + 1;
    }
  }
  return {};  // fewer fields than spec.field: the empty key, as awk's $N
}

Split plain_split(std::string_view text, const KeySpec& spec) {
  Split out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
    if (nl != std::string_view::npos && !line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.keys.push_back(field_of(line, spec));
    out.lines.emplace_back(line);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  return out;
}

Split library_split(std::string_view text, const KeySpec& spec, std::size_t max_keys) {
  Split out;
  probkit::cli::LineSplitter splitter(spec);
  const auto* p = reinterpret_cast<const std::uint8_t*>(text.data());
  const auto* end = p + text.size();
  std::vector<std::string_view> keys, lines;
  while (p < end) {
    keys.clear();
    lines.clear();
    const std::uint8_t* next = splitter.split(p, end, max_keys, keys, &lines);
    FUZZ_CHECK(next > p && next <= end);
    FUZZ_CHECK(!keys.empty() && keys.size() <= max_keys && keys.size() == lines.size());
    out.keys.insert(out.keys.end(), keys.begin(), keys.end());
    out.lines.insert(out.lines.end(), lines.begin(), lines.end());
    p = next;
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const KeySpec spec{static_cast<std::uint32_t>(data[0] % 4), "\t, \r"[data[1] % 4]};
  const std::size_t max_keys = 1 + data[2] % 64 + (data[2] >= 192 ? 100000 : 0);
  const std::size_t copies = 1 + (data[1] >> 5);
  const std::string_view once(reinterpret_cast<const char*>(data + 3), size - 3);
  std::string text;
  for (std::size_t i = 0; i < copies; ++i) text += once;

  const Split expected = plain_split(text, spec);
  for (std::int64_t targets = hwy::SupportedTargets(); targets != 0; targets &= targets - 1) {
    hwy::SetSupportedTargetsForTest(targets & -targets);
    FUZZ_CHECK(library_split(text, spec, max_keys) == expected);
  }
  hwy::SetSupportedTargetsForTest(0);
  return 0;
}
