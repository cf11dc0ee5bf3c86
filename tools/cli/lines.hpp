// Lines -> keys. A line is its bytes without the terminator ('\n' or
// "\r\n"); the last line of an input may lack the terminator. With a field
// selected, the key is that field of the line (1-based, split on one
// delimiter byte); a line with fewer fields has the empty key, as awk's $N.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace probkit::cli {

struct KeySpec {
  std::uint32_t field = 0;  // 0: the whole line
  char delimiter = '\t';
};

inline std::string_view select_field(std::string_view line, const KeySpec& spec) {
  if (spec.field == 0) return line;
  const char* p = line.data();
  const char* end = p + line.size();
  for (std::uint32_t f = 1; f < spec.field; ++f) {
    const void* d = std::memchr(p, spec.delimiter, static_cast<std::size_t>(end - p));
    if (d == nullptr) return {};
    p = static_cast<const char*>(d) + 1;
  }
  const void* d = std::memchr(p, spec.delimiter, static_cast<std::size_t>(end - p));
  return {p, static_cast<std::size_t>((d != nullptr ? static_cast<const char*>(d) : end) - p)};
}

// Splits lines from [p, end) until max_keys keys are collected or the range
// is used up, appending each key to `keys` and, when `lines` is not null,
// the whole line to `lines`. Returns where the next line starts.
inline const std::uint8_t* split_lines(const std::uint8_t* p, const std::uint8_t* end, const KeySpec& spec,
                                       std::size_t max_keys, std::vector<std::string_view>& keys,
                                       std::vector<std::string_view>* lines) {
  for (std::size_t n = 0; n < max_keys && p < end; ++n) {
    const auto* nl = static_cast<const std::uint8_t*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    const std::uint8_t* line_end = nl != nullptr ? nl : end;
    const std::uint8_t* key_end = line_end;
    if (nl != nullptr && key_end > p && key_end[-1] == '\r') --key_end;  // "\r\n" terminator
    const std::string_view line(reinterpret_cast<const char*>(p), static_cast<std::size_t>(key_end - p));
    keys.push_back(select_field(line, spec));
    if (lines != nullptr) lines->push_back(line);
    p = nl != nullptr ? nl + 1 : end;
  }
  return p;
}

}  // namespace probkit::cli
