#include "cli/lines.hpp"

#include <algorithm>

#include "cli/line_ends.hpp"

namespace probkit::cli {

void LineSplitter::emit(const std::uint8_t* begin, const std::uint8_t* line_end, bool terminated,
                        std::vector<std::string_view>& keys, std::vector<std::string_view>* lines) const {
  const std::uint8_t* key_end = line_end;
  if (terminated && key_end > begin && key_end[-1] == '\r') --key_end;  // "\r\n"
  const std::string_view line(reinterpret_cast<const char*>(begin), static_cast<std::size_t>(key_end - begin));
  keys.push_back(select_field(line, spec_));
  if (lines != nullptr) lines->push_back(line);
}

const std::uint8_t* LineSplitter::split(const std::uint8_t* p, const std::uint8_t* end, std::size_t max_keys,
                                        std::vector<std::string_view>& keys, std::vector<std::string_view>* lines) {
  std::size_t n = 0;
  while (n < max_keys && p < end) {
    const std::size_t window = std::min(kWindow, static_cast<std::size_t>(end - p));
    const std::size_t found = find_newlines(p, window, ends_.data());
    if (found == 0) {
      // No '\n' in the window: a line longer than it, or the unterminated last line.
      const auto* nl = static_cast<const std::uint8_t*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      emit(p, nl != nullptr ? nl : end, nl != nullptr, keys, lines);
      p = nl != nullptr ? nl + 1 : end;
      ++n;
      continue;
    }
    const std::size_t take = std::min(found, max_keys - n);
    const std::uint8_t* line = p;
    for (std::size_t i = 0; i < take; ++i) {
      const std::uint8_t* nl = p + ends_[i];
      emit(line, nl, true, keys, lines);
      line = nl + 1;
    }
    n += take;
    p = line;  // a partial line at the window's end is rescanned with the next window
  }
  return p;
}

}  // namespace probkit::cli
