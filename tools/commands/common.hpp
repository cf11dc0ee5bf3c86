// What every command shares: the common options (--backend, --threads,
// --help), key selection (--field, --delimiter), hash choice, and the loops
// that feed input lines to a sketch or filter in batches.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cli/args.hpp"
#include "cli/atomic_file.hpp"
#include "cli/chunk_reader.hpp"
#include "cli/lines.hpp"
#include "probkit/backend.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/hyperloglog.hpp"

namespace probkit::cli {

struct Common {
  Backend backend = Backend::Auto;
  unsigned threads = 1;  // resolved: at least 1
};

// `specs` plus --backend, --threads and --help.
std::vector<OptionSpec> with_common_options(std::vector<OptionSpec> specs);
// Applies --backend and --threads (the library's thread count included).
// The file commands keep their sketches in host memory: they refuse the CUDA
// backend (asked for with --backend or PROBKIT_BACKEND) with a message of
// their own, and only `bench` (allow_cuda) moves its objects to the device.
Common apply_common(const ParsedArgs& args, bool allow_cuda = false);

// Prints `usage` and the options to stdout when --help was given; returns
// whether it did, so the command can return 0 at once.
bool print_help_if_asked(const ParsedArgs& args, std::string_view usage,
                         const std::vector<OptionSpec>& specs);

std::vector<OptionSpec> key_options();  // --field, --delimiter
KeySpec key_spec(const ParsedArgs& args);
// Names of hashes and layouts are read in any case, as --backend's are.
std::string lower_case(std::string name);
// --hash xxh64|redis (default xxh64).
HashSpec hash_spec(const ParsedArgs& args);
std::string hash_name(HashSpec spec);

// UsageError where `output` would replace one of the reader's inputs (the
// same file by any name, or standard input redirected from it): a typo that
// would lose the input's lines. `command` and `output_name` ("-o FILTER",
// "SKETCH") say which.
void require_output_not_an_input(const ChunkReader& reader, const AtomicFile& output, const std::string& command,
                                 const std::string& output_name);

// Adds the key of every input line to `sketch`. Workers pull chunks in
// parallel, each into its own sketch (library calls single-threaded), and
// the sketches are merged by register max at the end.
void add_lines(ChunkReader& reader, const KeySpec& keys, const Common& common, HyperLogLog& sketch);
// Adds the key of every input line to `filter`, one library bulk call (with
// the library's threads) per batch.
void add_lines(ChunkReader& reader, const KeySpec& keys, const Common& common, BloomFilter& filter);
// Writes to standard output, in input order, each whole line (with '\n')
// whose key the filter may contain (want_present) or certainly does not.
void filter_lines(ChunkReader& reader, const KeySpec& keys, const Common& common, const BloomFilter& filter,
                  bool want_present);

// An HLL estimate as `hll count` and `distinct` print it: rounded as Redis's
// PFCOUNT rounds it, or "inf" for a saturated sketch (every register at its
// maximum), whose estimate no integer holds.
std::string count_text(double estimate);

// Writes all bytes to standard output (InputError on failure).
void write_stdout(std::string_view bytes);

}  // namespace probkit::cli
