// Bloom filter contains for every Highway target (DESIGN.md §3): one key at a
// time, its probes in vector lanes (lane i = probe i), so that one multiply by
// the salt vector gives all k bit positions at once, with no branch per key.
// Targets with kernels of their own (bloom_contains_avx512-inl.h,
// bloom_contains_avx2-inl.h) use it for the keys their loops leave over;
// bloom_contains-inl.h picks the loop for a call.

#if defined(PROBKIT_CPU_BLOOM_CONTAINS_GENERIC_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PROBKIT_CPU_BLOOM_CONTAINS_GENERIC_INL_H_
#undef PROBKIT_CPU_BLOOM_CONTAINS_GENERIC_INL_H_
#else
#define PROBKIT_CPU_BLOOM_CONTAINS_GENERIC_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "bloom_common-inl.h"
#include "probkit/detail/kernels.hpp"
#include "probkit/layout/bloom.hpp"
#include "stream_prefetch.h"

HWY_BEFORE_NAMESPACE();
namespace probkit::cpu::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

// block[word[i]] per lane: the block's 16 words are a table held in registers.
template <class D>
HWY_INLINE hn::Vec<D> lookup_words(D d, const std::uint32_t* block, hn::Vec<D> word) {
  const std::size_t n = hn::Lanes(d);
  if (n >= layout::kCachelineWords) {
    return hn::TableLookupLanes(hn::LoadU(d, block), hn::IndicesFromVec(d, word));
  }
  const auto lane = hn::And(word, hn::Set(d, static_cast<std::uint32_t>(n - 1)));
  const auto group = hn::Sub(word, lane);  // first word of the vector holding it
  auto out = hn::Zero(d);
  for (std::size_t j = 0; j < layout::kCachelineWords; j += n) {
    const auto v = hn::TableLookupLanes(hn::LoadU(d, block + j), hn::IndicesFromVec(d, lane));
    out = hn::IfThenElse(hn::Eq(group, hn::Set(d, static_cast<std::uint32_t>(j))), v, out);
  }
  return out;
}

// Per call, not per key (Highway 1.0.3's Iota goes through memory): all-ones
// in lanes i < k, so that probe lanes at or beyond k contribute nothing.
struct LiveProbes {
  HWY_ALIGN std::uint32_t lane[layout::kMaxCachelineK];
  explicit LiveProbes(std::uint32_t k) {
    for (std::uint32_t i = 0; i < layout::kMaxCachelineK; ++i) lane[i] = i < k ? ~0u : 0u;
  }
};

// Bits of probe lanes p..p+N-1 (0 in lanes at or beyond k).
template <class D>
HWY_INLINE hn::Vec<D> probe_bits(D d, hn::Vec<D> pos, std::size_t p, const LiveProbes& live) {
  const auto bit = hn::Shl(hn::Set(d, 1u), hn::And(pos, hn::Set(d, 31u)));
  return hn::And(bit, hn::Load(d, live.lane + p));
}

// 128-bit x86 vectors need four table lookups and an emulated variable shift
// per probe group: there the positions come from the vector multiply and the
// words are tested in scalar code, branch-free (measured 1.25x faster on SSE4).
#if HWY_TARGET == HWY_SSE4 || HWY_TARGET == HWY_SSSE3
inline constexpr bool kScalarWordTest = true;
#else
inline constexpr bool kScalarWordTest = false;
#endif

HWY_INLINE bool cacheline_test(const std::uint32_t* block, std::uint64_t h, std::uint32_t k,
                               const LiveProbes& live) {
  const DBlock d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  if constexpr (kScalarWordTest) {
    HWY_ALIGN std::uint32_t pos[layout::kCachelineWords];
    for (std::size_t p = 0; p < k; p += hn::Lanes(d))
      hn::Store(cacheline_positions(d, x, p), d, pos + p);
    std::uint32_t all = 1;
    for (std::uint32_t i = 0; i < k; ++i) all &= block[pos[i] >> 5] >> (pos[i] & 31);
    return (all & 1) != 0;
  }
#if !HWY_HAVE_SCALABLE
  if constexpr (hn::MaxLanes(d) >= layout::kCachelineWords) {  // one vector holds it all
    const auto pos = cacheline_positions(d, x, 0);
    const auto words =
        hn::TableLookupLanes(hn::LoadU(d, block), hn::IndicesFromVec(d, hn::ShiftRight<5>(pos)));
    return hn::AllTrue(d, hn::Eq(hn::AndNot(words, probe_bits(d, pos, 0, live)), hn::Zero(d)));
  }
#endif
  auto missing = hn::Zero(d);
  for (std::size_t p = 0; p < k; p += hn::Lanes(d)) {
    const auto pos = cacheline_positions(d, x, p);
    const auto words = lookup_words(d, block, hn::ShiftRight<5>(pos));
    missing = hn::Or(missing, hn::AndNot(words, probe_bits(d, pos, p, live)));
  }
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

HWY_INLINE bool sbbf_test(const std::uint32_t* block, std::uint64_t h) {
  const DSbbf d;
  const auto x = hn::Set(d, static_cast<std::uint32_t>(h));
  auto missing = hn::Zero(d);
  for (std::size_t p = 0; p < layout::kSbbfWords; p += hn::Lanes(d)) {
    missing = hn::Or(missing, hn::AndNot(hn::LoadU(d, block + p), sbbf_bits(d, x, p)));
  }
  return hn::AllTrue(d, hn::Eq(missing, hn::Zero(d)));
}

// The per-key contains loop: block prefetching for large filters, the key
// stream, the answer bytes and the count. test(block, &hash) answers one key;
// it gets the hash's address so that a kernel can broadcast from memory.
template <bool kPrefetch, bool kStore, std::uint32_t kWords, class Test>
HWY_INLINE std::uint64_t contains_each(const detail::BloomRef& f, const std::uint64_t* hashes,
                                       std::size_t n, detail::BloomLookahead around,
                                       std::uint8_t* out, const Test& test) {
  const std::size_t prefetch_end = n + around.ahead;
  const BlockPrefetch ahead = kPrefetch ? block_prefetch(f) : BlockPrefetch{};
  if constexpr (kPrefetch) prefetch_first<false>(f, hashes, around.primed, prefetch_end, ahead);
  std::uint64_t hits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if constexpr (kPrefetch) prefetch_ahead<false>(f, hashes, i, prefetch_end, ahead);
    if (i % 8 == 0) prefetch_stream(hashes + i);
    const bool hit =
        test(f.words + layout::block_index(hashes[i], f.num_blocks) * kWords, hashes + i);
    hits += hit;
    if constexpr (kStore) out[i] = hit;
  }
  return hits;
}

template <bool kPrefetch, bool kStore, BloomLayout kLayout>
std::uint64_t contains_loop(const detail::BloomRef& f, const std::uint64_t* hashes, std::size_t n,
                            detail::BloomLookahead around, std::uint8_t* out) {
  if constexpr (kLayout == BloomLayout::Cacheline512) {
    const LiveProbes live(f.k);
    return contains_each<kPrefetch, kStore, layout::kCachelineWords>(
        f, hashes, n, around, out, [&](const std::uint32_t* block, const std::uint64_t* h) {
          return cacheline_test(block, *h, f.k, live);
        });
  } else {
    return contains_each<kPrefetch, kStore, layout::kSbbfWords>(
        f, hashes, n, around, out,
        [](const std::uint32_t* block, const std::uint64_t* h) { return sbbf_test(block, *h); });
  }
}

#endif  // HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128

}  // namespace probkit::cpu::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PROBKIT_CPU_BLOOM_CONTAINS_GENERIC_INL_H_
