// probkit distinct: the approximate number of distinct lines (or fields).
#include <cmath>
#include <iostream>

#include "cli/errors.hpp"
#include "commands/commands.hpp"
#include "commands/common.hpp"

namespace probkit::cli {

int run_distinct(const Args& argv) {
  auto specs = key_options();
  specs.insert(specs.begin(), {{"precision", "P", "HyperLogLog precision, 4..18 (default 14: 0.81% error)"},
                               {"hash", "NAME", "xxh64 (default) or redis (Redis's PFADD hash)"}});
  specs = with_common_options(specs);
  const ParsedArgs args = parse(argv, specs, "distinct");
  if (print_help_if_asked(args, "probkit distinct [--precision P] [--hash xxh64|redis] [--field N [--delimiter C]] [FILE...]\n"
                                "Prints the estimated number of distinct lines (keys) of the files, or of standard input.",
                          specs)) {
    return 0;
  }
  const Common common = apply_common(args);
  const auto p = static_cast<std::uint32_t>(parse_u64("precision", args.value("precision").value_or("14"), 4, 18));
  HyperLogLog sketch(p, hash_spec(args));
  const KeySpec keys = key_spec(args);
  ChunkReader reader(args.operands());
  add_lines(reader, keys, common, sketch);
  std::cout << count_text(sketch.estimate()) << "\n";
  return 0;
}

}  // namespace probkit::cli
