// Command-line parsing: each command declares its options; parse() checks the
// argument list against them and hands back values and positional operands.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace probkit::cli {

struct OptionSpec {
  std::string name;         // long name without "--"
  std::string value_name;   // empty for a flag without value
  std::string help;
};

class ParsedArgs {
 public:
  bool has(std::string_view name) const;
  // The option's value, or nullopt when it was not given.
  std::optional<std::string> value(std::string_view name) const;
  const std::vector<std::string>& operands() const { return operands_; }

 private:
  friend ParsedArgs parse(const std::vector<std::string>&, const std::vector<OptionSpec>&,
                          std::string_view);
  std::map<std::string, std::string, std::less<>> values_;
  std::vector<std::string> operands_;
};

// Parses `--name value`, `--name=value` and flags; `--` ends options and a
// lone `-` is an operand (standard input). Throws UsageError on an unknown
// option or a missing value; `command` names the command in messages.
ParsedArgs parse(const std::vector<std::string>& args, const std::vector<OptionSpec>& specs,
                 std::string_view command);

// Strict number parsing for option values: the whole text must be the
// number, within the range; otherwise UsageError naming the option.
std::uint64_t parse_u64(std::string_view option, std::string_view text, std::uint64_t min,
                        std::uint64_t max);
double parse_double(std::string_view option, std::string_view text, double min_exclusive,
                    double max_exclusive);

// Help text listing the options: "  --name VALUE   help" lines.
std::string options_help(const std::vector<OptionSpec>& specs);

}  // namespace probkit::cli
