#include "commands/common.hpp"

#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "cli/chunk_reader.hpp"
#include "cli/errors.hpp"
#include "probkit/error.hpp"
#include "probkit/keys.hpp"

namespace probkit::cli {
namespace {

// Keys per library call: a whole 4 MiB chunk of short lines, so that the
// fixed cost of a call (dispatch, thread start-up) vanishes.
constexpr std::size_t kBatchKeys = std::size_t{1} << 18;

// Calls fn(keys, lines) for each batch of at most kBatchKeys keys that
// `reader` hands this thread; `lines` (the whole lines, for output) is filled
// only when want_lines is set.
template <class Fn>
void for_each_key_batch(ChunkReader& reader, const KeySpec& key, bool want_lines, Fn&& fn) {
  std::vector<std::uint8_t> buffer;
  std::span<const std::uint8_t> chunk;
  std::vector<std::string_view> keys;
  std::vector<std::string_view> lines;
  keys.reserve(kBatchKeys);
  if (want_lines) lines.reserve(kBatchKeys);
  LineSplitter splitter(key);
  while (reader.next(buffer, chunk)) {
    const std::uint8_t* p = chunk.data();
    const std::uint8_t* end = p + chunk.size();
    while (p < end) {
      keys.clear();
      lines.clear();
      p = splitter.split(p, end, kBatchKeys, keys, want_lines ? &lines : nullptr);
      fn(keys, lines);
    }
  }
}

}  // namespace

std::vector<OptionSpec> with_common_options(std::vector<OptionSpec> specs) {
  specs.push_back({"backend", "NAME", "auto, scalar, simd or cuda (default auto)"});
  specs.push_back({"threads", "N", "worker threads; 0 = every core (default)"});
  specs.push_back({"help", "", "show this help"});
  return specs;
}

Common apply_common(const ParsedArgs& args, bool allow_cuda) {
  Common c;
  if (auto b = args.value("backend")) c.backend = parse_backend(*b);
  // The environment's choices are checked here, whatever the input: the
  // library reads them at a command's first batch, and an empty input made
  // none (nor does bench, which names its backends), so a misspelt name
  // passed silently there.
  Backend asked = c.backend;
  if (const char* env = std::getenv("PROBKIT_BACKEND"); asked == Backend::Auto && env != nullptr && *env != '\0') {
    try {
      asked = parse_backend(env);
    } catch (const probkit::Error& e) {
      throw probkit::Error(std::string("PROBKIT_BACKEND: ") + e.what());
    }
  }
  if (const char* env = std::getenv("PROBKIT_SIMD_TARGET");
      env != nullptr && *env != '\0' && (asked == Backend::Auto || asked == Backend::Simd)) {
    try {
      (void)simd_target();  // throws, naming the pinned target and the supported ones, where it cannot serve
    } catch (const probkit::Error& e) {
      throw probkit::Error(std::string("PROBKIT_SIMD_TARGET: ") + e.what());
    }
  }
  (void)ChunkReader::chunk_bytes_from_environment();  // as PROBKIT_THREADS, whether or not this command reads input
  if (asked == Backend::Cuda && !allow_cuda) {
    throw UsageError(std::string(c.backend == Backend::Cuda ? "--backend cuda" : "PROBKIT_BACKEND=cuda") +
                     ": this command runs on the CPU (scalar or simd); only `probkit bench` runs the CUDA backend");
  }
  if (auto t = args.value("threads")) set_threads(static_cast<unsigned>(parse_u64("threads", *t, 0, 4096)));
  c.threads = probkit::threads();
  return c;
}

bool print_help_if_asked(const ParsedArgs& args, std::string_view usage, const std::vector<OptionSpec>& specs) {
  if (!args.has("help")) return false;
  std::cout << "usage: " << usage << "\n\noptions:\n" << options_help(specs);
  return true;
}

std::vector<OptionSpec> key_options() {
  return {{"field", "N", "use field N (1-based) of each line as the key"},
          {"delimiter", "C", "field delimiter: one byte, or 'tab' (default tab)"}};
}

KeySpec key_spec(const ParsedArgs& args) {
  KeySpec k;
  if (auto f = args.value("field")) k.field = static_cast<std::uint32_t>(parse_u64("field", *f, 1, 1u << 30));
  if (auto d = args.value("delimiter")) {
    if (!args.has("field")) throw UsageError("--delimiter needs --field");
    if (*d == "tab" || *d == "\\t") k.delimiter = '\t';
    else if (*d == "\n") throw UsageError("--delimiter cannot be a newline: it ends the line, so no line holds one");
    else if (d->size() == 1) k.delimiter = (*d)[0];
    else throw UsageError("--delimiter '" + *d + "' is not one byte (or 'tab')");
  }
  return k;
}

std::string lower_case(std::string name) {
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

HashSpec hash_spec(const ParsedArgs& args) {
  const auto h = args.value("hash");
  const std::string lower = lower_case(h.value_or("xxh64"));
  if (lower == "xxh64") return HashSpec{};
  if (lower == "redis") return HashSpec::redis();
  throw UsageError("--hash '" + *h + "' is not a hash (valid: xxh64, redis)");
}

std::string hash_name(HashSpec spec) {
  if (spec == HashSpec::redis()) return "redis";
  if (spec == HashSpec{}) return "xxh64";
  return std::string(spec.kind == HashKind::Murmur64A ? "murmur64a" : "xxh64") + " seed " + std::to_string(spec.seed);
}

void require_output_not_an_input(const ChunkReader& reader, const AtomicFile& output, const std::string& command,
                                 const std::string& output_name) {
  const std::optional<FileId> replaced = output.replaced_file();
  if (!replaced) return;
  if (const std::string* input = reader.input_that_is(*replaced)) {
    throw UsageError(command + ": " + *input + " is an input and the output (" + output_name +
                     ") too, which would replace it; write the output to another file");
  }
}

void add_lines(ChunkReader& reader, const KeySpec& key, const Common& common, HyperLogLog& sketch) {
  unsigned workers = common.threads;
  if (reader.total_bytes() != 0) {
    const std::uint64_t chunks = (reader.total_bytes() + reader.chunk_bytes() - 1) / reader.chunk_bytes();
    workers = static_cast<unsigned>(std::min<std::uint64_t>(workers, std::max<std::uint64_t>(1, chunks)));
  }
  std::vector<HyperLogLog> partial(workers, HyperLogLog(sketch.precision(), sketch.hash()));
  std::vector<std::exception_ptr> errors(workers);
  auto work = [&](unsigned w) {
    try {
      for_each_key_batch(reader, key, false, [&](const auto& keys, const auto&) {
        partial[w].add(Keys(keys), common.backend);
      });
    } catch (...) {
      errors[w] = std::current_exception();
      reader.cancel();
    }
  };
  // Parallel over chunks here, so each library call stays on its caller's thread.
  set_threads(1);
  {
    std::vector<std::jthread> pool;
    for (unsigned w = 1; w < workers; ++w) pool.emplace_back(work, w);
    work(0);
  }
  set_threads(common.threads);
  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  for (const HyperLogLog& p : partial) sketch.merge(p);
}

void add_lines(ChunkReader& reader, const KeySpec& key, const Common& common, BloomFilter& filter) {
  for_each_key_batch(reader, key, false,
                     [&](const auto& keys, const auto&) { filter.add(Keys(keys), common.backend); });
}

void filter_lines(ChunkReader& reader, const KeySpec& key, const Common& common, const BloomFilter& filter,
                  bool want_present) {
  std::vector<std::uint8_t> hit;
  std::string out;
  for_each_key_batch(reader, key, true, [&](const auto& keys, const auto& lines) {
    hit.resize(keys.size());
    filter.contains(Keys(keys), hit, common.backend);
    out.clear();
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if ((hit[i] != 0) == want_present) {
        out.append(lines[i]);
        out.push_back('\n');
      }
    }
    write_stdout(out);
  });
}

void write_stdout(std::string_view bytes) {
  const char* p = bytes.data();
  std::size_t left = bytes.size();
  std::cout.flush();
  while (left > 0) {
    const ssize_t w = write(STDOUT_FILENO, p, left);
    if (w < 0) {
      if (errno == EINTR) continue;
      throw InputError(std::string("cannot write standard output: ") + std::strerror(errno));
    }
    p += w;
    left -= static_cast<std::size_t>(w);
  }
}

std::string count_text(double estimate) {
  if (std::isinf(estimate)) return "inf";  // a saturated sketch, and only that
  if (estimate < 9.2e18) return std::to_string(std::llround(estimate));
  char text[32];  // past llround's range (2^63): a double this large is a whole number
  std::snprintf(text, sizeof text, "%.0f", estimate);
  return text;
}

}  // namespace probkit::cli
