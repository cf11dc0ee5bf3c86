// BloomFilter::serialize_to / deserialize_from: the PKBF bytes in pieces are
// serialize()'s bytes, read back whatever the pieces, with every check
// deserialize makes; and the piecewise XXH64 behind their checksum.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "bytes.hpp"
#include "probkit/probkit.hpp"

namespace probkit {
namespace {

std::vector<std::uint8_t> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> b(n);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng());
  return b;
}

TEST(Xxh64Stream, AnySplitGivesTheOneShotHash) {
  const std::vector<std::uint8_t> data = random_bytes(4096 + 37, 1);
  std::mt19937_64 rng(2);
  for (std::size_t len : {0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 65, 100, 1000, 4133}) {
    for (std::uint64_t seed : {0ULL, 0x9e3779b97f4a7c15ULL}) {
      const std::uint64_t want = layout::xxh64(data.data(), len, seed);
      for (int trial = 0; trial < 20; ++trial) {
        detail::Xxh64Stream s(seed);
        std::size_t at = 0;
        while (at < len) {
          const std::size_t piece = std::min<std::size_t>(len - at, trial == 0 ? 1 : rng() % 70);
          s.update(std::span(data.data() + at, piece));
          at += piece;
        }
        ASSERT_EQ(s.digest(), want) << "len " << len << " trial " << trial;
      }
    }
  }
}

// A source over `bytes` that hands out pieces of 1..max_piece bytes.
BloomFilter::ByteSource source_over(const std::vector<std::uint8_t>& bytes, std::size_t max_piece, std::uint64_t seed) {
  auto at = std::make_shared<std::size_t>(0);
  auto rng = std::make_shared<std::mt19937_64>(seed);
  return [&bytes, at, rng, max_piece](std::span<std::uint8_t> out) {
    const std::size_t n = std::min({out.size(), bytes.size() - *at, 1 + (*rng)() % max_piece});
    if (n != 0) std::memcpy(out.data(), bytes.data() + *at, n);  // bytes.data() may be null
    *at += n;
    return n;
  };
}

BloomFilter sample_filter(BloomLayout layout, std::uint64_t blocks, std::uint64_t seed) {
  BloomFilter f(blocks, layout == BloomLayout::ParquetSbbf ? 8 : 5, layout, HashSpec{HashKind::Xxh64, seed});
  std::vector<std::uint64_t> keys(blocks * 4);
  std::iota(keys.begin(), keys.end(), seed);
  f.add(keys);
  return f;
}

TEST(BloomStreamFormat, PiecesAreTheSerializedBytesAndReadBack) {
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    for (std::uint64_t blocks : {1, 3, 1000}) {
      const BloomFilter f = sample_filter(layout, blocks, blocks);
      std::vector<std::uint8_t> streamed;
      int pieces = 0;
      f.serialize_to([&](std::span<const std::uint8_t> p) {
        streamed.insert(streamed.end(), p.begin(), p.end());
        ++pieces;
      });
      ASSERT_EQ(streamed, f.serialize());
      EXPECT_EQ(pieces, 3);
      for (std::size_t max_piece : {1, 7, 64, 1 << 20}) {
        const BloomFilter back = BloomFilter::deserialize_from(source_over(streamed, max_piece, max_piece));
        EXPECT_TRUE(back == f) << "blocks " << blocks << " pieces of up to " << max_piece;
        EXPECT_EQ(back.hash(), f.hash());
      }
    }
  }
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(BloomStreamFormat, BadBytesFailAsDeserializeFails) {
  const std::vector<std::uint8_t> good = sample_filter(BloomLayout::Cacheline512, 4, 9).serialize();
  const auto streamed = [](const std::vector<std::uint8_t>& b) {
    return message_of([&] { (void)BloomFilter::deserialize_from(source_over(b, 5, 3)); });
  };
  // Every truncation, and one byte too many.
  for (std::size_t len = 0; len < good.size(); ++len) {
    const std::string m = streamed(std::vector<std::uint8_t>(good.begin(), good.begin() + len));
    EXPECT_NE(m.find("truncated"), std::string::npos) << len << ": " << m;
  }
  std::vector<std::uint8_t> longer = good;
  longer.push_back(0);
  EXPECT_NE(streamed(longer).find("more bytes follow"), std::string::npos) << streamed(longer);
  // A corrupted header gives deserialize's message; a corrupted bitset or
  // checksum the checksum's.
  for (std::size_t at : {0, 4, 6, 7, 8, 9, 15, 24, 31, 32, 40, 100, 32 + 4 * 64, 32 + 4 * 64 + 7}) {
    std::vector<std::uint8_t> bad = good;
    bad[at] ^= 0x41;
    const std::string want = message_of([&] { (void)BloomFilter::deserialize(bad); });
    ASSERT_NE(want, "(no error)") << at;
    if (at == 24) {
      // num_blocks 4 -> 69: deserialize sees a length mismatch, the stream runs out.
      EXPECT_NE(streamed(bad).find("truncated: 296 bytes where num_blocks = 69 needs 4456"), std::string::npos)
          << streamed(bad);
    } else {
      EXPECT_EQ(streamed(bad), want) << "byte " << at;
    }
  }
}

TEST(BloomStreamFormat, SerializedSizeReadsTheHeaderAsDeserializeDoes) {
  for (BloomLayout layout : {BloomLayout::Cacheline512, BloomLayout::ParquetSbbf}) {
    const std::vector<std::uint8_t> good = sample_filter(layout, 7, 3).serialize();
    EXPECT_EQ(BloomFilter::serialized_size(std::span(good).first(32)), good.size());
    EXPECT_EQ(BloomFilter::serialized_size(good), good.size());
    EXPECT_NE(message_of([&] { (void)BloomFilter::serialized_size(std::span(good).first(31)); }).find("truncated"),
              std::string::npos);
    for (std::size_t at = 0; at < 32; ++at) {
      if (at >= 16 && at < 24) continue;  // the seed: any value is valid
      std::vector<std::uint8_t> bad = good;
      bad[at] ^= 0x41;
      const std::string header = message_of([&] { (void)BloomFilter::serialized_size(std::span(bad).first(32)); });
      const std::string whole = message_of([&] { (void)BloomFilter::deserialize(bad); });
      if (header == "(no error)") {  // num_blocks still in range: a new length the bytes do not have
        EXPECT_GE(at, 24u);
        EXPECT_NE(whole.find("does not match num_blocks"), std::string::npos) << whole;
      } else {
        EXPECT_EQ(header, whole) << "byte " << at;
      }
    }
  }
}

TEST(BloomStreamFormat, BadCallbacksAreErrors) {
  const BloomFilter f = sample_filter(BloomLayout::Cacheline512, 2, 1);
  EXPECT_THROW(f.serialize_to(nullptr), Error);
  EXPECT_THROW((void)BloomFilter::deserialize_from(nullptr), Error);
  const std::vector<std::uint8_t> good = f.serialize();
  // A source that claims more than it was asked for.
  EXPECT_NE(message_of([&] {
              (void)BloomFilter::deserialize_from([&](std::span<std::uint8_t> out) { return out.size() + 1; });
            }).find("more bytes than it was asked for"),
            std::string::npos);
  // The source's and the sink's own exceptions pass through.
  EXPECT_THROW((void)BloomFilter::deserialize_from(
                   [](std::span<std::uint8_t>) -> std::size_t { throw std::runtime_error("disk gone"); }),
               std::runtime_error);
  EXPECT_THROW(f.serialize_to([](std::span<const std::uint8_t>) { throw std::runtime_error("disk full"); }),
               std::runtime_error);
}

}  // namespace
}  // namespace probkit
