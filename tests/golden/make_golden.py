#!/usr/bin/env python3
"""Golden vectors for probkit's byte formats: a second, independent implementation.

Written from the published descriptions only (standard library, no probkit code):
  - XXH64: xxHash's specification (doc/xxhash_spec.md, "XXH64 Algorithm Description");
  - MurmurHash64A: Austin Appleby's MurmurHash2 64-bit variant "A";
  - the Bloom layouts, HLL registers and native formats: DESIGN.md §2-§4 and docs/FORMAT.md.

Prints JSON to stdout; tests/golden_test.cc compares the C++ library with it.
Regenerate with:  python3 tests/golden/make_golden.py > tests/vectors/golden.json
"""
import json

MASK64 = (1 << 64) - 1
MASK32 = (1 << 32) - 1


def rotl64(x, r):
    return ((x << r) | (x >> (64 - r))) & MASK64


def le64(b, i):
    return int.from_bytes(b[i:i + 8], "little")


def le32(b, i):
    return int.from_bytes(b[i:i + 4], "little")


# --- XXH64 (xxhash_spec.md)
P1 = 0x9E3779B185EBCA87
P2 = 0xC2B2AE3D27D4EB4F
P3 = 0x165667B19E3779F9
P4 = 0x85EBCA77C2B2AE63
P5 = 0x27D4EB2F165667C5


def xxh64_round(acc, lane):
    acc = (acc + lane * P2) & MASK64
    acc = rotl64(acc, 31)
    return (acc * P1) & MASK64


def xxh64_merge(acc, v):
    acc ^= xxh64_round(0, v)
    return (acc * P1 + P4) & MASK64


def xxh64(data, seed=0):
    n = len(data)
    i = 0
    if n >= 32:
        v = [(seed + P1 + P2) & MASK64, (seed + P2) & MASK64, seed & MASK64, (seed - P1) & MASK64]
        while i + 32 <= n:
            for j in range(4):
                v[j] = xxh64_round(v[j], le64(data, i + 8 * j))
            i += 32
        acc = (rotl64(v[0], 1) + rotl64(v[1], 7) + rotl64(v[2], 12) + rotl64(v[3], 18)) & MASK64
        for j in range(4):
            acc = xxh64_merge(acc, v[j])
    else:
        acc = (seed + P5) & MASK64
    acc = (acc + n) & MASK64
    while i + 8 <= n:
        acc ^= xxh64_round(0, le64(data, i))
        acc = (rotl64(acc, 27) * P1 + P4) & MASK64
        i += 8
    if i + 4 <= n:
        acc ^= (le32(data, i) * P1) & MASK64
        acc = (rotl64(acc, 23) * P2 + P3) & MASK64
        i += 4
    while i < n:
        acc ^= (data[i] * P5) & MASK64
        acc = (rotl64(acc, 11) * P1) & MASK64
        i += 1
    acc ^= acc >> 33
    acc = (acc * P2) & MASK64
    acc ^= acc >> 29
    acc = (acc * P3) & MASK64
    acc ^= acc >> 32
    return acc


# --- MurmurHash64A (Appleby, MurmurHash2.cpp)
MURMUR_M = 0xC6A4A7935BD1E995
REDIS_SEED = 0xADC83B19


def murmur64a(data, seed):
    n = len(data)
    h = (seed ^ (n * MURMUR_M)) & MASK64
    nblocks = n // 8
    for b in range(nblocks):
        k = le64(data, 8 * b)
        k = (k * MURMUR_M) & MASK64
        k ^= k >> 47
        k = (k * MURMUR_M) & MASK64
        h ^= k
        h = (h * MURMUR_M) & MASK64
    tail = data[8 * nblocks:]
    if tail:
        for j in reversed(range(len(tail))):
            h ^= tail[j] << (8 * j)
        h = (h * MURMUR_M) & MASK64
    h ^= h >> 47
    h = (h * MURMUR_M) & MASK64
    h ^= h >> 47
    return h


XXH64_KIND, MURMUR_KIND = 1, 2


def hash_bytes(kind, seed, data):
    return xxh64(data, seed) if kind == XXH64_KIND else murmur64a(data, seed)


def u64_bytes(v):
    return v.to_bytes(8, "little")


def u32_bytes(v):
    return v.to_bytes(4, "little")


# --- Blocked Bloom filters (DESIGN.md §3)
SALT = [0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31,
        0x9E3779B9, 0xE35E67B1, 0x734297E9, 0x35FBE861, 0xDEB7C719, 0x0448B211, 0x3459B749, 0xAB25F4C1]
CACHELINE512, PARQUET_SBBF = 1, 2


def bloom_bitset(layout, nb, k, hashes):
    words_per_block = 16 if layout == CACHELINE512 else 8
    words = [0] * (nb * words_per_block)
    for h in hashes:
        b = ((h >> 32) * nb) >> 32
        x = h & MASK32
        base = b * words_per_block
        if layout == CACHELINE512:
            for i in range(k):
                a = ((x * SALT[i]) & MASK32) >> 23
                words[base + (a >> 5)] |= 1 << (a & 31)
        else:
            for i in range(8):
                words[base + i] |= 1 << (((x * SALT[i]) & MASK32) >> 27)
    return b"".join(w.to_bytes(4, "little") for w in words)


