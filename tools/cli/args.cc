#include "cli/args.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "cli/errors.hpp"

namespace probkit::cli {

bool ParsedArgs::has(std::string_view name) const { return values_.find(name) != values_.end(); }

std::optional<std::string> ParsedArgs::value(std::string_view name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

ParsedArgs parse(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                 std::string_view command) {
  ParsedArgs out;
  bool options_done = false;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out.operands_.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    // Short aliases: -o for --output, -h for --help.
    std::string name;
    std::optional<std::string> inline_value;
    if (a[1] != '-') {
      if (a == "-o") name = "output";
      else if (a == "-h") name = "help";
      else throw UsageError(std::string(command) + ": unknown option '" + a + "' (see --help)");
    } else {
      name = a.substr(2);
      if (const auto eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
    }
    const OptionSpec* spec = nullptr;
    for (const auto& s : specs) {
      if (s.name == name) spec = &s;
    }
    if (spec == nullptr) {
      throw UsageError(std::string(command) + ": unknown option '--" + name + "' (see --help)");
    }
    if (spec->value_name.empty()) {
      if (inline_value) throw UsageError(std::string(command) + ": option --" + name + " takes no value");
      out.values_[name] = "";
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= args.size()) {
        throw UsageError(std::string(command) + ": option --" + name + " needs a value (" + spec->value_name + ")");
      }
      inline_value = args[++i];
    }
    if (out.values_.count(name) != 0) {
      throw UsageError(std::string(command) + ": option --" + name + " given twice");
    }
    out.values_[name] = *inline_value;
  }
  return out;
}

namespace {

// A number as people write one in decimal: [-]digits[.digits][e[+-]digits],
// with at least one digit before the exponent. strtod alone also takes
// leading spaces, '+', hexadecimal ("0x10"), "inf" and "nan".
bool plain_decimal(std::string_view s) {
  std::size_t i = 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  if (i < s.size() && s[i] == '-') ++i;
  std::size_t mantissa = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digits();
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// The exact value of a whole number written with a fraction or an exponent
// ("1e6", "2.5e3", "1000.0"); nullopt where it is not whole, does not fit 64
// bits or has a sign (a count is never negative, and "-0" is a slip). Exact,
// where strtod rounds: "4.99999999999999999999" is not 5, nor "1e-400" 0.
std::optional<std::uint64_t> whole_number(std::string_view s) {
  if (!plain_decimal(s) || s.front() == '-') return std::nullopt;
  std::string digits;
  std::size_t i = 0;
  long long fraction_digits = 0;
  for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) digits += s[i];
  if (i < s.size() && s[i] == '.') {
    for (++i; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i, ++fraction_digits) digits += s[i];
  }
  long long exponent = 0;
  if (i < s.size()) {  // 'e' or 'E'
    const bool negative = s[++i] == '-';
    if (s[i] == '+' || s[i] == '-') ++i;
    for (; i < s.size(); ++i) exponent = std::min(exponent * 10 + (s[i] - '0'), 1'000'000LL);
    if (negative) exponent = -exponent;
  }
  digits.erase(0, std::min(digits.size(), digits.find_first_not_of('0')));
  if (digits.empty()) return 0;
  const long long shift = exponent - fraction_digits;  // value = digits * 10^shift
  if (shift < 0) {
    // Whole only where the digits shifted out are all zeros (the first digit is not).
    const auto dropped = static_cast<std::size_t>(-shift);
    if (dropped >= digits.size() || digits.find_first_not_of('0', digits.size() - dropped) != std::string::npos) {
      return std::nullopt;
    }
    digits.resize(digits.size() - dropped);
  } else {
    if (static_cast<long long>(digits.size()) + shift > 20) return std::nullopt;
    digits.append(static_cast<std::size_t>(shift), '0');
  }
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return v;
}

std::string number_text(double d) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", d);
  return buf;
}

}  // namespace

std::uint64_t parse_u64(std::string_view option, std::string_view text, std::uint64_t min,
                        std::uint64_t max) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  bool ok = ec == std::errc() && end == text.data() + text.size() && !text.empty();
  if (!ok) {
    const std::optional<std::uint64_t> whole = whole_number(text);
    ok = whole.has_value();
    v = whole.value_or(0);
  }
  if (!ok || v < min || v > max) {
    throw UsageError("--" + std::string(option) + " '" + std::string(text) + "' is not a whole number in [" +
                     std::to_string(min) + ", " + std::to_string(max) + "]");
  }
  return v;
}

double parse_double(std::string_view option, std::string_view text, double min_exclusive,
                    double max_exclusive) {
  const std::string s(text);
  char* end = nullptr;
  const bool plain = plain_decimal(s);
  const double d = plain ? std::strtod(s.c_str(), &end) : NAN;
  if (!plain || end != s.c_str() + s.size() || !std::isfinite(d) || d <= min_exclusive || d >= max_exclusive) {
    // Appended piece by piece: GCC 12 takes "(" + std::string for an
    // overlapping copy (-Wrestrict, a false positive).
    std::string range = "(";
    range += number_text(min_exclusive);
    range += ", ";
    range += number_text(max_exclusive);
    range += ")";
    // A number inside the range as written that a double rounds onto a bound
    // (1e-400 to 0, 0.99999999999999999 to 1) is told so.
    if (plain && (d == min_exclusive || d == max_exclusive) && std::strtold(s.c_str(), nullptr) != d) {
      throw UsageError("--" + std::string(option) + " '" + s + "' rounds to " + number_text(d) +
                       " as a double, which is not in " + range);
    }
    throw UsageError("--" + std::string(option) + " '" + s + "' is not a number in " + range);
  }
  return d;
}

std::string options_help(const std::vector<OptionSpec>& specs) {
  std::string out;
  for (const auto& s : specs) {
    std::string left = "  --" + s.name;
    if (!s.value_name.empty()) left += " " + s.value_name;
    if (left.size() < 26) left.resize(26, ' ');
    else left += "  ";
    out += left + s.help + "\n";
  }
  return out;
}

}  // namespace probkit::cli
