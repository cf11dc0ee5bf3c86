// The scalar reference backend: the layout functions in a loop, nothing else.
// Every other backend must produce exactly what this one produces.
#include <type_traits>

#include "probkit/detail/hash_keys.hpp"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "probkit/layout/hll.hpp"

namespace probkit::detail {
namespace {

// The reference prefetches nothing: BloomLookahead is for kernels that do.
void bloom_add(const BloomRef& f, const std::uint64_t* hashes, std::size_t n,
               BloomLookahead /*around*/) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = hashes[i];
    const std::uint64_t b = layout::block_index(h, f.num_blocks);
    if (f.layout == BloomLayout::Cacheline512) {
      std::uint32_t* block = f.words + b * layout::kCachelineWords;
      const layout::CachelineMask m = layout::cacheline_mask(h, f.k);
      for (std::uint32_t w = 0; w < layout::kCachelineWords; ++w) block[w] |= m.word[w];
    } else {
      std::uint32_t* block = f.words + b * layout::kSbbfWords;
      for (std::uint32_t w = 0; w < layout::kSbbfWords; ++w) block[w] |= layout::sbbf_word_bit(h, w);
    }
  }
}

bool bloom_test(const BloomRef& f, std::uint64_t h) {
  const std::uint64_t b = layout::block_index(h, f.num_blocks);
  if (f.layout == BloomLayout::Cacheline512) {
    const std::uint32_t* block = f.words + b * layout::kCachelineWords;
    const layout::CachelineMask m = layout::cacheline_mask(h, f.k);
    for (std::uint32_t w = 0; w < layout::kCachelineWords; ++w) {
      if ((block[w] & m.word[w]) != m.word[w]) return false;
    }
    return true;
  }
  const std::uint32_t* block = f.words + b * layout::kSbbfWords;
  for (std::uint32_t w = 0; w < layout::kSbbfWords; ++w) {
    const std::uint32_t bit = layout::sbbf_word_bit(h, w);
    if ((block[w] & bit) == 0) return false;
  }
  return true;
}

std::uint64_t bloom_contains(const BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                             BloomLookahead /*around*/, std::uint8_t* out) {
  std::uint64_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool hit = bloom_test(f, hashes[i]);
    hits += hit;
    if (out != nullptr) out[i] = hit;
  }
  return hits;
}

// The reference reads every key's register: the floor is only a hint.
void hll_add(std::uint8_t* registers, std::uint32_t p, const std::uint64_t* hashes, std::size_t n,
             std::uint8_t /*floor*/) {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t j = layout::hll_index(hashes[i], p);
    const std::uint8_t r = layout::hll_rank(hashes[i], p);
    if (registers[j] < r) registers[j] = r;
  }
}

// Branch-free: half the hashes go each way, at random. Hash i goes to below[i
// - m] and to above[m], and m counts it if it belongs above. GCC compiled a
// second counter (t += above ? 0 : 1) to a branch that cost 1.4x in the whole
// two-worker add.
std::size_t partition_hashes(const std::uint64_t* hashes, std::size_t n, std::uint64_t split,
                             std::uint64_t* below, std::uint64_t* above) {
  std::size_t m = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t h = hashes[i];
    above[m] = h;
    below[i - m] = h;
    m += static_cast<std::size_t>((h >> 32) >= split);
  }
  return m;
}

// Branch-free, so that it runs at memory speed even here (the compiler
// vectorises it for the baseline target). Lengths are differences taken in
// unsigned arithmetic: offsets out of order may be any values.
template <class Offset>
OffsetsCheck check_offsets_typed(const Offset* off, std::size_t count, Offset limit) {
  using U = std::make_unsigned_t<Offset>;
  unsigned bad = count > 0 && off[0] > limit ? 1u : 0u;
  const U width = count > 1 ? static_cast<U>(static_cast<U>(off[1]) - static_cast<U>(off[0])) : 0;
  U differ = 0;
  for (std::size_t i = 1; i < count; ++i) {
    bad |= static_cast<unsigned>(off[i] > limit) | static_cast<unsigned>(off[i] < off[i - 1]);
    differ |= static_cast<U>(static_cast<U>(off[i]) - static_cast<U>(off[i - 1])) ^ width;
  }
  const bool fixed = bad == 0 && differ == 0 && (width == 8 || width == 16);
  return {bad == 0, static_cast<std::uint8_t>(fixed ? width : 0)};
}

OffsetsCheck check_offsets(const void* offsets, bool wide, std::size_t count, std::int64_t limit) {
  if (wide) return check_offsets_typed(static_cast<const std::int64_t*>(offsets), count, limit);
  return check_offsets_typed(static_cast<const std::int32_t*>(offsets), count,
                             static_cast<std::int32_t>(limit));
}

// No hash_screened: the HLL driver hashes, then the HLL kernel screens; no
// bloom_contains_keys, bloom_add_keys or bloom_add_owned_keys: the filter
// hashes, then tests or adds.
constexpr CpuKernels kScalar{&hash_keys_reference, nullptr,  &bloom_add,
                             &bloom_contains,      &hll_add, &partition_hashes,
                             &check_offsets,       nullptr,  nullptr,
                             nullptr};

}  // namespace

const CpuKernels& scalar_kernels() { return kScalar; }

}  // namespace probkit::detail
