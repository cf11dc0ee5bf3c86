// Blocked Bloom filter: one cache line (cacheline512) or one 32-byte block
// (parquet_sbbf) per key, so a query is one memory access (which bits:
// docs/FORMAT.md, "Which bits a key sets").
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "probkit/backend.hpp"
#include "probkit/detail/storage.hpp"
#include "probkit/export.hpp"
#include "probkit/keys.hpp"
#include "probkit/layout/bloom.hpp"
#include "probkit/layout/hash.hpp"
#include "probkit/stream.hpp"

namespace probkit {

class PROBKIT_API BloomFilter {
 public:
  // A filter of `num_blocks` blocks (1 .. 2^32-1) with `k` probes per key
  // (cacheline512: 1..16; parquet_sbbf: must be 8). All bits clear.
  BloomFilter(std::uint64_t num_blocks, std::uint32_t k,
              BloomLayout layout = BloomLayout::Cacheline512, HashSpec hash = {});

  // The smallest filter whose modelled false-positive rate after `capacity`
  // distinct keys is at most fpr / (1 + 0.005 k) (cacheline512, and fpr /
  // 1.105 at k = 16, where rates below ~1e-7 leave a block few keys; fpr /
  // 1.01 for parquet_sbbf), with k chosen by the same model: the margin covers
  // what the model reads below the true rate (src/bloom_model.cc), so the
  // measured rate stays at or below `fpr`.
  static BloomFilter for_capacity(std::uint64_t capacity, double fpr,
                                  BloomLayout layout = BloomLayout::Cacheline512,
                                  HashSpec hash = {});
  // A filter of (at most) `bytes` bytes, rounded down to whole blocks. (A
  // parquet_sbbf bitset that Arrow's C++ reader will load has a power-of-two
  // length from 32 bytes to 128 MiB, which for_capacity seldom gives:
  // docs/FORMAT.md.)
  static BloomFilter for_bytes(std::size_t bytes, std::uint32_t k,
                               BloomLayout layout = BloomLayout::Cacheline512,
                               HashSpec hash = {});

  // Copy assignment is all or nothing: if the copy throws (no memory, a
  // failed device copy), the target keeps its shape and contents. A moved-from
  // filter holds no memory: it may only be assigned to or destroyed. Its other
  // operations throw Error, but for the accessors: its shape (layout, k,
  // num_blocks, hash) stays, and data() is empty (operator== finds it equal
  // only to another moved-from filter of the same shape).
  BloomFilter(const BloomFilter& other);
  BloomFilter& operator=(const BloomFilter& other);
  BloomFilter(BloomFilter&&) noexcept = default;
  BloomFilter& operator=(BloomFilter&&) noexcept = default;
  ~BloomFilter() = default;

  // Bulk insertion of every key of the batch.
  void add(const Keys& keys, Backend backend = Backend::Auto);
  // out[i] = 1 if key i may be present, 0 if it is certainly absent.
  // out.size() must equal keys.size().
  void contains(const Keys& keys, std::span<std::uint8_t> out,
                Backend backend = Backend::Auto) const;
  // Number of keys of the batch that may be present (no per-key output).
  std::uint64_t count(const Keys& keys, Backend backend = Backend::Auto) const;
  // One key, for convenience, hashed as in a batch of its type (docs/FORMAT.md):
  // a uint32_t as its 4 bytes, a uint64_t as its 8. Other integer types are
  // ambiguous (as for probkit::hash): cast to the width the keys were added at.
  bool contains(std::string_view key) const;
  // nullptr would reach std::string_view's strlen and crash (C++23 deletes
  // that string_view constructor too).
  bool contains(std::nullptr_t) const = delete;
  bool contains(std::uint32_t key) const;
  bool contains(std::uint64_t key) const;
  // One pre-hashed key: the hash used as given, as in a Prehashed batch. (For
  // a filter built from Prehashed batches, contains(uint64_t) would hash the
  // value again and miss.)
  bool contains_hash(std::uint64_t hash) const;

