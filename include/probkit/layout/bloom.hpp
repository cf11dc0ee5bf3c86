// Blocked Bloom filter layouts (docs/FORMAT.md, "Which bits a key sets"):
// hash -> block, and the bits a key sets inside its block. Every backend calls
// these; none keeps a copy.
#pragma once
#include <cstdint>

#include "probkit/layout/config.hpp"

namespace probkit {

// Stored in serialized filters: the numeric values are part of the format.
enum class BloomLayout : std::uint8_t {
  Cacheline512 = 1,  // 64-byte blocks, 16 words, k in [1, 16] probes of 9 bits
  ParquetSbbf = 2,   // Apache Parquet split-block filter: 32-byte blocks, 8 words, k = 8
};

namespace layout {

inline constexpr std::uint32_t kCachelineWords = 16;
inline constexpr std::uint32_t kCachelineBytes = 64;
inline constexpr std::uint32_t kMaxCachelineK = 16;
inline constexpr std::uint32_t kSbbfWords = 8;
inline constexpr std::uint32_t kSbbfBytes = 32;
inline constexpr std::uint32_t kSbbfK = 8;

// C[0..7] are the Parquet salts; C[8..15] extend them for k up to 16.
#define PROBKIT_BLOOM_SALTS                                                            \
  0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU, 0x705495c7U, 0x2df1424bU,        \
      0x9efc4947U, 0x5c6bfb31U, 0x9e3779b9U, 0xe35e67b1U, 0x734297e9U, 0x35fbe861U,    \
      0xdeb7c719U, 0x0448b211U, 0x3459b749U, 0xab25f4c1U
inline constexpr std::uint32_t kBloomSalt[16] = {PROBKIT_BLOOM_SALTS};
#if defined(__CUDACC__)
// nvcc keeps namespace-scope host constants out of device code; the device
// reads the same list from constant memory (a broadcast: i is warp-uniform).
static constexpr __constant__ std::uint32_t kBloomSaltDevice[16] = {PROBKIT_BLOOM_SALTS};
#endif

PROBKIT_HD_INLINE std::uint32_t bloom_salt(std::uint32_t i) {
#if defined(__CUDA_ARCH__)
  return kBloomSaltDevice[i];
#else
  return kBloomSalt[i];
#endif
}

PROBKIT_HD_INLINE std::uint32_t block_words(BloomLayout l) {
  return l == BloomLayout::ParquetSbbf ? kSbbfWords : kCachelineWords;
}
PROBKIT_HD_INLINE std::uint32_t block_bytes(BloomLayout l) { return 4 * block_words(l); }

// Both layouts: the high half of the hash picks the block (a multiply-shift
// range reduction), the low half drives the bit pattern: disjoint bits.
PROBKIT_HD_INLINE std::uint64_t block_index(std::uint64_t h, std::uint64_t num_blocks) {
  return ((h >> 32) * num_blocks) >> 32;
}

// cacheline512 probe i: a 9-bit position in the 512-bit block.
PROBKIT_HD_INLINE std::uint32_t cacheline_probe(std::uint32_t x, std::uint32_t i) {
  return (x * bloom_salt(i)) >> 23;
}

// The 16-word mask a key sets in its cacheline512 block.
struct CachelineMask {
  std::uint32_t word[kCachelineWords];
};
// ORs the bits a key sets in its cacheline512 block into words[0..15]: any
// indexable storage (a register array, or shared memory on the GPU, where a
// run-time index into registers would spill to local memory).
template <class Words>
PROBKIT_HD_INLINE void cacheline_mask_or(std::uint64_t h, std::uint32_t k, Words& words) {
  const auto x = static_cast<std::uint32_t>(h);
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t a = cacheline_probe(x, i);
    words[a >> 5] |= 1u << (a & 31);
  }
}
PROBKIT_HD_INLINE CachelineMask cacheline_mask(std::uint64_t h, std::uint32_t k) {
  CachelineMask m{};
  cacheline_mask_or(h, k, m.word);
  return m;
}
// Whether every probe bit of the key is set in `block` (16 words): the same
// answer as (block & mask) == mask, probe by probe.
template <class Words>
PROBKIT_HD_INLINE bool cacheline_test(std::uint64_t h, std::uint32_t k, const Words& block) {
  const auto x = static_cast<std::uint32_t>(h);
  for (std::uint32_t i = 0; i < k; ++i) {
    const std::uint32_t a = cacheline_probe(x, i);
    if (((block[a >> 5] >> (a & 31)) & 1u) == 0) return false;
  }
  return true;
}

// parquet_sbbf: word i of the 8-word block gets exactly one bit.
PROBKIT_HD_INLINE std::uint32_t sbbf_word_bit(std::uint64_t h, std::uint32_t i) {
  return 1u << ((static_cast<std::uint32_t>(h) * bloom_salt(i)) >> 27);
}

}  // namespace layout
}  // namespace probkit
