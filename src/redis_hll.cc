// Redis HyperLogLog strings (redis/src/hyperloglog.c, "HYLL" header):
//   bytes 0..3 "HYLL", 4 encoding (0 dense, 1 sparse), 5..7 unused (zero),
//   8..15 cached cardinality, little-endian; bit 7 of byte 15 set = stale.
// Dense: 16384 registers of 6 bits packed LSB-first (12288 bytes).
// Sparse: opcodes ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx
// yyyyyyyy (1..16384 zero registers), VAL 1vvvvvxx (1..4 registers of value
// 1..32). docs/FORMAT.md describes both.
#include <cstdio>
#include <cstring>
#include <string>

#include "probkit/error.hpp"
#include "probkit/hyperloglog.hpp"

namespace probkit {
namespace {

constexpr std::size_t kRedisHeader = 16;
constexpr std::size_t kRedisRegisters = 16384;
constexpr std::size_t kRedisDenseBytes = kRedisHeader + kRedisRegisters * 6 / 8;  // 12304
constexpr std::uint32_t kRedisP = 14;
constexpr std::uint8_t kRedisMaxRank = 65 - kRedisP;  // 51

std::string reg_msg(std::size_t j, unsigned v) {
  return "register " + std::to_string(j) + " = " + std::to_string(v) + " exceeds the maximum rank " +
         std::to_string(kRedisMaxRank) + " for p = 14";
}

void decode_dense(const std::uint8_t* payload, std::uint8_t* regs) {
  for (std::size_t j = 0; j < kRedisRegisters; ++j) {
    const std::size_t bit = j * 6;
    const std::size_t byte = bit / 8;
    const unsigned shift = bit & 7;
    unsigned v = payload[byte] >> shift;
    if (shift > 2) v |= static_cast<unsigned>(payload[byte + 1]) << (8 - shift);
    v &= 63;
    if (v > kRedisMaxRank) throw Error("Redis HLL dense: " + reg_msg(j, v));
    regs[j] = static_cast<std::uint8_t>(v);
  }
}

void decode_sparse(const std::uint8_t* p, std::size_t len, std::uint8_t* regs) {
  std::size_t idx = 0;
  std::size_t pos = 0;
  while (pos < len) {
    const std::uint8_t op = p[pos];
    std::size_t run;
    unsigned value = 0;
    if ((op & 0xC0) == 0x00) {  // ZERO
      run = (op & 0x3F) + 1u;
      pos += 1;
    } else if ((op & 0xC0) == 0x40) {  // XZERO
      if (pos + 1 >= len) throw Error("Redis HLL sparse: XZERO opcode at byte " + std::to_string(pos) + " is truncated");
      run = (((op & 0x3Fu) << 8) | p[pos + 1]) + 1u;
      pos += 2;
    } else {  // VAL
      value = ((op >> 2) & 0x1F) + 1u;
      run = (op & 0x3u) + 1u;
      pos += 1;
    }
    if (run > kRedisRegisters - idx) {
      throw Error("Redis HLL sparse: run of " + std::to_string(run) + " registers at register " +
                  std::to_string(idx) + " overflows the 16384 registers");
    }
    if (value != 0) std::memset(regs + idx, static_cast<int>(value), run);
    idx += run;
  }
  if (idx != kRedisRegisters) {
    throw Error("Redis HLL sparse: runs cover " + std::to_string(idx) + " registers, not 16384");
  }
}

}  // namespace

std::vector<std::uint8_t> HyperLogLog::to_redis() const {
  detail::require_not_moved_from(storage_, "to_redis", "sketch");
  if (p_ != kRedisP || !(hash_ == HashSpec::redis())) {
    char seed[24];
    std::snprintf(seed, sizeof seed, "0x%llx", static_cast<unsigned long long>(hash_.seed));
    throw Error("to_redis: only a Redis-mode sketch (p = 14, MurmurHash64A seed 0xadc83b19) is a Redis HLL; "
                "this one has p = " + std::to_string(p_) + " and " +
                (hash_.kind == HashKind::Murmur64A ? "MurmurHash64A" : "XXH64") + " seed " + seed);
  }
  std::vector<std::uint8_t> out(kRedisDenseBytes, 0);
  std::memcpy(out.data(), "HYLL", 4);
  out[4] = 0;      // dense
  out[15] = 0x80;  // cached cardinality is stale: Redis recounts on PFCOUNT
  std::uint8_t* payload = out.data() + kRedisHeader;
  detail::Storage scratch;  // a device-resident sketch is exported from a host copy
  const std::uint8_t* regs = storage_.host_view(scratch).data();
  for (std::size_t j = 0; j < kRedisRegisters; ++j) {
    const std::size_t bit = j * 6;
    const std::size_t byte = bit / 8;
    const unsigned shift = bit & 7;
    const unsigned v = regs[j];
    payload[byte] |= static_cast<std::uint8_t>(v << shift);
    if (shift > 2) payload[byte + 1] |= static_cast<std::uint8_t>(v >> (8 - shift));
  }
  return out;
}

HyperLogLog HyperLogLog::from_redis(std::span<const std::uint8_t> bytes) {
  if (bytes.data() == nullptr && !bytes.empty()) throw Error("Redis HLL: null pointer with non-zero length");
  if (bytes.size() < kRedisHeader) {
    throw Error("Redis HLL: truncated: " + std::to_string(bytes.size()) + " bytes is shorter than the 16-byte header");
  }
  const std::uint8_t* p = bytes.data();
  if (std::memcmp(p, "HYLL", 4) != 0) throw Error("Redis HLL: bad magic (expected \"HYLL\")");
  HyperLogLog h = HyperLogLog::redis();
  std::uint8_t* regs = h.storage_.data();
  if (p[4] == 0) {
    if (bytes.size() != kRedisDenseBytes) {
      throw Error("Redis HLL dense: length " + std::to_string(bytes.size()) + " is not 12304 bytes");
    }
    decode_dense(p + kRedisHeader, regs);
  } else if (p[4] == 1) {
    decode_sparse(p + kRedisHeader, bytes.size() - kRedisHeader, regs);
  } else {
    throw Error("Redis HLL: unknown encoding " + std::to_string(p[4]) + " (valid: 0 dense, 1 sparse)");
  }
  return h;
}

}  // namespace probkit