  // Stream-taking forms for device-resident filters (a host filter runs them
  // on the CPU and ignores the stream; its keys, `out` and `*result` must be
  // in host memory, else Error). Keys and `out` may be in host or device
  // memory (Keys says which, or detects it). The plain form waits for
  // the stream; the _async twin returns once the work is queued, or, for host
  // keys or host `out`, once those host buffers have been consumed. Calls
  // without a stream (estimate, serialize, ==, to_host, ...) use CUDA's
  // default stream: wait for your stream before them.
  void add(const Keys& keys, Stream stream, Backend backend = Backend::Auto);
  void add_async(const Keys& keys, Stream stream, Backend backend = Backend::Auto);
  void contains(const Keys& keys, std::span<std::uint8_t> out, Stream stream,
                Backend backend = Backend::Auto) const;
  void contains_async(const Keys& keys, std::span<std::uint8_t> out, Stream stream,
                      Backend backend = Backend::Auto) const;
  std::uint64_t count(const Keys& keys, Stream stream, Backend backend = Backend::Auto) const;
  // *result (device memory or pinned host memory for a truly asynchronous
  // call) receives the count when the stream reaches it.
  void count_async(const Keys& keys, std::uint64_t* result, Stream stream,
                   Backend backend = Backend::Auto) const;

  // Residence. to_device() moves the bitset into the memory of CUDA device
  // `device` (cudaMalloc); bulk calls then run there (Backend::Auto -> Cuda,
  // Scalar and Simd are errors). to_host() moves it back. On failure (no
  // such device, out of memory) they throw Error and leave the filter as it was.
  void to_device(int device = 0);
  void to_host();
  bool on_device() const { return storage_.on_device(); }
  // The CUDA device holding the bitset, or -1 for host memory.
  int device() const { return storage_.device(); }

  // Bitwise OR / AND with a filter of the same shape and hash (else Error).
  void union_with(const BloomFilter& other);
  void intersect_with(const BloomFilter& other);
  void clear();
  friend PROBKIT_API bool operator==(const BloomFilter& a, const BloomFilter& b);

  BloomLayout layout() const { return layout_; }
  std::uint32_t k() const { return k_; }
  std::uint64_t num_blocks() const { return num_blocks_; }
  std::size_t size_bytes() const { return storage_.size(); }
  std::size_t size_bits() const { return 8 * storage_.size(); }
  HashSpec hash() const { return hash_; }

  // The raw bitset: num_blocks blocks of little-endian uint32 words (device
  // memory for a device-resident filter).
  std::span<const std::uint8_t> data() const { return storage_.bytes(); }

  // The blocked-filter model's false-positive rate after n distinct keys.
  double expected_fpr(std::uint64_t n) const;
  // Fraction of bits set.
  double fill_ratio() const;
  // Distinct keys inserted, estimated from the popcount (Swamidass & Baldi 2007).
  double estimated_count() const;

  // Native format "PKBF" (docs/FORMAT.md), with an XXH64 checksum.
  std::vector<std::uint8_t> serialize() const;
  static BloomFilter deserialize(std::span<const std::uint8_t> bytes);
  // The same bytes in pieces, for filters too large to hold twice: `sink`
  // receives the header, the bitset (a view of the filter's own memory on the
  // host) and the checksum in order. `source` fills as much of the span it is
  // given as it can and returns how many bytes it wrote, 0 at the end; the
  // filter is read into its own memory, and every check deserialize makes is
  // made (truncation, bytes after the checksum, the checksum itself).
  using ByteSink = std::function<void(std::span<const std::uint8_t>)>;
  using ByteSource = std::function<std::size_t(std::span<std::uint8_t>)>;
  void serialize_to(const ByteSink& sink) const;
  static BloomFilter deserialize_from(const ByteSource& source);
  // The length of the PKBF bytes that start with `header` (at least its 32
  // bytes), after every check of the header deserialize makes (Error if one
  // fails): how much a reader should expect before it takes any memory.
  static std::uint64_t serialized_size(std::span<const std::uint8_t> header);

 private:
  void check_same_shape(const BloomFilter& other, const char* op) const;
  void combine_resident(const BloomFilter& other, bool intersect);
  void contains_on_device(const Keys& keys, std::span<std::uint8_t> out, Stream stream, Backend backend,
                          bool wait) const;

  BloomLayout layout_;
  std::uint32_t k_;
  std::uint64_t num_blocks_;
  HashSpec hash_;
  detail::Storage storage_;
};

// The blocked-filter false-positive model for n keys in num_blocks blocks with
// k probes: a Poisson mixture over the keys a block holds,
// sum_i Pois(i; n / num_blocks) (1 - (1 - 1/B)^(i k))^k with B the block's
// bits (512), and for parquet_sbbf, whose k = 8 bits go one to each 32-bit
// word, sum_i Pois(i; n / num_blocks) (1 - (1 - 1/32)^i)^8.
PROBKIT_API double bloom_model_fpr(BloomLayout layout, std::uint64_t num_blocks, std::uint32_t k, std::uint64_t n);

}  // namespace probkit
