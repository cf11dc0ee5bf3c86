// Writes starting inputs for the fuzz targets into <dir>/<target>/: valid
// blobs of each format (so that mutation starts past the magic, version and
// checksum) and key batches of every kind for the backend comparison.
// scripts/fuzz.sh runs it before a fuzzing session; the committed corpora
// under fuzz/corpus/ are what those sessions kept.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "probkit/bloom_filter.hpp"
#include "probkit/hyperloglog.hpp"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;

void write(const fs::path& dir, const std::string& name, const Bytes& bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

// The native targets read their first byte as a mode (bit 0: recompute the
// checksum, the rest: the streamed reader's chunk size).
Bytes with_mode(std::uint8_t mode, const Bytes& blob) {
  Bytes out{mode};
  out.insert(out.end(), blob.begin(), blob.end());
  return out;
}

std::vector<std::uint64_t> some_keys(std::size_t n, std::uint64_t salt) {
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i] = (i + 1) * 0x9E3779B97F4A7C15ull ^ salt;
  return keys;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTPUT_DIR\n", argv[0]);
    return 2;
  }
  const fs::path root(argv[1]);
  using probkit::BloomFilter;
  using probkit::BloomLayout;
  using probkit::HyperLogLog;

  const struct {
    std::uint64_t blocks;
    std::uint32_t k;
    BloomLayout layout;
    probkit::HashSpec hash;
  } filters[] = {{1, 3, BloomLayout::Cacheline512, {}},
                 {5, 16, BloomLayout::Cacheline512, {probkit::HashKind::Murmur64A, 7}},
                 {3, 8, BloomLayout::ParquetSbbf, {}}};
  int i = 0;
  for (const auto& s : filters) {
    BloomFilter f(s.blocks, s.k, s.layout, s.hash);
    f.add(std::span<const std::uint64_t>(some_keys(4 * s.blocks, s.k)));
    write(root / "pkbf", "filter" + std::to_string(i) + "_whole", with_mode(0x00, f.serialize()));
    write(root / "pkbf", "filter" + std::to_string(i) + "_fixed_chunk7", with_mode(0x0D, f.serialize()));
    ++i;
  }

  i = 0;
  for (const auto& [p, hash] : {std::pair{4u, probkit::HashSpec{}}, std::pair{7u, probkit::HashSpec::redis()},
                                std::pair{14u, probkit::HashSpec::redis()}}) {
    HyperLogLog h(p, hash);
    h.add(std::span<const std::uint64_t>(some_keys(3u << p, p)));
    write(root / "pkhl", "sketch" + std::to_string(i++), with_mode(0x00, h.serialize()));
  }

  // Redis strings: dense from to_redis, sparse by hand (header, then XZERO /
  // VAL / ZERO opcodes covering the 16384 registers).
  HyperLogLog r = HyperLogLog::redis();
  r.add(std::span<const std::uint64_t>(some_keys(5000, 1)));
  write(root / "redis_hll", "dense", r.to_redis());
  const Bytes header{'H', 'Y', 'L', 'L', 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
  Bytes empty = header;
  empty.insert(empty.end(), {0x7F, 0xFF});  // XZERO 16384
  write(root / "redis_hll", "sparse_empty", empty);
  Bytes mixed = header;
  mixed.insert(mixed.end(),
               {0x05, 0x8B, 0x40, 0x10, 0xFC, 0x7F, 0xE3});  // ZERO 6, VAL 3x4, XZERO 17, VAL 32x1, XZERO 16356
  write(root / "redis_hll", "sparse_mixed", mixed);

  // Backend comparison: six shape bytes (layout, hash, key kind, string
  // offset; k; blocks; seed; precision), then the key bytes.
  for (int kind = 0; kind < 8; ++kind) {
    for (int variant = 0; variant < 2; ++variant) {
      Bytes in{static_cast<std::uint8_t>(variant | (variant << 1) | (kind << 2) | (variant << 5)),
               static_cast<std::uint8_t>(5 + 6 * variant),
               static_cast<std::uint8_t>(3 + 40 * variant),
               0,
               static_cast<std::uint8_t>(variant),
               static_cast<std::uint8_t>(10)};
      if (kind == 6 || kind == 7) {  // raw offsets: a count, the offsets, then data
        const int width = kind == 6 ? 4 : 8;
        in.push_back(4);
        for (int o : {0, 3, 3, 40}) {
          for (int b = 0; b < width; ++b) in.push_back(b == 0 ? static_cast<std::uint8_t>(o) : 0);
        }
      }
      for (int b = 0; b < 200; ++b) in.push_back(static_cast<std::uint8_t>((b * 37 + kind * 11 + variant) % 251));
      write(root / "backends", "kind" + std::to_string(kind) + "_" + std::to_string(variant), in);
    }
  }
  // The command line's splitter: field, delimiter and copies, keys a call, text.
  const std::string texts[] = {"alpha\tbeta\tgamma\nx\ty\r\n\n\r\nlast\tline",
                               "a,b,c\r\n,,\n" + std::string(300, 'z') + "\nq,r"};
  i = 0;
  for (const std::string& text : texts) {
    Bytes in{static_cast<std::uint8_t>(2), static_cast<std::uint8_t>(i == 0 ? 0 : 0x21), 3};
    in.insert(in.end(), text.begin(), text.end());
    write(root / "cli_lines", "text" + std::to_string(i++), in);
  }
  return 0;
}
