// probkit: approximate distinct counts and Bloom filters over files, Redis
// HyperLogLog interchange, and the backend benchmark (docs/CLI.md).
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/errors.hpp"
#include "commands/commands.hpp"
#include "probkit/error.hpp"

namespace {

const char* const kUsage =
    "usage: probkit COMMAND [OPTIONS] [ARGS]\n"
    "\n"
    "commands:\n"
    "  distinct   estimated number of distinct lines of files or standard input\n"
    "  hll        HyperLogLog sketch files: add, count, merge, export --redis, import --redis\n"
    "  bloom      Bloom filter files: build, query (--absent|--present), info\n"
    "  bench      every backend on generated keys: throughput, FPR, accuracy, bit-identity\n"
    "\n"
    "Every command takes --backend NAME, --threads N and --help (or: probkit help COMMAND);\n"
    "probkit --version prints the version. Exit status: 0 on success, 1 on bad input\n"
    "(with one message on stderr), 2 when bench finds a backend that disagrees with the\n"
    "scalar one.\n";

// One line on stderr, whatever the message holds.
void report(const std::string& message) {
  std::string line = message;
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "probkit: %s\n", line.c_str());
}

// A standard descriptor closed when probkit starts (`>&-`) would be taken by
// the first file probkit opens: an input file on descriptor 1 made
// `-o /dev/stdout` resolve to that input and replace it with the output. Each
// closed one gets an unconnected socket, so that no file lands on it: reading
// or writing it fails (ENOTCONN), and so does opening /dev/stdin, /dev/stdout
// or /dev/stderr through it (ENXIO), where /dev/null would have let them
// succeed with nothing read or written.
void hold_closed_standard_descriptors() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    const int held = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);  // the lowest free descriptor: fd
    if (held >= 0 && held != fd) close(held);
  }
}

int dispatch(const std::vector<std::string>& args) {
  using namespace probkit::cli;
  if (args.empty()) throw UsageError("missing command (distinct, hll, bloom, bench; see probkit --help)");
  const std::string& cmd = args[0];
  const Args rest(args.begin() + 1, args.end());
  if (cmd == "help" && !rest.empty() && rest[0] != "help") {
    // `probkit help hll add` is `probkit hll add --help`.
    Args asked = rest;
    asked.push_back("--help");
    return dispatch(asked);
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (cmd == "--version") {
    std::cout << "probkit " << PROBKIT_VERSION << "\n";
    return 0;
  }
  if (cmd == "distinct") return run_distinct(rest);
  if (cmd == "hll") return run_hll(rest);
  if (cmd == "bloom") return run_bloom(rest);
  if (cmd == "bench") return run_bench(rest);
  throw UsageError("unknown command '" + cmd + "' (valid: distinct, hll, bloom, bench; see probkit --help)");
}

}  // namespace

int main(int argc, char** argv) {
  hold_closed_standard_descriptors();
  std::ios::sync_with_stdio(false);
  try {
    const int status = dispatch(std::vector<std::string>(argv + 1, argv + argc));
    // The failed write's errno says why ("No space left on device"): kept
    // from each flush, as the other may succeed after it.
    errno = 0;
    std::cout.flush();
    int why = std::cout ? 0 : errno;
    // bench prints with printf: C stdio's buffer is flushed and checked too.
    const bool stdio_failed = std::fflush(stdout) != 0 || std::ferror(stdout);
    if (stdio_failed && why == 0) why = errno;
    if (!std::cout || stdio_failed) {
      report(why != 0 ? std::string("cannot write standard output: ") + std::strerror(why)
                      : "cannot write standard output");
      return 1;
    }
    return status;
  } catch (const std::bad_alloc&) {
    report("out of memory");
  } catch (const std::exception& e) {
    report(e.what());
  }
  return 1;
}
