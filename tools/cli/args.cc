#include "cli/args.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>

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

}  // namespace

std::uint64_t parse_u64(std::string_view option, std::string_view text, std::uint64_t min,
                        std::uint64_t max) {
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  bool ok = ec == std::errc() && end == text.data() + text.size() && !text.empty();
  if (!ok) {
    // Also accept a whole number in scientific notation, as "1e6".
    const std::string s(text);
    char* e = nullptr;
    const double d = plain_decimal(s) ? std::strtod(s.c_str(), &e) : NAN;
    ok = e == s.c_str() + s.size() && d >= 0 && d == std::floor(d) && d < 1.8446744073709552e19;
    v = ok ? static_cast<std::uint64_t>(d) : 0;
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
    throw UsageError("--" + std::string(option) + " '" + s + "' is not a number in (" +
                     std::to_string(min_exclusive) + ", " + std::to_string(max_exclusive) + ")");
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
