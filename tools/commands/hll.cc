// probkit hll add|count|merge|export|import: HyperLogLog sketch files.
#include <cmath>
#include <iostream>

#include "cli/errors.hpp"
#include "cli/sketch_files.hpp"
#include "cli/update_lock.hpp"
#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "probkit/error.hpp"

namespace probkit::cli {
namespace {

const char* const kHllUsage =
    "probkit hll add [--precision P] [--hash xxh64|redis] [--field N [--delimiter C]] SKETCH [FILE...]\n"
    "       probkit hll count SKETCH...\n"
    "       probkit hll merge OUT SKETCH...\n"
    "       probkit hll export --redis SKETCH > BYTES\n"
    "       probkit hll import --redis BYTES SKETCH";

int hll_add(const Args& argv) {
  auto specs = key_options();
  specs.insert(specs.begin(), {{"precision", "P", "precision of a new sketch, 4..18 (default 14)"},
                               {"hash", "NAME", "hash of a new sketch: xxh64 (default) or redis"}});
  specs = with_common_options(specs);
  const ParsedArgs args = parse(argv, specs, "hll add");
  if (print_help_if_asked(args, "probkit hll add [--precision P] [--hash xxh64|redis] [--field N [--delimiter C]] SKETCH [FILE...]\n"
                                "Adds the lines of the files (or standard input) to SKETCH, creating it if needed.",
                          specs)) {
    return 0;
  }
  const Common common = apply_common(args);
  if (args.operands().empty()) throw UsageError("hll add: missing SKETCH (see --help)");
  const std::string& path = args.operands()[0];
  if (path == "-") throw UsageError("hll add: SKETCH is a file that is read and rewritten; '-' is not one");
  HashSpec hash = hash_spec(args);
  auto p = static_cast<std::uint32_t>(parse_u64("precision", args.value("precision").value_or("14"), 4, 18));
  const KeySpec keys = key_spec(args);
  if (file_exists(path)) {
    // Read now for its precision and hash, and so that a corrupt sketch
    // fails before the input is read.
    const HyperLogLog existing = load_hll(path);
    // Options that contradict the existing sketch are a mistake, not a wish to convert.
    if (args.has("precision") && existing.precision() != p) {
      throw UsageError("'" + path + "' has precision " + std::to_string(existing.precision()) + ", not --precision " +
                       std::to_string(p));
    }
    if (args.has("hash") && !(existing.hash() == hash)) {
      throw UsageError("'" + path + "' uses hash " + hash_name(existing.hash()) + ", not --hash " + hash_name(hash));
    }
    p = existing.precision();
    hash = existing.hash();
  }
  ChunkReader reader({args.operands().begin() + 1, args.operands().end()});
  AtomicFile output(path);  // an unwritable folder fails before the input is read
  require_output_not_an_input(reader, output, "hll add", "SKETCH");
  HyperLogLog added(p, hash);  // this run's keys alone
  add_lines(reader, keys, common, added);
  // Merged into the sketch as it is now, not as it was when this run began:
  // another run that added to it meanwhile keeps its keys (the registers'
  // max is the union). The lock makes the read and the replacement one step
  // (UpdateLock goes before `output`'s destruction; save() renames first).
  const UpdateLock lock(path);
  if (file_exists(path)) {
    const HyperLogLog now = load_hll(path);
    if (now.precision() != p || !(now.hash() == hash)) {
      throw InputError("'" + path + "' was replaced while its keys were read: it has precision " +
                       std::to_string(now.precision()) + " and hash " + hash_name(now.hash()) + ", not " +
                       std::to_string(p) + " and " + hash_name(hash) + "; it is left as it is");
    }
    added.merge(now);
  }
  save(output, added);
  return 0;
}

HyperLogLog merge_all(const std::vector<std::string>& paths) {
  HyperLogLog acc = load_hll(paths[0]);
  for (std::size_t i = 1; i < paths.size(); ++i) {
    const HyperLogLog next = load_hll(paths[i]);
    try {
      acc.merge(next);
    } catch (const probkit::Error& e) {
      throw InputError("cannot merge '" + paths[i] + "': " + e.what());
    }
  }
  return acc;
}

int hll_count(const Args& argv) {
  const auto specs = with_common_options({});
  const ParsedArgs args = parse(argv, specs, "hll count");
  if (print_help_if_asked(args, "probkit hll count SKETCH...\n"
                                "Prints the estimated number of distinct keys in the union of the sketches\n"
                                "(rounded as Redis's PFCOUNT rounds it).",
                          specs)) {
    return 0;
  }
  apply_common(args);
  if (args.operands().empty()) throw UsageError("hll count: missing SKETCH (see --help)");
  std::cout << count_text(merge_all(args.operands()).estimate()) << "\n";
  return 0;
}

int hll_merge(const Args& argv) {
  const auto specs = with_common_options({});
  const ParsedArgs args = parse(argv, specs, "hll merge");
  if (print_help_if_asked(args, "probkit hll merge OUT SKETCH...\n"
                                "Writes the union of the sketches to OUT (sketches of different precision are\n"
                                "folded to the smallest).",
                          specs)) {
    return 0;
  }
  apply_common(args);
  if (args.operands().size() < 2) throw UsageError("hll merge: needs OUT and at least one SKETCH (see --help)");
  const HyperLogLog merged = merge_all({args.operands().begin() + 1, args.operands().end()});
  AtomicFile output(args.operands()[0]);
  save(output, merged);
  return 0;
}

int hll_export(const Args& argv) {
  auto specs = with_common_options({{"redis", "", "write Redis's dense HyperLogLog string (12304 bytes)"}});
  const ParsedArgs args = parse(argv, specs, "hll export");
  if (print_help_if_asked(args, "probkit hll export --redis SKETCH > BYTES\n"
                                "Writes a Redis-mode sketch (--hash redis, p = 14) as the string Redis stores;\n"
                                "load it with: redis-cli -x SET key < BYTES",
                          specs)) {
    return 0;
  }
  apply_common(args);
  if (!args.has("redis")) throw UsageError("hll export: say which format: --redis (the only one)");
  if (args.operands().size() != 1) throw UsageError("hll export: needs exactly one SKETCH (see --help)");
  const HyperLogLog sketch = load_hll(args.operands()[0]);
  std::vector<std::uint8_t> bytes;
  try {
    bytes = sketch.to_redis();
  } catch (const probkit::Error& e) {
    throw InputError("'" + args.operands()[0] + "' cannot be a Redis HyperLogLog: it needs --hash redis and "
                     "precision 14; it has hash " + hash_name(sketch.hash()) + " and precision " +
                     std::to_string(sketch.precision()));
  }
  write_stdout({reinterpret_cast<const char*>(bytes.data()), bytes.size()});
  return 0;
}

int hll_import(const Args& argv) {
  auto specs = with_common_options({{"redis", "", "read a Redis HyperLogLog string (dense or sparse)"}});
  const ParsedArgs args = parse(argv, specs, "hll import");
  if (print_help_if_asked(args, "probkit hll import --redis BYTES SKETCH\n"
                                "Converts the Redis string in file BYTES ('-' = standard input; e.g. from\n"
                                "redis-cli --raw GET key) into the sketch file SKETCH.",
                          specs)) {
    return 0;
  }
  apply_common(args);
  if (!args.has("redis")) throw UsageError("hll import: say which format: --redis (the only one)");
  if (args.operands().size() != 2) throw UsageError("hll import: needs BYTES and SKETCH (see --help)");
  const std::string& source = args.operands()[0];
  std::vector<std::uint8_t> bytes = read_whole_file(source, kMaxSketchFileBytes, "Redis HyperLogLog string");
  HyperLogLog sketch;
  try {
    sketch = HyperLogLog::from_redis(bytes);
  } catch (const probkit::Error& e) {
    // redis-cli appends a newline to what GET prints; only one reading of
    // the bytes can be valid (a sparse run would overflow, a dense string
    // would be too long), so try without it before giving up.
    bool ok = false;
    if (!bytes.empty() && bytes.back() == '\n') {
      bytes.pop_back();
      try {
        sketch = HyperLogLog::from_redis(bytes);
        ok = true;
      } catch (const probkit::Error&) {
      }
    }
    if (!ok) {
      throw InputError((source == "-" ? std::string("standard input") : "'" + source + "'") +
                       " is not a Redis HyperLogLog string: " + e.what());
    }
  }
  AtomicFile output(args.operands()[1]);
  save(output, sketch);
  return 0;
}

}  // namespace

int run_hll(const Args& argv) {
  if (argv.empty()) throw UsageError("hll: missing subcommand (add, count, merge, export, import; see --help)");
  if (argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    std::cout << "usage: " << kHllUsage << "\n\nEach takes --backend, --threads and --help.\n";
    return 0;
  }
  const Args rest(argv.begin() + 1, argv.end());
  if (argv[0] == "add") return hll_add(rest);
  if (argv[0] == "count") return hll_count(rest);
  if (argv[0] == "merge") return hll_merge(rest);
  if (argv[0] == "export") return hll_export(rest);
  if (argv[0] == "import") return hll_import(rest);
  throw UsageError("hll: unknown subcommand '" + argv[0] + "' (valid: add, count, merge, export, import)");
}

}  // namespace probkit::cli
