"""Shared helpers for the command-line tests: running the built binary, and an
independent model of Redis-mode HyperLogLog (MurmurHash64A + Redis's register
rule) that checks which keys the tool extracted from its input, byte for byte."""
import os
import subprocess
import tempfile
import unittest

PROBKIT = os.environ.get("PROBKIT_BIN", "")
M64 = (1 << 64) - 1
REDIS_SEED = 0xADC83B19
HLL_P = 14
HLL_REGISTERS = 1 << HLL_P
REDIS_DENSE_BYTES = 16 + HLL_REGISTERS * 6 // 8


def murmur64a(data: bytes, seed: int = REDIS_SEED) -> int:
    """MurmurHash64A as Redis's PFADD computes it (little-endian)."""
    m, r = 0xC6A4A7935BD1E995, 47
    h = (seed ^ (len(data) * m)) & M64
    nblocks = len(data) // 8
    for i in range(nblocks):
        k = int.from_bytes(data[8 * i:8 * i + 8], "little")
        k = (k * m) & M64
        k ^= k >> r
        k = (k * m) & M64
        h ^= k
        h = (h * m) & M64
    tail = data[8 * nblocks:]
    if tail:
        for i, b in enumerate(tail):
            h ^= b << (8 * i)
        h = (h * m) & M64
    h ^= h >> r
    h = (h * m) & M64
    h ^= h >> r
    return h


def redis_registers(keys) -> bytes:
    """The 16384 registers Redis's PFADD would produce for these keys."""
    regs = bytearray(HLL_REGISTERS)
    for key in keys:
        h = murmur64a(key)
        j = h & (HLL_REGISTERS - 1)
        rest = (h >> HLL_P) | (1 << (64 - HLL_P))
        rank = (rest & -rest).bit_length()  # trailing zeros + 1
        if regs[j] < rank:
            regs[j] = rank
    return bytes(regs)


def encode_dense(registers: bytes) -> bytes:
    """A dense Redis HLL string holding these 16384 registers (cached count 0)."""
    payload = 0
    for j, r in enumerate(registers):
        payload |= r << (6 * j)
    return b"HYLL" + bytes(12) + payload.to_bytes(REDIS_DENSE_BYTES - 16, "little")


def decode_dense(s: bytes) -> bytes:
    """Registers of a dense Redis HLL string (6 bits each, little-endian bit order)."""
    assert len(s) == REDIS_DENSE_BYTES and s[:4] == b"HYLL" and s[4] == 0, (len(s), s[:5])
    payload = int.from_bytes(s[16:], "little")
    return bytes((payload >> (6 * j)) & 63 for j in range(HLL_REGISTERS))


def run(args, stdin=None, env=None, check=True):
    """Runs probkit; returns (returncode, stdout bytes, stderr text)."""
    full_env = dict(os.environ)
    full_env.pop("PROBKIT_BACKEND", None)
    full_env.pop("PROBKIT_THREADS", None)
    if env:
        full_env.update(env)
    p = subprocess.run([PROBKIT] + [str(a) for a in args], input=stdin, capture_output=True, env=full_env,
                       timeout=600)
    err = p.stderr.decode("utf-8", "replace")
    if check and p.returncode != 0:
        raise AssertionError(f"probkit {' '.join(map(str, args))} failed ({p.returncode}): {err}")
    return p.returncode, p.stdout, err


class CliTestCase(unittest.TestCase):
    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="probkit-cli-")
        self.dir = self._tmp.name

    def tearDown(self):
        self._tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def write(self, name, data: bytes):
        p = self.path(name)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def read(self, name) -> bytes:
        with open(self.path(name), "rb") as f:
            return f.read()

    def registers_of(self, args_before_files, files=(), stdin=None, env=None):
        """Registers of a Redis-mode sketch built by `hll add` from the input."""
        sketch = self.path("registers.pkhl")
        if os.path.exists(sketch):
            os.remove(sketch)
        run(["hll", "add", "--hash", "redis", *args_before_files, sketch, *files], stdin=stdin, env=env)
        _, exported, _ = run(["hll", "export", "--redis", sketch])
        return decode_dense(exported)

    def assert_fails(self, args, stdin=None, mentions=None, env=None):
        """Exit status 1, exactly one line on stderr, nothing on stdout."""
        code, out, err = run(args, stdin=stdin, env=env, check=False)
        self.assertEqual(code, 1, f"probkit {args}: expected exit 1, got {code}; stderr: {err!r}")
        self.assertEqual(out, b"", f"probkit {args}: wrote to stdout on failure")
        lines = err.splitlines()
        self.assertEqual(len(lines), 1, f"probkit {args}: stderr is not one line: {err!r}")
        self.assertTrue(lines[0].startswith("probkit: "), err)
        if mentions:
            self.assertIn(mentions, err, f"probkit {args}: message does not mention {mentions!r}")
        return err

    def assert_no_stray_files(self, expected):
        """Only the expected files are in the test folder (no temporary leftovers)."""
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(expected))


def main():
    import sys
    args = sys.argv[1:]
    if len(args) >= 2 and args[0] == "--probkit":
        os.environ["PROBKIT_BIN"] = args[1]
        args = args[2:]
    global PROBKIT
    PROBKIT = os.environ.get("PROBKIT_BIN", "")
    if not PROBKIT or not os.path.exists(PROBKIT):
        sys.exit(f"the probkit binary is not given (--probkit PATH or PROBKIT_BIN): {PROBKIT!r}")
    unittest.main(module="__main__", argv=[sys.argv[0]] + args, verbosity=2)
