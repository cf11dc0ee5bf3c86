#include "probkit/bloom_filter.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "block_owners.hpp"
#include "bloom_shape.hpp"
#include "bulk.hpp"
#include "bytes.hpp"
#include "copy_buffers.hpp"
#include "cuda_backend.hpp"
#include "dispatch.hpp"
#include "key_ranges.hpp"
#include "probkit/error.hpp"

namespace probkit {
namespace detail {

void validate_bloom_shape(std::uint64_t num_blocks, std::uint32_t k, BloomLayout layout, const char* where) {
  if (layout != BloomLayout::Cacheline512 && layout != BloomLayout::ParquetSbbf) {
    throw Error(std::string(where) + ": unknown layout " + std::to_string(static_cast<int>(layout)) +
                " (valid: 1 = cacheline512, 2 = parquet_sbbf)");
  }
  if (num_blocks < 1 || num_blocks > kMaxBloomBlocks) {
    throw Error(std::string(where) + ": num_blocks = " + std::to_string(num_blocks) +
                " is outside [1, 2^32-1]");
  }
  if (layout == BloomLayout::Cacheline512 && (k < 1 || k > layout::kMaxCachelineK)) {
    throw Error(std::string(where) + ": k = " + std::to_string(k) + " is outside [1, 16] for cacheline512");
  }
  if (layout == BloomLayout::ParquetSbbf && k != layout::kSbbfK) {
    throw Error(std::string(where) + ": k = " + std::to_string(k) + " but parquet_sbbf always uses k = 8");
  }
}

}  // namespace detail

namespace {

void validate_hash(HashSpec hash, const char* where) {
  if (hash.kind != HashKind::Xxh64 && hash.kind != HashKind::Murmur64A) {
    throw Error(std::string(where) + ": unknown hash kind " + std::to_string(static_cast<int>(hash.kind)) +
                " (valid: 1 = xxh64, 2 = murmur64a)");
  }
}

detail::BloomRef ref_of(std::uint8_t* data, std::uint64_t nb, std::uint32_t k, BloomLayout layout) {
  return {reinterpret_cast<std::uint32_t*>(data), nb, k, layout};
}

detail::cuda::Launch launch_on(int device, Stream stream, bool wait) { return {device, stream.get(), wait}; }

constexpr std::size_t kHeaderBytes = 32;
constexpr std::uint16_t kFormatVersion = 1;

using detail::kPrivateCopyMaxBytes;  // the largest filter copied (PrivateCopies)

// dst |= src over `bytes` bytes (whole 8-byte words: blocks are 32 or 64 bytes).
void or_words(std::uint8_t* dst, const std::uint8_t* src, std::size_t bytes) {
  auto* a = reinterpret_cast<std::uint64_t*>(dst);
  const auto* b = reinterpret_cast<const std::uint64_t*>(src);
  for (std::size_t i = 0; i < bytes / 8; ++i) a[i] |= b[i];
}

// Queries read the filter itself, whatever the thread count: lines that no
// thread writes are shared by every core's cache at no cost (a copy per
// worker, as queries once read, measured no faster). Each worker counts its
// answers on a cache line of its own (PerWorker): packed, two workers' counts
// shared a line, each written every 256 keys (2 threads, 256 KiB, 2^20 keys:
// 957-985 -> 834-935 us a call).
// (docs/PERF-NOTES.md, "Bloom queries: copies and per-worker counts")
//
// contains and count: tests the keys (each worker its share), writes out[i]
// for key i if out is given, and returns how many answer yes. Hashed and
// tested in one loop where the backend has one for this filter and key kind
// (bloom_contains_keys), else hashed, then tested.
std::uint64_t query_keys(const detail::CpuKernels& kernels, const detail::KeyBatch& kb, HashSpec hash, unsigned workers,
                         detail::BloomRef filter, std::size_t filter_bytes, std::uint8_t* out) {
  std::vector<detail::PerWorker<std::uint64_t>> hits(std::max(1u, workers));
  std::uint64_t none = 0;
  if (kernels.bloom_contains_keys != nullptr &&
      kernels.bloom_contains_keys(filter, kb, 0, 0, hash, nullptr, nullptr, &none)) {
    detail::for_each_key_chunk(kb.n, workers,
                               [&](unsigned w, std::size_t first, std::size_t count, std::uint64_t* buf) {
                                 kernels.bloom_contains_keys(filter, kb, first, count, hash, buf,
                                                             out != nullptr ? out + first : nullptr, &hits[w].value);
                               },
                               detail::fused_bloom_chunk(kb));
  } else {
    const detail::BloomChunks chunks = detail::bloom_chunks(filter_bytes, kb.kind);
    detail::for_each_hash_chunk(
        kernels, kb, hash, workers,
        [&](unsigned w, std::size_t first, const std::uint64_t* h, std::size_t n, detail::BloomLookahead around) {
          hits[w].value += kernels.bloom_contains(filter, h, n, around, out != nullptr ? out + first : nullptr);
        },
        chunks.keys, chunks.ahead);
  }
  std::uint64_t total = 0;
  for (const auto& x : hits) total += x.value;
  return total;
}

}  // namespace

BloomFilter::BloomFilter(std::uint64_t num_blocks, std::uint32_t k, BloomLayout layout, HashSpec hash)
    : layout_(layout), k_(k), num_blocks_(num_blocks), hash_(hash) {
  detail::validate_bloom_shape(num_blocks, k, layout, "BloomFilter");
  validate_hash(hash, "BloomFilter");
  storage_ = detail::Storage(num_blocks * layout::block_bytes(layout));
}

BloomFilter BloomFilter::for_bytes(std::size_t bytes, std::uint32_t k, BloomLayout layout, HashSpec hash) {
  if (layout != BloomLayout::Cacheline512 && layout != BloomLayout::ParquetSbbf) {
    detail::validate_bloom_shape(1, k, layout, "for_bytes");
  }
  const std::uint64_t nb = bytes / layout::block_bytes(layout);
  if (nb > detail::kMaxBloomBlocks) {
    throw Error("for_bytes: " + std::to_string(bytes) + " bytes is more than the largest filter, 2^32-1 blocks of " +
                std::to_string(layout::block_bytes(layout)) + " bytes = " +
                std::to_string(detail::kMaxBloomBlocks * layout::block_bytes(layout)) + " bytes");
  }
  if (nb == 0) {
    throw Error("for_bytes: " + std::to_string(bytes) + " bytes is less than one " +
                std::to_string(layout::block_bytes(layout)) + "-byte block");
  }
  return BloomFilter(nb, k, layout, hash);
}

BloomFilter::BloomFilter(const BloomFilter& other) = default;
// The copy is made before any member of *this changes: if it throws (no memory,
// a failed device copy), *this keeps its own shape and bitset.
BloomFilter& BloomFilter::operator=(const BloomFilter& other) {
  if (this != &other) *this = BloomFilter(other);
  return *this;
}

void BloomFilter::add(const Keys& keys, Backend backend) {
  detail::require_not_moved_from(storage_, "add", "filter");
  if (on_device()) return add(keys, Stream{}, backend);
  detail::cuda::require_host_keys(keys.batch(), "add");
  detail::require_keys_apart(keys.batch(), storage_.data(), storage_.size(), "add", "the filter's own bitset");
  const detail::CpuChoice c = detail::resolve_cpu(backend);
  const detail::KeyBatch& kb = keys.batch();
  const unsigned workers = detail::workers_for(kb.n);
  const detail::BloomRef f = ref_of(storage_.data(), num_blocks_, k_, layout_);
  // Several workers write one filter (too large to copy, or a batch too small
  // to repay the copies) by dividing its blocks (block_owners.hpp): two each
  // go through the whole batch and add the keys of their own blocks, where
  // the backend hashes and adds one owner's keys in one loop; else each
  // hands the others the hashes of their blocks.
  const bool shared = workers > 1 && (storage_.size() > kPrivateCopyMaxBytes || kb.n < storage_.size() / 8);
  const detail::BloomChunks chunks = detail::bloom_chunks(storage_.size(), kb.kind);
  if (shared && workers <= detail::kOwnedKeysMaxWorkers && c.kernels->bloom_add_owned_keys != nullptr &&
      c.kernels->bloom_add_owned_keys(f, kb, 0, 0, hash_, {}, nullptr)) {
    detail::for_each_owned_key_chunk(
        kb.n, workers, num_blocks_,
        [&](unsigned, std::size_t first, std::size_t count, detail::HashRange own, std::uint64_t* buf) {
          c.kernels->bloom_add_owned_keys(f, kb, first, count, hash_, own, buf);
        },
        detail::kFusedLoopChunk);
  } else if (shared) {
    detail::for_each_exchanged_hash_chunk(
        *c.kernels, kb, hash_, workers, num_blocks_,
        [&](const std::uint64_t* h, std::size_t n, detail::BloomLookahead around) {
          c.kernels->bloom_add(f, h, n, around);
        },
        chunks.ahead, chunks.keys);
  } else {
    // Worker 0 fills the filter; each extra worker (cache-sized filters only)
    // a private copy, zeroed at its first chunk and ORed in at the end:
    // cheaper than sorting hashes by owner when the copy is small. The keys
    // are hashed and added in one loop where the backend has one for this
    // filter and key kind (bloom_add_keys), else hashed, then added.
    const std::size_t bytes = storage_.size();
    detail::PrivateCopies copies(bytes, workers - 1);
    const auto filter_of = [&](unsigned w) {
      detail::BloomRef mine = f;
      if (std::uint8_t* copy = copies.of(w, [&](std::uint8_t* zeroed) { std::memset(zeroed, 0, bytes); })) {
        mine.words = reinterpret_cast<std::uint32_t*>(copy);
      }
      return mine;
    };
    if (c.kernels->bloom_add_keys != nullptr && c.kernels->bloom_add_keys(f, kb, 0, 0, hash_, nullptr)) {
      detail::for_each_key_chunk(kb.n, workers,
                                 [&](unsigned w, std::size_t first, std::size_t count, std::uint64_t* buf) {
                                   c.kernels->bloom_add_keys(filter_of(w), kb, first, count, hash_, buf);
                                 },
                                 detail::fused_bloom_chunk(kb));
    } else {
      detail::for_each_hash_chunk(
          *c.kernels, kb, hash_, workers,
          [&](unsigned w, std::size_t, const std::uint64_t* h, std::size_t n, detail::BloomLookahead around) {
            c.kernels->bloom_add(filter_of(w), h, n, around);
          },
          chunks.keys, chunks.ahead);
    }
    copies.merge([&](std::size_t lo, std::size_t hi, const std::uint8_t* copy) {
      or_words(storage_.data() + lo, copy + lo, hi - lo);
    });
  }
  detail::note_served(c.backend, c.target);
}

void BloomFilter::contains(const Keys& keys, std::span<std::uint8_t> out, Backend backend) const {
  detail::require_not_moved_from(storage_, "contains", "filter");
  if (on_device()) return contains(keys, out, Stream{}, backend);
  if (out.size() != keys.size()) {
    throw Error("contains: output has " + std::to_string(out.size()) + " entries for " +
                std::to_string(keys.size()) + " keys");
  }
  if (out.data() == nullptr && !out.empty()) throw Error("contains: output pointer is null");
  detail::cuda::require_host_keys(keys.batch(), "contains");
  if (!out.empty()) detail::cuda::require_host_output(out.data(), "contains");
  detail::require_keys_apart(keys.batch(), out.data(), out.size(), "contains", "the output");
  const detail::CpuChoice c = detail::resolve_cpu(backend);
  const detail::KeyBatch& kb = keys.batch();
  const unsigned workers = detail::workers_for(kb.n);
  query_keys(*c.kernels, kb, hash_, workers,
             ref_of(const_cast<std::uint8_t*>(storage_.data()), num_blocks_, k_, layout_), storage_.size(), out.data());
  detail::note_served(c.backend, c.target);
}

std::uint64_t BloomFilter::count(const Keys& keys, Backend backend) const {
  detail::require_not_moved_from(storage_, "count", "filter");
  if (on_device()) return count(keys, Stream{}, backend);
  detail::cuda::require_host_keys(keys.batch(), "count");
  const detail::CpuChoice c = detail::resolve_cpu(backend);
  const detail::KeyBatch& kb = keys.batch();
  const unsigned workers = detail::workers_for(kb.n);
  const std::uint64_t hits = query_keys(*c.kernels, kb, hash_, workers,
                                        ref_of(const_cast<std::uint8_t*>(storage_.data()), num_blocks_, k_, layout_),
                                        storage_.size(), nullptr);
  detail::note_served(c.backend, c.target);
  return hits;
}

void BloomFilter::add(const Keys& keys, Stream stream, Backend backend) {
  if (!on_device()) return add(keys, backend);
  detail::cuda::require_device_backend(backend);
  detail::require_keys_apart(keys.batch(), storage_.data(), storage_.size(), "add", "the filter's own bitset");
  detail::cuda::bloom_add(ref_of(storage_.data(), num_blocks_, k_, layout_), keys.batch(), hash_,
                          launch_on(device(), stream, true));
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
}

void BloomFilter::add_async(const Keys& keys, Stream stream, Backend backend) {
  if (!on_device()) return add(keys, backend);
  detail::cuda::require_device_backend(backend);
  detail::require_keys_apart(keys.batch(), storage_.data(), storage_.size(), "add", "the filter's own bitset");
  detail::cuda::bloom_add(ref_of(storage_.data(), num_blocks_, k_, layout_), keys.batch(), hash_,
                          launch_on(device(), stream, false));
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
}

void BloomFilter::contains(const Keys& keys, std::span<std::uint8_t> out, Stream stream, Backend backend) const {
  if (!on_device()) return contains(keys, out, backend);
  contains_on_device(keys, out, stream, backend, true);
}

void BloomFilter::contains_async(const Keys& keys, std::span<std::uint8_t> out, Stream stream,
                                 Backend backend) const {
  if (!on_device()) return contains(keys, out, backend);
  contains_on_device(keys, out, stream, backend, false);
}

void BloomFilter::contains_on_device(const Keys& keys, std::span<std::uint8_t> out, Stream stream, Backend backend,
                                     bool wait) const {
  if (out.size() != keys.size()) {
    throw Error("contains: output has " + std::to_string(out.size()) + " entries for " +
                std::to_string(keys.size()) + " keys");
  }
  if (out.data() == nullptr && !out.empty()) throw Error("contains: output pointer is null");
  detail::cuda::require_device_backend(backend);
  detail::require_keys_apart(keys.batch(), out.data(), out.size(), "contains", "the output");
  detail::cuda::bloom_contains(ref_of(const_cast<std::uint8_t*>(storage_.data()), num_blocks_, k_, layout_),
                               keys.batch(), hash_, out.data(), nullptr, launch_on(device(), stream, wait));
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
}

std::uint64_t BloomFilter::count(const Keys& keys, Stream stream, Backend backend) const {
  if (!on_device()) return count(keys, backend);
  detail::cuda::require_device_backend(backend);
  std::uint64_t hits = 0;
  detail::cuda::bloom_contains(ref_of(const_cast<std::uint8_t*>(storage_.data()), num_blocks_, k_, layout_),
                               keys.batch(), hash_, nullptr, &hits, launch_on(device(), stream, true));
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
  return hits;
}

void BloomFilter::count_async(const Keys& keys, std::uint64_t* result, Stream stream, Backend backend) const {
  if (result == nullptr) throw Error("count_async: result pointer is null");
  if (!on_device()) {
    detail::cuda::require_host_output(result, "count_async");
    *result = count(keys, backend);
    return;
  }
  detail::cuda::require_device_backend(backend);
  detail::cuda::bloom_contains(ref_of(const_cast<std::uint8_t*>(storage_.data()), num_blocks_, k_, layout_),
                               keys.batch(), hash_, nullptr, result, launch_on(device(), stream, false));
  detail::note_served(Backend::Cuda, detail::cuda::device_label(device()));
}

void BloomFilter::to_device(int device) {
  detail::require_not_moved_from(storage_, "to_device", "filter");
  if (storage_.device() == device) return;
  if (device < 0) throw Error("to_device: device " + std::to_string(device) + " is not a CUDA device id");
  storage_ = storage_.to_device(device);  // built fully before it replaces the bitset
}

void BloomFilter::to_host() {
  detail::require_not_moved_from(storage_, "to_host", "filter");
  if (on_device()) storage_ = storage_.to_host();
}

bool BloomFilter::contains(std::string_view key) const {
  detail::require_not_moved_from(storage_, "contains", "filter");  // not count's name
  const std::string_view one[1] = {key};
  return count(Keys(std::span<const std::string_view>(one))) == 1;
}

bool BloomFilter::contains(std::uint32_t key) const {
  detail::require_not_moved_from(storage_, "contains", "filter");  // not count's name
  const std::uint32_t one[1] = {key};
  return count(Keys(std::span<const std::uint32_t>(one))) == 1;
}

bool BloomFilter::contains(std::uint64_t key) const {
  detail::require_not_moved_from(storage_, "contains", "filter");  // not count's name
  const std::uint64_t one[1] = {key};
  return count(Keys(std::span<const std::uint64_t>(one))) == 1;
}

bool BloomFilter::contains_hash(std::uint64_t hash) const {
  detail::require_not_moved_from(storage_, "contains_hash", "filter");
  const std::uint64_t one[1] = {hash};
  return count(Keys(Prehashed{std::span<const std::uint64_t>(one)})) == 1;
}

void BloomFilter::check_same_shape(const BloomFilter& other, const char* op) const {
  detail::require_not_moved_from(storage_, op, "filter");
  detail::require_not_moved_from(other.storage_, op, "other filter");
  if (layout_ != other.layout_ || k_ != other.k_ || num_blocks_ != other.num_blocks_) {
    throw Error(std::string(op) + ": filters differ in shape (layout " +
                std::to_string(static_cast<int>(layout_)) + "/" + std::to_string(static_cast<int>(other.layout_)) +
                ", k " + std::to_string(k_) + "/" + std::to_string(other.k_) + ", blocks " +
                std::to_string(num_blocks_) + "/" + std::to_string(other.num_blocks_) + ")");
  }
  if (!(hash_ == other.hash_)) {
    throw Error(std::string(op) + ": filters use different hashes (kind " +
                std::to_string(static_cast<int>(hash_.kind)) + " seed " + std::to_string(hash_.seed) +
                " vs kind " + std::to_string(static_cast<int>(other.hash_.kind)) + " seed " +
                std::to_string(other.hash_.seed) + ")");
  }
}

// Either side on a device: the result stays where this filter lives; the
// other filter's bits are brought over first (so a failure changes nothing).
void BloomFilter::combine_resident(const BloomFilter& other, bool intersect) {
  if (!on_device()) {
    detail::Storage scratch;
    const detail::Storage& theirs = other.storage_.host_view(scratch);
    auto* a = storage_.as<std::uint64_t>();
    const auto* b = theirs.as<std::uint64_t>();
    for (std::size_t i = 0; i < storage_.size() / 8; ++i) a[i] = intersect ? a[i] & b[i] : a[i] | b[i];
    return;
  }
  detail::Storage moved;
  const detail::Storage* theirs = &other.storage_;
  if (other.device() != device()) {
    moved = other.storage_.to_device(device());
    theirs = &moved;
  }
  detail::cuda::bloom_combine(storage_.as<std::uint32_t>(), theirs->as<std::uint32_t>(), storage_.size() / 4,
                              intersect, launch_on(device(), Stream{}, true));
}

void BloomFilter::union_with(const BloomFilter& other) {
  check_same_shape(other, "union_with");
  if (on_device() || other.on_device()) return combine_resident(other, false);
  or_words(storage_.data(), other.storage_.data(), storage_.size());
}

void BloomFilter::intersect_with(const BloomFilter& other) {
  check_same_shape(other, "intersect_with");
  if (on_device() || other.on_device()) return combine_resident(other, true);
  auto* a = storage_.as<std::uint64_t>();
  const auto* b = other.storage_.as<std::uint64_t>();
  for (std::size_t i = 0; i < storage_.size() / 8; ++i) a[i] &= b[i];
}

void BloomFilter::clear() {
  detail::require_not_moved_from(storage_, "clear", "filter");
  if (on_device()) return storage_.zero();
  std::fill_n(storage_.data(), storage_.size(), std::uint8_t{0});
}

bool operator==(const BloomFilter& a, const BloomFilter& b) {
  if (!(a.layout_ == b.layout_ && a.k_ == b.k_ && a.num_blocks_ == b.num_blocks_ && a.hash_ == b.hash_)) return false;
  detail::Storage scratch_a, scratch_b;  // device-resident bits are compared on the host
  const auto x = a.storage_.host_view(scratch_a).bytes();
  const auto y = b.storage_.host_view(scratch_b).bytes();
  return std::equal(x.begin(), x.end(), y.begin(), y.end());  // a moved-from side holds no bytes
}

double BloomFilter::fill_ratio() const {
  detail::require_not_moved_from(storage_, "fill_ratio", "filter");
  std::uint64_t ones = 0;
  detail::Storage scratch;
  const auto* w = storage_.host_view(scratch).as<std::uint64_t>();
  for (std::size_t i = 0; i < storage_.size() / 8; ++i) ones += std::popcount(w[i]);
  return static_cast<double>(ones) / static_cast<double>(size_bits());
}

double BloomFilter::estimated_count() const {
  // Swamidass & Baldi (2007), for blocks: a key sets a given bit when it
  // lands in that bit's block (1 / nb) and one of its probes there takes the
  // bit: q = 1 - (1 - 1/512)^k for cacheline512's k probes (repeats
  // allowed), 1/32 for parquet_sbbf's one bit in each 32-bit word. After n
  // keys, fill = 1 - (1 - q / nb)^n; solved for n. (The classic
  // -(m / k) ln(1 - fill) takes q = k / 512: 0.5% low at k = 6, 1.5% at 16.)
  const double fill = fill_ratio();
  if (fill >= 1.0) return std::numeric_limits<double>::infinity();
  if (fill <= 0.0) return 0.0;
  const double block_bits = layout_ == BloomLayout::Cacheline512 ? 512.0 : 32.0;
  const std::uint32_t probes = layout_ == BloomLayout::Cacheline512 ? k_ : 1;
  const double q = -std::expm1(probes * std::log1p(-1.0 / block_bits));
  return std::log1p(-fill) / std::log1p(-q / static_cast<double>(num_blocks_));
}

namespace {

// PKBF's 32-byte header (docs/FORMAT.md) as fields.
struct PkbfHeader {
  BloomLayout layout;
  std::uint32_t k;
  HashSpec hash;
  std::uint64_t num_blocks;
  std::uint64_t payload_bytes() const { return num_blocks * layout::block_bytes(layout); }
};

std::vector<std::uint8_t> encode_header(const PkbfHeader& h) {
  detail::ByteWriter w(kHeaderBytes);
  w.bytes("PKBF", 4);
  w.le<std::uint16_t>(kFormatVersion);
  w.le<std::uint8_t>(static_cast<std::uint8_t>(h.layout));
  w.le<std::uint8_t>(static_cast<std::uint8_t>(h.k));
  w.le<std::uint8_t>(static_cast<std::uint8_t>(h.hash.kind));
  w.zeros(7);
  w.le<std::uint64_t>(h.hash.seed);
  w.le<std::uint64_t>(h.num_blocks);
  return w.take();
}

// Every header field checked, in the order the messages promise: magic,
// version, reserved bytes, shape, hash.
PkbfHeader decode_header(const std::uint8_t* p) {
  using detail::read_le;
  detail::check_magic_and_version(p, "PKBF", kFormatVersion, "Bloom filter");
  const PkbfHeader h{static_cast<BloomLayout>(p[6]), p[7],
                     HashSpec{static_cast<HashKind>(p[8]), read_le<std::uint64_t>(p + 16)},
                     read_le<std::uint64_t>(p + 24)};
  for (int i = 9; i < 16; ++i) {
    if (p[i] != 0) throw Error("PKBF: reserved byte " + std::to_string(i) + " is not zero");
  }
  detail::validate_bloom_shape(h.num_blocks, h.k, h.layout, "PKBF");
  validate_hash(h.hash, "PKBF");
  return h;
}

// Reads exactly out.size() bytes unless the source ends first; returns how
// many it read.
std::size_t read_fully(const BloomFilter::ByteSource& source, std::span<std::uint8_t> out) {
  std::size_t got = 0;
  while (got < out.size()) {
    const std::size_t n = source(out.subspan(got));
    if (n == 0) break;
    if (n > out.size() - got) throw Error("PKBF: the source returned more bytes than it was asked for");
    got += n;
  }
  return got;
}

}  // namespace

std::vector<std::uint8_t> BloomFilter::serialize() const {
  const std::size_t bytes = kHeaderBytes + storage_.size() + 8;
  std::vector<std::uint8_t> out;
  try {
    out.reserve(bytes);
  } catch (const std::bad_alloc&) {
    throw AllocationError("serialize: cannot allocate " + std::to_string(bytes) + " bytes for the serialized filter");
  }
  serialize_to([&out](std::span<const std::uint8_t> piece) { out.insert(out.end(), piece.begin(), piece.end()); });
  return out;
}

void BloomFilter::serialize_to(const ByteSink& sink) const {
  detail::require_not_moved_from(storage_, "serialize", "filter");
  if (!sink) throw Error("serialize_to: the sink is empty");
  const auto header = encode_header({layout_, k_, hash_, num_blocks_});
  detail::Storage scratch;
  const std::span<const std::uint8_t> bits = storage_.host_view(scratch).bytes();
  detail::Xxh64Stream checksum;
  checksum.update(header);
  checksum.update(bits);
  std::uint8_t trailer[8];
  const std::uint64_t digest = checksum.digest();
  for (int i = 0; i < 8; ++i) trailer[i] = static_cast<std::uint8_t>(digest >> (8 * i));
  sink(header);
  sink(bits);
  sink(trailer);
}

BloomFilter BloomFilter::deserialize(std::span<const std::uint8_t> bytes) {
  detail::check_native_prelude(bytes, "PKBF", kHeaderBytes, kFormatVersion, "Bloom filter");
  const PkbfHeader h = decode_header(bytes.data());
  const std::uint64_t payload = h.payload_bytes();
  if (bytes.size() - kHeaderBytes - 8 != payload) {
    throw Error("PKBF: length " + std::to_string(bytes.size()) + " does not match num_blocks = " +
                std::to_string(h.num_blocks) + " (expected " + std::to_string(payload + kHeaderBytes + 8) + " bytes)");
  }
  detail::verify_checksum(bytes, "PKBF");
  BloomFilter f(h.num_blocks, h.k, h.layout, h.hash);
  std::memcpy(f.storage_.data(), bytes.data() + kHeaderBytes, payload);
  return f;
}

std::uint64_t BloomFilter::serialized_size(std::span<const std::uint8_t> header) {
  if (header.data() == nullptr && !header.empty()) throw Error("PKBF: null pointer with non-zero length");
  if (header.size() < kHeaderBytes) {
    throw Error("PKBF: truncated: " + std::to_string(header.size()) + " bytes is shorter than the " +
                std::to_string(kHeaderBytes) + "-byte header");
  }
  return kHeaderBytes + decode_header(header.data()).payload_bytes() + 8;
}

BloomFilter BloomFilter::deserialize_from(const ByteSource& source) {
  if (!source) throw Error("deserialize_from: the source is empty");
  std::array<std::uint8_t, kHeaderBytes> header{};
  const std::size_t got = read_fully(source, header);
  if (got < kHeaderBytes) {
    throw Error("PKBF: truncated: " + std::to_string(got) + " bytes is shorter than the " +
                std::to_string(kHeaderBytes + 8) + "-byte header and checksum");
  }
  const PkbfHeader h = decode_header(header.data());
  const std::uint64_t payload = h.payload_bytes();
  const auto short_by = [&](std::uint64_t read) {
    return Error("PKBF: truncated: " + std::to_string(kHeaderBytes + read) + " bytes where num_blocks = " +
                 std::to_string(h.num_blocks) + " needs " + std::to_string(payload + kHeaderBytes + 8));
  };
  // The bitset's memory is not zeroed first: it is taken as the bytes arrive,
  // so a header that claims a large filter in front of a short stream costs
  // little. Every byte is overwritten before the filter is returned.
  BloomFilter f(1, h.k, h.layout, h.hash);
  f.num_blocks_ = h.num_blocks;
  try {
    f.storage_ = detail::Storage(payload, detail::Storage::Uninitialized{});
  } catch (const AllocationError&) {
    throw AllocationError("PKBF: num_blocks = " + std::to_string(h.num_blocks) + " needs " + std::to_string(payload) +
                          " bytes, more than can be allocated");
  }
  const std::span<std::uint8_t> bits = f.storage_.bytes();
  const std::size_t bits_read = read_fully(source, bits);
  if (bits_read < payload) throw short_by(bits_read);
  std::uint8_t trailer[9];
  const std::size_t trailer_read = read_fully(source, trailer);
  if (trailer_read < 8) throw short_by(payload + trailer_read);
  if (trailer_read > 8) {
    throw Error("PKBF: more bytes follow the " + std::to_string(payload + kHeaderBytes + 8) +
                " that num_blocks = " + std::to_string(h.num_blocks) + " gives");
  }
  detail::Xxh64Stream checksum;
  checksum.update(header);
  checksum.update(bits);
  if (detail::read_le<std::uint64_t>(trailer) != checksum.digest()) {
    throw Error("PKBF: checksum mismatch (the bytes are corrupted)");
  }
  return f;
}

}  // namespace probkit