def pkbf(layout, k, kind, seed, nb, bitset):
    body = (b"PKBF" + (1).to_bytes(2, "little") + bytes([layout, k, kind]) + bytes(7) +
            seed.to_bytes(8, "little") + nb.to_bytes(8, "little") + bitset)
    return body + xxh64(body, 0).to_bytes(8, "little")


# --- HyperLogLog (DESIGN.md §4)
def ctz(v):
    return (v & -v).bit_length() - 1


def hll_registers(p, hashes):
    m = 1 << p
    regs = [0] * m
    for h in hashes:
        j = h & (m - 1)
        r = ctz((h >> p) | (1 << (64 - p))) + 1
        regs[j] = max(regs[j], r)
    return bytes(regs)


def pkhl(p, kind, seed, registers):
    body = b"PKHL" + (1).to_bytes(2, "little") + bytes([p, kind]) + seed.to_bytes(8, "little") + registers
    return body + xxh64(body, 0).to_bytes(8, "little")


def main():
    vectors = []
    # Hashes of a few strings: empty, every tail length, and across the 32-byte stripe.
    inputs = [b"", b"a", b"ab", b"abc", b"abcd", b"abcdefg", b"abcdefgh", b"key:0", b"probkit",
              bytes(range(31)), bytes(range(32)), bytes(range(33)), bytes(range(100)),
              b"The quick brown fox jumps over the lazy dog"]
    for data in inputs:
        for kind, seed in [(XXH64_KIND, 0), (XXH64_KIND, 0x5EED), (XXH64_KIND, MASK64), (MURMUR_KIND, REDIS_SEED),
                           (MURMUR_KIND, 0)]:
            vectors.append({"id": "hash", "kind": kind, "seed": str(seed), "input_hex": data.hex(),
                            "hash": "%016x" % hash_bytes(kind, seed, data)})
    # Fixed-width keys hash as their little-endian bytes.
    for v in [0, 1, 0xDEADBEEF, MASK32]:
        for kind, seed in [(XXH64_KIND, 0), (MURMUR_KIND, REDIS_SEED)]:
            vectors.append({"id": "u32", "kind": kind, "seed": str(seed), "key": str(v),
                            "hash": "%016x" % hash_bytes(kind, seed, u32_bytes(v))})
    for v in [0, 1, 0x0123456789ABCDEF, MASK64]:
        for kind, seed in [(XXH64_KIND, 0), (MURMUR_KIND, REDIS_SEED)]:
            vectors.append({"id": "u64", "kind": kind, "seed": str(seed), "key": str(v),
                            "hash": "%016x" % hash_bytes(kind, seed, u64_bytes(v))})

    u64_0_99 = [xxh64(u64_bytes(i), 0) for i in range(100)]
    filters = [
        # id, layout, nb, k, hash kind, seed, hashes
        ("cacheline512_nb3_k7_u64_0_99", CACHELINE512, 3, 7, XXH64_KIND, 0, u64_0_99),
        ("parquet_sbbf_nb5_u64_0_99", PARQUET_SBBF, 5, 8, XXH64_KIND, 0, u64_0_99),
        ("cacheline512_nb2_k16_redis_key0_49", CACHELINE512, 2, 16, MURMUR_KIND, REDIS_SEED,
         [murmur64a(b"key:%d" % i, REDIS_SEED) for i in range(50)]),
    ]
    for fid, layout, nb, k, kind, seed, hashes in filters:
        bits = bloom_bitset(layout, nb, k, hashes)
        vectors.append({"id": fid, "bitset_hex": bits.hex(), "serialized_hex": pkbf(layout, k, kind, seed, nb, bits).hex()})

    sketches = [
        ("hll_p6_u64_0_999", 6, XXH64_KIND, 0, [xxh64(u64_bytes(i), 0) for i in range(1000)]),
        ("hll_p6_redis_key0_99", 6, MURMUR_KIND, REDIS_SEED, [murmur64a(b"key:%d" % i, REDIS_SEED) for i in range(100)]),
        ("hll_p4_u32_0_9999_seed12345", 4, XXH64_KIND, 12345, [xxh64(u32_bytes(i), 12345) for i in range(10000)]),
    ]
    for sid, p, kind, seed, hashes in sketches:
        regs = hll_registers(p, hashes)
        vectors.append({"id": sid, "registers_hex": regs.hex(), "serialized_hex": pkhl(p, kind, seed, regs).hex()})

    print("{")
    print('  "generator": "tests/golden/make_golden.py",')
    print('  "vectors": [')
    print(",\n".join("    " + json.dumps(v) for v in vectors))
    print("  ]")
    print("}")


if __name__ == "__main__":
    main()
