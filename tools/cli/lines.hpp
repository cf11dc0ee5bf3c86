// Lines -> keys. A line is its bytes without the terminator ('\n' or
// "\r\n"); the last line of an input may lack the terminator. With a field
// selected, the key is that field of the line (1-based, split on one
// delimiter byte, each one ending a field, as cut -d splits); a line with
// fewer fields has the empty key.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "cli/line_ends.hpp"

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

class LineSplitter {
 public:
  explicit LineSplitter(KeySpec spec) : spec_(spec), ends_(kWindow + kNewlineSlack) {}

  // Splits lines from [p, end) until max_keys keys are collected or the
  // range is used up, appending each key to `keys` and, when `lines` is not
  // null, the whole line to `lines`. Returns where the next line starts.
  const std::uint8_t* split(const std::uint8_t* p, const std::uint8_t* end, std::size_t max_keys,
                            std::vector<std::string_view>& keys, std::vector<std::string_view>* lines);

 private:
  // Bytes scanned for line ends at once: small enough that the offsets stay
  // in L1 and little is rescanned when a batch fills mid-window.
  static constexpr std::size_t kWindow = 16384;

  void emit(const std::uint8_t* begin, const std::uint8_t* line_end, bool terminated,
            std::vector<std::string_view>& keys, std::vector<std::string_view>* lines) const;

  KeySpec spec_;
  std::vector<std::uint32_t> ends_;
};

}  // namespace probkit::cli
