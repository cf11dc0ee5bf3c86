// probkit bloom build|query|info: Bloom filter files.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "cli/errors.hpp"
#include "cli/sketch_files.hpp"
#include "commands/commands.hpp"
#include "commands/common.hpp"
#include "probkit/error.hpp"

namespace probkit::cli {
namespace {

const char* const kBloomUsage =
    "probkit bloom build --capacity N --fpr P [--layout cacheline512|parquet_sbbf] [--field N [--delimiter C]]\n"
    "                           -o FILTER [FILE...]\n"
    "       probkit bloom query (--absent|--present) [--field N [--delimiter C]] FILTER [FILE...]\n"
    "       probkit bloom info FILTER";

BloomLayout parse_layout(const std::string& name) {
  const std::string lower = lower_case(name);
  if (lower == "cacheline512") return BloomLayout::Cacheline512;
  if (lower == "parquet_sbbf") return BloomLayout::ParquetSbbf;
  throw UsageError("--layout '" + name + "' is not a layout (valid: cacheline512, parquet_sbbf)");
}

const char* layout_name(BloomLayout layout) {
  return layout == BloomLayout::ParquetSbbf ? "parquet_sbbf" : "cacheline512";
}

// A blocked filter sets its k bits of a key (at most 16; 8 for parquet_sbbf)
// in one block, so for rates past what those bits reach for_capacity can only
// add blocks, and the size climbs fast: --capacity 1000000 at --fpr 1e-15 takes
// 68 MB, 546 bits a key, where a classic Bloom filter takes 72. The rate was
// asked for, not the size: the size is said before the keys are read, where it
// is large and far past the classic filter's.
void note_costly_rate(const BloomFilter& filter, std::uint64_t capacity, const std::string& fpr_text, double fpr) {
  constexpr std::size_t kQuietBytes = std::size_t{1} << 20;
  constexpr double kQuietRatio = 4.0;
  const double bits_per_key = 8.0 * static_cast<double>(filter.size_bytes()) / static_cast<double>(capacity);
  const double classic_bits_per_key = -std::log(fpr) / (std::log(2.0) * std::log(2.0));  // at its best k
  if (filter.size_bytes() < kQuietBytes || bits_per_key <= kQuietRatio * classic_bits_per_key) return;
  std::fprintf(stderr,
               "probkit: note: --fpr %s at --capacity %llu takes %zu bytes, %.0f bits a key (a classic Bloom "
               "filter takes %.0f): %s sets at most %u bits a key, in one block, and reaches rates this low by "
               "adding blocks\n",
               fpr_text.c_str(), static_cast<unsigned long long>(capacity), filter.size_bytes(), bits_per_key,
               classic_bits_per_key, layout_name(filter.layout()), filter.k());
}

int bloom_build(const Args& argv) {
  auto specs = key_options();
  specs.insert(specs.begin(), {{"capacity", "N", "number of distinct keys the filter is sized for"},
                               {"fpr", "P", "false-positive rate wanted at N keys, in (0, 1)"},
                               {"layout", "NAME", "cacheline512 (default) or parquet_sbbf"},
                               {"output", "FILTER", "the filter file to write (also -o)"}});
  specs = with_common_options(specs);
  const ParsedArgs args = parse(argv, specs, "bloom build");
  if (print_help_if_asked(args, "probkit bloom build --capacity N --fpr P [--layout cacheline512|parquet_sbbf] [--field N [--delimiter C]] -o FILTER [FILE...]\n"
                                "Builds a Bloom filter of the lines of the files (or standard input).",
                          specs)) {
    return 0;
  }
  const Common common = apply_common(args);
  const auto capacity = args.value("capacity");
  const auto fpr_text = args.value("fpr");
  const auto out = args.value("output");
  if (!capacity) throw UsageError("bloom build: missing --capacity N");
  if (!fpr_text) throw UsageError("bloom build: missing --fpr P");
  if (!out) throw UsageError("bloom build: missing -o FILTER");
  const std::uint64_t n = parse_u64("capacity", *capacity, 1, std::uint64_t{1} << 40);
  const double fpr = parse_double("fpr", *fpr_text, 0.0, 1.0);
  const BloomLayout layout = parse_layout(args.value("layout").value_or("cacheline512"));
  const KeySpec keys = key_spec(args);
  // Inputs and the output's temporary file first: a missing file or an
  // unwritable folder fails before any work.
  ChunkReader reader(args.operands());
  AtomicFile output(*out);
  require_output_not_an_input(reader, output, "bloom build", "-o FILTER");
  BloomFilter filter = [&] {
    try {
      return BloomFilter::for_capacity(n, fpr, layout);
    } catch (const probkit::AllocationError& e) {
      throw InputError("bloom build: a filter for --capacity " + std::to_string(n) + " at --fpr " + *fpr_text +
                       " does not fit in memory: " + e.what());
    } catch (const probkit::Error& e) {
      // Past what the format holds (more than 2^32 - 1 blocks): said in the
      // user's own words, not the library's rounding of them.
      throw InputError("bloom build: no filter holds --capacity " + std::to_string(n) + " at --fpr " + *fpr_text +
                       ": " + e.what());
    }
  }();
  note_costly_rate(filter, n, *fpr_text, fpr);
  add_lines(reader, keys, common, filter);
  save(output, filter);
  const double inserted = filter.estimated_count();
  if (!std::isfinite(inserted)) {
    // Every bit set: the popcount estimate is infinite, and every query hits.
    std::fprintf(stderr,
                 "probkit: warning: the filter is saturated (every bit set): far more distinct keys than "
                 "--capacity %llu; every query will answer 'maybe present' (false-positive rate 1, not %g)\n",
                 static_cast<unsigned long long>(n), fpr);
  } else if (inserted > 1.1 * static_cast<double>(n) &&
             filter.expected_fpr(static_cast<std::uint64_t>(inserted)) > fpr) {
    // Only where the rate is worse than asked: a filter rounded up to whole
    // blocks (--capacity 1 is one block) can hold more keys than N and still
    // beat --fpr.
    std::fprintf(stderr, "probkit: warning: about %.0f distinct keys is more than --capacity %llu; the "
                 "false-positive rate is about %.3g, not %g\n",
                 inserted, static_cast<unsigned long long>(n), filter.expected_fpr(static_cast<std::uint64_t>(inserted)), fpr);
  }
  return 0;
}

int bloom_query(const Args& argv) {
  auto specs = key_options();
  specs.insert(specs.begin(), {{"absent", "", "write the lines certainly not in the filter"},
                               {"present", "", "write the lines possibly in the filter"}});
  specs = with_common_options(specs);
  const ParsedArgs args = parse(argv, specs, "bloom query");
  if (print_help_if_asked(args, "probkit bloom query (--absent|--present) [--field N [--delimiter C]] FILTER [FILE...]\n"
                                "Writes the lines of the files (or standard input) whose key is certainly absent\n"
                                "from (--absent) or possibly present in (--present) FILTER, in input order.",
                          specs)) {
    return 0;
  }
  const Common common = apply_common(args);
  if (args.has("absent") == args.has("present")) throw UsageError("bloom query: give exactly one of --absent, --present");
  if (args.operands().empty()) throw UsageError("bloom query: missing FILTER (see --help)");
  const KeySpec keys = key_spec(args);
  const BloomFilter filter = load_bloom(args.operands()[0]);
  ChunkReader reader({args.operands().begin() + 1, args.operands().end()});
  filter_lines(reader, keys, common, filter, args.has("present"));
  return 0;
}

int bloom_info(const Args& argv) {
  const auto specs = with_common_options({});
  const ParsedArgs args = parse(argv, specs, "bloom info");
  if (print_help_if_asked(args, "probkit bloom info FILTER\n"
                                "Prints the filter's layout, size, k, hash, fill, estimated count and expected FPR.",
                          specs)) {
    return 0;
  }
  apply_common(args);
  if (args.operands().size() != 1) throw UsageError("bloom info: needs exactly one FILTER (see --help)");
  const BloomFilter f = load_bloom(args.operands()[0]);
  const double count = f.estimated_count();
  // A saturated filter estimates infinitely many keys; its FPR is then 1.
  const double fpr = std::isfinite(count) ? f.expected_fpr(static_cast<std::uint64_t>(std::llround(count))) : 1.0;
  char line[512];
  std::snprintf(line, sizeof line,
                "layout: %s\nblocks: %llu\nbytes: %llu\nbits: %llu\nk: %u\nhash: %s\nfill_ratio: %.6g\n"
                "estimated_count: %.0f\nexpected_fpr: %.6g\n",
                layout_name(f.layout()), static_cast<unsigned long long>(f.num_blocks()),
                static_cast<unsigned long long>(f.size_bytes()), static_cast<unsigned long long>(f.size_bits()), f.k(),
                hash_name(f.hash()).c_str(), f.fill_ratio(), count, fpr);
  std::cout << line;
  return 0;
}

}  // namespace

int run_bloom(const Args& argv) {
  if (argv.empty()) throw UsageError("bloom: missing subcommand (build, query, info; see --help)");
  if (argv[0] == "--help" || argv[0] == "-h" || argv[0] == "help") {
    std::cout << "usage: " << kBloomUsage << "\n\nEach takes --backend, --threads and --help.\n";
    return 0;
  }
  const Args rest(argv.begin() + 1, argv.end());
  if (argv[0] == "build") return bloom_build(rest);
  if (argv[0] == "query") return bloom_query(rest);
  if (argv[0] == "info") return bloom_info(rest);
  throw UsageError("bloom: unknown subcommand '" + argv[0] + "' (valid: build, query, info)");
}

}  // namespace probkit::cli
