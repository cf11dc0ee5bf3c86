// Every backend gives bit-identical results (DESIGN.md §6), on shapes and
// keys the fuzzer picks: a Bloom filter of either layout, any k, 1..1024
// blocks (or that many past 1 MiB), either hash and any seed, and a
// HyperLogLog of any precision, fed u32, u64 or pre-hashed keys, or strings
// as Arrow offsets (32- or 64-bit, well formed or raw from the input) or
// string_views. The scalar reference sets the answer; each SIMD target
// compiled in and supported here must give the same filter, the same sketch
// and the same query answers. Raw offsets that are not a valid batch must be
// refused with probkit::Error.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_check.hpp"
#include "probkit/backend.hpp"
#include "probkit/bloom_filter.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/error.hpp"
#include "probkit/hyperloglog.hpp"
#include "probkit/keys.hpp"

namespace {

using probkit::Backend;
using probkit::BloomFilter;
using probkit::HyperLogLog;
using probkit::Keys;

enum class Kind : std::uint8_t { U32, U64, Prehashed, Offsets32, Offsets64, Views, RawOffsets32, RawOffsets64 };

template <class T>
std::vector<T> words_of(std::span<const std::uint8_t> bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// The keys of one input in every form a batch can take; make(count) is a
// batch of the first `count` of them.
struct KeySet {
  Kind kind;
  std::vector<std::uint32_t> u32;
  std::vector<std::uint64_t> u64;
  std::vector<std::int32_t> off32;
  std::vector<std::int64_t> off64;
  std::vector<std::uint8_t> data;
  std::vector<std::string_view> views;
  std::size_t n = 0;

  KeySet(Kind k, std::uint8_t first_offset, std::span<const std::uint8_t> rest) : kind(k) {
    switch (kind) {
      case Kind::U32:
        u32 = words_of<std::uint32_t>(rest);
        n = u32.size();
        return;
      case Kind::U64:
      case Kind::Prehashed:
        u64 = words_of<std::uint64_t>(rest);
        n = u64.size();
        return;
      case Kind::RawOffsets32:
      case Kind::RawOffsets64: {
        // The first byte says how many offsets; they come raw, the rest is data.
        const std::size_t width = kind == Kind::RawOffsets32 ? 4 : 8;
        const std::size_t count = rest.empty() ? 0 : std::min<std::size_t>(rest[0], (rest.size() - 1) / width);
        const auto offsets = rest.subspan(rest.empty() ? 0 : 1, count * width);
        off32 = words_of<std::int32_t>(offsets);
        off64 = words_of<std::int64_t>(offsets);
        data.assign(offsets.end(), rest.end());
        n = count == 0 ? 0 : count - 1;
        return;
      }
      default: {
        // Well formed: a length byte (0..79, so that strings longer than
        // XXH64's 32-byte stripe come often), then that many bytes, after
        // `first_offset` bytes that belong to no key (a sliced Arrow array).
        data.assign(first_offset, 0xA5);
        off32.push_back(first_offset);
        std::size_t pos = 0;
        while (pos < rest.size()) {
          const std::size_t len = std::min<std::size_t>(rest[pos] % 80, rest.size() - pos - 1);
          data.insert(data.end(), rest.begin() + pos + 1, rest.begin() + pos + 1 + len);
          off32.push_back(static_cast<std::int32_t>(data.size()));
          pos += 1 + len;
        }
        off64.assign(off32.begin(), off32.end());
        n = off32.size() - 1;
        for (std::size_t i = 0; i < n; ++i) {
          views.emplace_back(reinterpret_cast<const char*>(data.data()) + off32[i], off32[i + 1] - off32[i]);
        }
      }
    }
  }

  Keys make(std::size_t count) const {
    const std::span<const std::uint8_t> bytes(data);
    switch (kind) {
      case Kind::U32:
        return Keys(std::span<const std::uint32_t>(u32.data(), count));
      case Kind::U64:
        return Keys(std::span<const std::uint64_t>(u64.data(), count));
      case Kind::Prehashed:
        return Keys(probkit::Prehashed{std::span<const std::uint64_t>(u64.data(), count)});
      case Kind::Offsets32:
      case Kind::RawOffsets32:
        return Keys(probkit::StringBatch<std::int32_t>{std::span<const std::int32_t>(off32.data(), count + 1), bytes});
      case Kind::Offsets64:
      case Kind::RawOffsets64:
        return Keys(probkit::StringBatch<std::int64_t>{std::span<const std::int64_t>(off64.data(), count + 1), bytes});
      case Kind::Views:
        return Keys(std::span<const std::string_view>(views.data(), count));
    }
    std::abort();
  }
};

// The answer of the one-key convenience query for key i, where the kind has one.
bool single_key_query(const BloomFilter& f, const KeySet& keys, std::size_t i, bool* has_one) {
  *has_one = true;
  switch (keys.kind) {
    case Kind::U32:
      return f.contains(keys.u32[i]);
    case Kind::U64:
      return f.contains(keys.u64[i]);
    case Kind::Offsets32:
    case Kind::Offsets64:
    case Kind::Views:
      return f.contains(keys.views[i]);
    default:
      *has_one = false;
      return false;
  }
}

std::vector<std::uint8_t> query(const BloomFilter& f, const Keys& keys, Backend backend) {
  std::vector<std::uint8_t> out(keys.size(), 0xEE);
  f.contains(keys, out, backend);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Once, so that a replay's log shows which targets it held to the scalar
  // backend (scripts/test-arm64.sh checks that SVE2, SVE and NEON were among them).
  static const bool announced = [] {
    std::fprintf(stderr, "backends fuzz: SIMD targets");
    for (const std::string& t : probkit::simd_targets()) std::fprintf(stderr, " %s", t.c_str());
    std::fprintf(stderr, "\n");
    return true;
  }();
  (void)announced;
  if (size < 6) return 0;
  const auto layout = (data[0] & 1) != 0 ? probkit::BloomLayout::ParquetSbbf : probkit::BloomLayout::Cacheline512;
  const probkit::HashSpec hash{(data[0] & 2) != 0 ? probkit::HashKind::Murmur64A : probkit::HashKind::Xxh64,
                               data[4] * 0x0101010101010101ull};
  const Kind kind = static_cast<Kind>((data[0] >> 2) & 7);
  const std::uint32_t k = layout == probkit::BloomLayout::ParquetSbbf ? 8 : 1 + data[1] % 16;
  // The top three bits of data[3] pick a size class: mostly in the cache
  // (1..1024 blocks), one input in eight just past the size from which the
  // kernels prefetch blocks ahead (1 MiB), so that the prefetching loops and
  // the lookahead they carry from chunk to chunk are compared too. (Past
  // 16 MiB they only prefetch further ahead: the same code, at a cost in
  // zeroing and comparing of a hundred small inputs each.)
  const std::uint64_t prefetch_bytes = (data[3] >> 5) == 7 ? probkit::detail::kBloomPrefetchMinBytes : 0;
  const std::uint64_t num_blocks =
      prefetch_bytes / probkit::layout::block_bytes(layout) + 1 + (data[2] | (data[3] & 3) << 8);
  const std::uint32_t p = 4 + data[5] % 15;
  const std::uint8_t first_offset = data[0] >> 5;

  const KeySet keys(kind, first_offset, std::span<const std::uint8_t>(data + 6, size - 6));
  if (kind == Kind::RawOffsets32 || kind == Kind::RawOffsets64) {
    if (keys.off32.empty()) return 0;  // not even the one offset of an empty batch
    try {
      (void)keys.make(keys.n);
    } catch (const probkit::Error&) {
      return 0;  // refused as a batch: what raw bytes mostly are
    }
  }
  const Keys all = keys.make(keys.n);
  const Keys half = keys.make(keys.n / 2);

  BloomFilter full_ref(num_blocks, k, layout, hash), half_ref(num_blocks, k, layout, hash);
  full_ref.add(all, Backend::Scalar);
  half_ref.add(half, Backend::Scalar);
  const auto members = query(full_ref, all, Backend::Scalar);
  FUZZ_CHECK(std::all_of(members.begin(), members.end(), [](std::uint8_t v) { return v == 1; }));
  const auto mixed = query(half_ref, all, Backend::Scalar);
  for (std::size_t i = 0; i < keys.n; ++i) {
    bool has_one = false;
    const bool one = single_key_query(half_ref, keys, i, &has_one);
    if (has_one) FUZZ_CHECK(one == (mixed[i] == 1));
  }
  HyperLogLog hll_ref(p, hash);
  hll_ref.add(all, Backend::Scalar);

  for (const std::string& target : probkit::simd_targets()) {
    probkit::set_simd_target(target);
    BloomFilter full(num_blocks, k, layout, hash), halved(num_blocks, k, layout, hash);
    full.add(all, Backend::Simd);
    halved.add(half, Backend::Simd);
    FUZZ_CHECK(full == full_ref);
    FUZZ_CHECK(halved == half_ref);
    FUZZ_CHECK(query(full_ref, all, Backend::Simd) == members);
    FUZZ_CHECK(query(half_ref, all, Backend::Simd) == mixed);
    FUZZ_CHECK(half_ref.count(all, Backend::Simd) ==
               static_cast<std::uint64_t>(std::count(mixed.begin(), mixed.end(), 1)));
    HyperLogLog hll(p, hash);
    hll.add(all, Backend::Simd);
    FUZZ_CHECK(hll == hll_ref);
  }
  probkit::set_simd_target("");
  return 0;
}
