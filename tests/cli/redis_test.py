#!/usr/bin/env python3
"""Redis interoperability, checked against a real Redis: starts Debian's
redis-server on a free loopback port (no persistence), drives it with redis-cli,
and compares with `probkit hll` for 1, 100, 10^4 and 10^6 distinct lines:
(a) PFADD of the same lines gives exactly the registers of `hll export --redis`;
(b) PFCOUNT of the exported string equals `hll count`;
(c) strings read back from Redis (dense, sparse, after PFMERGE) import, count
    and merge the same.
Without redis-server this fails under CI (CI=true) and is skipped (exit 77)
elsewhere."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import support
from support import CliTestCase, run

SIZES = (1, 100, 10_000, 1_000_000)
SPARSE_LIMIT_SIZES = (1, 100, 10_000)  # Redis inserts into a sparse string in O(size): 10^6 would take minutes


def resp(*parts: bytes) -> bytes:
    out = [b"*%d\r\n" % len(parts)]
    for p in parts:
        out.append(b"$%d\r\n%s\r\n" % (len(p), p))
    return b"".join(out)


def sparse_string(registers: bytes) -> bytes:
    """Registers in Redis's sparse encoding (ZERO, XZERO and VAL opcodes), for
    sizes where Redis itself would take too long to build one; Redis then
    checks it (PFCOUNT rejects a malformed sparse string)."""
    out = bytearray(b"HYLL\x01\x00\x00\x00" + b"\x00" * 7 + b"\x80")
    j = 0
    while j < len(registers):
        v = registers[j]
        run_len = 1
        while j + run_len < len(registers) and registers[j + run_len] == v:
            run_len += 1
        j += run_len
        while run_len > 0:
            if v == 0 and run_len > 64:
                step = min(run_len, 16384)
                out += bytes([0x40 | ((step - 1) >> 8), (step - 1) & 0xFF])
            elif v == 0:
                step = run_len
                out.append(step - 1)
            else:
                assert v <= 32, "sparse encoding holds register values up to 32"
                step = min(run_len, 4)
                out.append(0x80 | ((v - 1) << 2) | (step - 1))
            run_len -= step
    return bytes(out)


class RedisServer:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory(prefix="probkit-redis-")
        self.proc = None
        self.port = None

    def start(self):
        for _ in range(5):  # the free port may be taken between probe and bind
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                self.port = s.getsockname()[1]
            self.proc = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", self.dir.name, "--daemonize", "no", "--logfile", os.path.join(self.dir.name, "redis.log")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            deadline = time.time() + 15
            while time.time() < deadline and self.proc.poll() is None:
                p = subprocess.run(["redis-cli", "-p", str(self.port), "PING"], capture_output=True)
                if p.stdout.strip() == b"PONG":
                    return
                time.sleep(0.05)
            self.stop()
        raise RuntimeError("redis-server did not start")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cli(self, *args, stdin=None) -> bytes:
        p = subprocess.run(["redis-cli", "-p", str(self.port), *[str(a) for a in args]], input=stdin,
                           capture_output=True, timeout=300)
        if p.returncode != 0 or p.stdout.startswith(b"ERR") or p.stdout.startswith(b"(error)"):
            raise AssertionError(f"redis-cli {args}: {p.stdout[:200]!r} {p.stderr[:200]!r}")
        return p.stdout

    def get(self, key) -> bytes:
        out = self.cli("GET", key)
        assert out.endswith(b"\n"), out[-10:]
        return out[:-1]  # redis-cli prints the raw bytes, then a newline

    def integer(self, *args) -> int:
        return int(self.cli(*args))

    def pfadd(self, key, lines):
        proto = b"".join(resp(b"PFADD", key.encode(), *lines[i:i + 1000]) for i in range(0, len(lines), 1000))
        out = subprocess.run(["redis-cli", "-p", str(self.port), "--pipe"], input=proto, capture_output=True,
                             timeout=300)
        assert out.returncode == 0 and b"errors: 0" in out.stdout, out.stdout


SERVER = RedisServer()


def lines_for(n, tag):
    # Some duplicates and a few binary bytes, as real keys have.
    keys = [b"%s:%d" % (tag, i) for i in range(n)]
    if n >= 100:
        keys[1] = b"\x00\xff bin\r\t"
    return keys


class RedisInteropTest(CliTestCase):
    @classmethod
    def setUpClass(cls):
        SERVER.start()
        cls.addClassCleanup(SERVER.stop)

    def setUp(self):
        super().setUp()
        SERVER.cli("FLUSHALL")
        SERVER.cli("CONFIG", "SET", "hll-sparse-max-bytes", "3000")  # Redis's default

    def sketch_of(self, name, lines):
        path = self.path(name)
        run(["hll", "add", "--hash", "redis", path, self.write(name + ".txt", b"".join(k + b"\n" for k in lines))])
        return path

    def count(self, *sketches):
        return int(run(["hll", "count", *sketches])[1])

    def import_bytes(self, name, data):
        path = self.path(name)
        run(["hll", "import", "--redis", self.write(name + ".bin", data), path])
        return path

    def export(self, sketch):
        return run(["hll", "export", "--redis", sketch])[1]

    def check_size(self, n):
        lines = lines_for(n, b"e")
        SERVER.pfadd("k", lines + lines[: n // 3])  # duplicates change nothing
        sketch = self.sketch_of("s", lines)
        exported = self.export(sketch)
        self.assertEqual(len(exported), support.REDIS_DENSE_BYTES)

        # (a) PFADD's registers are the exported registers, bit for bit.
        pfcount_k = SERVER.integer("PFCOUNT", "k")
        live = SERVER.get("k")
        SERVER.cli("PFDEBUG", "TODENSE", "k")
        dense = SERVER.get("k")
        self.assertEqual(dense[:8], exported[:8], n)
        self.assertEqual(dense[16:], exported[16:], f"registers differ at n = {n}")

        # (b) PFCOUNT of the exported string equals probkit's count (and PFADD's).
        SERVER.cli("-x", "SET", "exported", stdin=exported)
        self.assertEqual(SERVER.integer("PFCOUNT", "exported"), self.count(sketch), n)
        self.assertEqual(pfcount_k, self.count(sketch), n)
        if n <= 100:
            self.assertEqual(self.count(sketch), n)

        # (c) Strings from Redis import to the same sketch: as PFADD left it,
        # dense, and sparse (forced with a large hll-sparse-max-bytes).
        imported = {"live": live, "dense": dense}
        if n in SPARSE_LIMIT_SIZES:
            SERVER.cli("CONFIG", "SET", "hll-sparse-max-bytes", "200000")
            SERVER.pfadd("sparse", lines)
            SERVER.cli("CONFIG", "SET", "hll-sparse-max-bytes", "3000")
            imported["sparse"] = SERVER.get("sparse")
            self.assertEqual(imported["sparse"][4], 1, "Redis did not keep the sketch sparse")
            self.assertEqual(SERVER.integer("PFCOUNT", "sparse"), self.count(sketch))
        else:
            imported["sparse"] = sparse_string(support.decode_dense(exported))
            SERVER.cli("-x", "SET", "sparse", stdin=imported["sparse"])
            self.assertEqual(SERVER.integer("PFCOUNT", "sparse"), self.count(sketch))
        for kind, data in imported.items():
            path = self.import_bytes("imp-" + kind, data)
            self.assertEqual(self.export(path), exported, (n, kind))
            self.assertEqual(self.count(path), pfcount_k, (n, kind))

        # After PFMERGE: two overlapping halves merged in Redis and in probkit.
        first, second = lines[: n // 2 + 1], lines[n // 4:]
        SERVER.pfadd("a", first)
        SERVER.pfadd("b", second)
        SERVER.cli("PFMERGE", "m", "a", "b")
        merged_redis = SERVER.get("m")
        a, b = self.sketch_of("a", first), self.sketch_of("b", second)
        self.assertEqual(SERVER.integer("PFCOUNT", "a", "b"), self.count(a, b), n)
        self.assertEqual(SERVER.integer("PFCOUNT", "m"), self.count(a, b), n)
        m = self.path("m.pkhl")
        run(["hll", "merge", m, a, b])
        self.assertEqual(self.export(m), exported, n)  # union of halves = the whole set
        from_redis = self.import_bytes("imp-m", merged_redis)
        self.assertEqual(self.export(from_redis), exported, n)
        ia, ib = self.import_bytes("imp-a", SERVER.get("a")), self.import_bytes("imp-b", SERVER.get("b"))
        self.assertEqual(self.count(ia, ib), SERVER.integer("PFCOUNT", "m"), n)
        mi = self.path("mi.pkhl")
        run(["hll", "merge", mi, ia, ib])
        self.assertEqual(self.export(mi), exported, n)

    def test_1(self):
        self.check_size(1)

    def test_100(self):
        self.check_size(100)

    def test_10000(self):
        self.check_size(10_000)

    def test_1000000(self):
        self.check_size(1_000_000)


def main():
    missing = [tool for tool in ("redis-server", "redis-cli") if shutil.which(tool) is None]
    if missing:
        message = f"{', '.join(missing)} not found (scripts/install-deps.sh installs redis-server and redis-tools)"
        if os.environ.get("CI") == "true":
            sys.exit("FAIL: " + message)
        print("SKIP: " + message)
        sys.exit(77)
    support.main()


if __name__ == "__main__":
    main()
