#!/usr/bin/env python3
"""End-to-end tests of the `probkit` command line: the built binary on generated
files. Key extraction is checked exactly against an independent model of Redis's
HyperLogLog registers (support.redis_registers); estimates against the truth."""
import fcntl
import math
import os
import random
import resource
import shutil
import signal
import stat
import subprocess
import threading
import time
import unittest

import support
from support import CliTestCase, redis_registers, run

SIGMA_P14 = 1.04 / math.sqrt(1 << 14)  # 0.0081: HLL standard error at p = 14


def lines_bytes(keys, end=b"\n"):
    return b"".join(k + end for k in keys)


def distinct_of(args, stdin=None, env=None):
    _, out, _ = run(["distinct", *args], stdin=stdin, env=env)
    return int(out.decode())


class DistinctTest(CliTestCase):
    def test_small_inputs_are_exact(self):
        for n in (1, 2, 3, 10, 50, 100):
            keys = [b"key-%d" % i for i in range(n)]
            data = lines_bytes(keys * 3)  # each key three times
            self.assertEqual(distinct_of([self.write("in.txt", data)]), n, n)
            self.assertEqual(distinct_of([], stdin=data), n, n)

    def test_large_input_within_three_standard_errors(self):
        n = 1_000_000
        data = b"".join(b"user-%07d-%d\n" % (i, i * 7919 % 1000) for i in range(n))
        f = self.write("big.txt", data)
        for args in ([f], ["--threads", "1", f], ["--hash", "redis", f]):
            est = distinct_of(args)
            self.assertLessEqual(abs(est / n - 1), 3 * SIGMA_P14, (args, est))
        # Other precisions: error scales as 1.04 / sqrt(2^p).
        for p in (10, 16):
            est = distinct_of(["--precision", p, f])
            self.assertLessEqual(abs(est / n - 1), 3 * 1.04 / math.sqrt(1 << p), (p, est))

    def test_precision_bounds_are_accepted(self):
        # Both ends of 4..18 are valid precisions.
        self.assertIn(distinct_of(["--precision", "4"], stdin=b"a\nb\n"), (1, 2))
        self.assertEqual(distinct_of(["--precision", "18"], stdin=b"a\nb\n"), 2)

    def test_empty_input(self):
        self.assertEqual(distinct_of([self.write("empty.txt", b"")]), 0)
        self.assertEqual(distinct_of([], stdin=b""), 0)
        # One empty line is one key: the empty string.
        self.assertEqual(distinct_of([], stdin=b"\n"), 1)
        self.assertEqual(self.registers_of([], stdin=b"\n\n\r\n"), redis_registers([b""]))

    def test_keys_are_lines_without_terminator(self):
        want = redis_registers([b"alpha", b"beta", b"gamma"])
        for data in (b"alpha\nbeta\ngamma\n", b"alpha\nbeta\ngamma", b"alpha\r\nbeta\r\ngamma\r\n",
                     b"alpha\r\nbeta\r\ngamma", b"alpha\nbeta\r\ngamma\n"):
            self.assertEqual(self.registers_of([], stdin=data), want, data)
            self.assertEqual(self.registers_of([], [self.write("in.txt", data)]), want, data)
        # A '\r' not followed by '\n' belongs to the key.
        self.assertEqual(self.registers_of([], stdin=b"a\rb\nc\r"), redis_registers([b"a\rb", b"c\r"]))

    def test_many_short_lines(self):
        # Up to 64 line ends in one SIMD vector: empty and one-byte keys.
        rng = random.Random(3)
        keys = [b"" if rng.random() < 0.5 else bytes([rng.randrange(97, 123)]) for _ in range(50_000)]
        keys += [b"%d" % i for i in range(300)]
        data = lines_bytes(keys)
        want = redis_registers(keys)
        self.assertEqual(self.registers_of([], stdin=data), want)
        self.assertEqual(self.registers_of([], [self.write("short.txt", data)]), want)
        self.assertEqual(distinct_of([], stdin=b"\n" * 5000 + b"x\n" * 70 + b"\r\n" * 100), 2)

    def test_binary_bytes_in_lines(self):
        rng = random.Random(5)
        alphabet = [b for b in range(256) if b != 10]
        keys = [bytes(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for _ in range(3000)]
        keys += [b"\x00", b"\x00\x00", b"\xff\xfe", b"\r\r"]
        data = lines_bytes(keys)
        want = redis_registers(k[:-1] if k.endswith(b"\r") else k for k in keys)
        self.assertEqual(self.registers_of([], stdin=data), want)
        self.assertEqual(self.registers_of([], [self.write("bin.txt", data)]), want)

    def test_inputs_larger_than_one_read_buffer(self):
        rng = random.Random(7)
        keys = [b"%x" % rng.getrandbits(rng.choice((8, 40, 90))) for _ in range(400_000)]
        data = lines_bytes(keys, b"\r\n")[:-2]  # CRLF and no final newline
        self.assertGreater(len(data), 4 << 20)  # more than one default chunk (4 MiB)
        want = redis_registers(keys)
        f = self.write("large.txt", data)
        self.assertEqual(self.registers_of([], [f]), want)
        self.assertEqual(self.registers_of([], stdin=data), want)
        # Tiny buffers put chunk ends everywhere: inside "\r\n", inside keys,
        # and lines longer than the buffer.
        small = data[:300_000]
        want_small = self.registers_of([], stdin=small)
        for size in (1, 2, 3, 7, 64, 4099):
            env = {"PROBKIT_READ_BUFFER": str(size)}
            self.assertEqual(self.registers_of([], stdin=small, env=env), want_small, size)
            self.assertEqual(self.registers_of([], [self.write("s.txt", small)], env=env), want_small, size)

    def test_environment_numbers_are_plain_digits(self):
        # strtoul took " 4" and "+4", and "-1" wrapped; an empty value is unset.
        for name, good in (("PROBKIT_THREADS", "2"), ("PROBKIT_READ_BUFFER", "7")):
            for value in ("", good):
                self.assertEqual(run(["distinct"], stdin=b"a\nb\n", env={name: value})[1], b"2\n", (name, value))
            for value in (" " + good, "+" + good, good + " ", "-1", good + "x", "0x10", "99999999999999999999"):
                self.assert_fails(["distinct"], stdin=b"a\n", env={name: value}, mentions=name)
        # Digits, and in range (docs/CLI.md): threads in [0, 4096], the worker pool's limit; a read buffer of
        # [1, 2^32] bytes. Each of these fits 64 bits, so only the range check can refuse it.
        for name, value in (("PROBKIT_THREADS", "4097"), ("PROBKIT_THREADS", "4294967297"),
                            ("PROBKIT_READ_BUFFER", "0"), ("PROBKIT_READ_BUFFER", "4294967297")):
            self.assert_fails(["distinct"], stdin=b"a\n", env={name: value}, mentions=f"{name}='{value}'")
        self.assertEqual(run(["distinct"], stdin=b"a\nb\n", env={"PROBKIT_THREADS": "4096"})[1], b"2\n")

    def test_read_buffer_is_checked_by_every_command(self):
        # Only the commands that read lines checked PROBKIT_READ_BUFFER; the others took any value, where
        # PROBKIT_THREADS failed them all.
        s, f = self.path("s.pkhl"), self.path("f.pkbf")
        run(["hll", "add", s], stdin=b"a\n")
        run(["bloom", "build", "--capacity", "10", "--fpr", "0.01", "-o", f], stdin=b"a\n")
        bench = ["bench", "--keys", "1000", "--string-keys", "100", "--absent-keys", "100", "--reps", "1"]
        for args in (["hll", "count", s], ["hll", "export", "--redis", s], ["bloom", "info", f], bench):
            self.assert_fails(args, env={"PROBKIT_READ_BUFFER": "abc"},
                              mentions="PROBKIT_READ_BUFFER='abc' is not a byte count")

    def test_long_lines(self):
        rng = random.Random(9)
        keys = [bytes(rng.randrange(97, 123) for _ in range(rng.randrange(20_000, 70_000))) for _ in range(20)]
        data = lines_bytes(keys)
        want = redis_registers(keys)
        self.assertEqual(self.registers_of([], stdin=data), want)
        self.assertEqual(self.registers_of([], stdin=data, env={"PROBKIT_READ_BUFFER": "1000"}), want)

    def test_several_files_and_stdin_dash(self):
        a = self.write("a.txt", b"1\n2\n3")  # no final newline: "3" must not join "4"
        b = self.write("b.txt", b"4\n5\n")
        self.assertEqual(self.registers_of([], [a, "-", b], stdin=b"6\n"),
                         redis_registers([b"1", b"2", b"3", b"4", b"5", b"6"]))
        self.assertEqual(distinct_of([a, b, a]), 5)

    def test_field_and_delimiter(self):
        data = b"u1,click,x\nu2,view\nu1,view,y\nu3\n,empty\n"
        self.assertEqual(self.registers_of(["--field", "1", "--delimiter", ","], stdin=data),
                         redis_registers([b"u1", b"u2", b"u1", b"u3", b""]))
        # A line with fewer fields has the empty key, as awk's $N.
        self.assertEqual(self.registers_of(["--field", "3", "--delimiter", ","], stdin=data),
                         redis_registers([b"x", b"", b"y", b"", b""]))
        tabbed = b"a\tb\r\nc\td\n"
        self.assertEqual(self.registers_of(["--field", "2"], stdin=tabbed), redis_registers([b"b", b"d"]))
        self.assertEqual(self.registers_of(["--field", "2", "--delimiter", "tab"], stdin=tabbed),
                         redis_registers([b"b", b"d"]))
        self.assertEqual(distinct_of(["--field", "2", "--delimiter", ","], stdin=data), 4)  # click view "" empty

    def test_threads_and_backends_agree(self):
        rng = random.Random(11)
        data = lines_bytes(b"%d" % rng.getrandbits(30) for _ in range(200_000))
        f = self.write("in.txt", data)
        env = {"PROBKIT_READ_BUFFER": "65536"}  # many chunks, so several workers run
        want = self.registers_of([], [f], env=env)
        for args in (["--threads", "1"], ["--threads", "2"], ["--threads", "3"], ["--threads", "0"],
                     ["--backend", "scalar"], ["--backend", "auto"]):
            self.assertEqual(self.registers_of(args, [f], env=env), want, args)
        self.assertEqual(self.registers_of([], stdin=data, env=env), want)

    def test_help(self):
        for cmd in (["distinct"], ["hll", "add"], ["hll", "count"], ["hll", "merge"], ["hll", "export"],
                    ["hll", "import"], ["bloom", "build"], ["bloom", "query"], ["bloom", "info"], ["bench"]):
            code, out, err = run([*cmd, "--help"])
            self.assertEqual(code, 0)
            self.assertIn(b"usage: probkit " + cmd[0].encode(), out)
            for common in (b"--backend", b"--threads", b"--help"):
                self.assertIn(common, out, cmd)
            self.assertEqual(err, "")
            # `probkit help CMD` is `probkit CMD --help` (it printed the top-level usage).
            self.assertEqual(run(["help", *cmd])[1], out, cmd)
        for top in (["--help"], ["hll", "--help"], ["bloom", "--help"]):
            self.assertIn(b"usage", run(top)[1])
        self.assertEqual(run(["help", "hll"])[1], run(["hll", "--help"])[1])
        # The field options are in every synopsis of a command that takes them.
        for cmd in (["distinct"], ["hll", "add"], ["bloom", "build"], ["bloom", "query"]):
            self.assertIn(b"[--field N [--delimiter C]]", run([*cmd, "--help"])[1].splitlines()[0], cmd)

    def test_names_are_read_in_any_case(self):
        # --backend SCALAR passed while --hash REDIS and --layout PARQUET_SBBF did not.
        keys = b"a\nb\n"
        for args in ((["hll", "add", "--hash", "redis"], ["hll", "add", "--hash", "REDIS"]),
                     (["bloom", "build", "--capacity", "10", "--fpr", "0.1", "--layout", "parquet_sbbf", "-o"],
                      ["bloom", "build", "--capacity", "10", "--fpr", "0.1", "--layout", "Parquet_SBBF", "-o"])):
            outs = []
            for i, a in enumerate(args):
                f = self.path("out%d" % i)
                run([*a, f], stdin=keys)
                outs.append(self.read("out%d" % i))
            self.assertEqual(outs[0], outs[1], args)


class HllTest(CliTestCase):
    def test_add_creates_then_updates(self):
        s = self.path("s.pkhl")
        run(["hll", "add", "--hash", "redis", s], stdin=b"a\nb\n")
        run(["hll", "add", s, self.write("more.txt", b"c\nb\n")])  # keeps the sketch's hash
        _, exported, _ = run(["hll", "export", "--redis", s])
        self.assertEqual(support.decode_dense(exported), redis_registers([b"a", b"b", b"c"]))
        self.assertEqual(run(["hll", "count", s])[1], b"3\n")

    def test_concurrent_adds_to_one_sketch_keep_every_key(self):
        # Two runs that read the same sketch each wrote it back with their own keys, and the first to finish
        # lost its keys. Run A reads its keys from a pipe; meanwhile run B adds to the sketch and finishes (A
        # must not hold a lock while it reads), then this test locks the sketch as a third run would, replaces
        # it, and only then lets A finish: A must wait, then merge into the replacement.
        def keys(prefix):
            return [b"%s-%d" % (prefix, i) for i in range(3000)]

        def add(sketch, key_list):
            p = subprocess.run([support.PROBKIT, "hll", "add", "--hash", "redis", sketch,
                                self.write("keys.txt", lines_bytes(key_list))], capture_output=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            os.remove(self.path("keys.txt"))

        s = self.path("s.pkhl")
        os.mkdir(self.path("elsewhere"))
        for creating in (False, True):
            with self.subTest(creating=creating):
                want = []
                if os.path.exists(s):
                    os.remove(s)
                if not creating:
                    add(s, keys(b"old"))
                    want += keys(b"old")
                with subprocess.Popen([support.PROBKIT, "hll", "add", "--hash", "redis", s], stdin=subprocess.PIPE,
                                      stderr=subprocess.PIPE) as a:
                    deadline = time.time() + 10
                    while time.time() < deadline and not any(".probkit-" in f for f in os.listdir(self.dir)):
                        time.sleep(0.02)  # A has read the sketch once it makes its output file
                    if not creating:
                        add(s, keys(b"b"))
                        want += keys(b"b")
                    # What a run about to replace the sketch holds: the sketch, or its folder while there is none.
                    held = os.open(self.dir if creating else s, os.O_RDONLY)
                    fcntl.flock(held, fcntl.LOCK_EX)
                    a.stdin.write(lines_bytes(keys(b"a")))
                    a.stdin.close()
                    want += keys(b"a")
                    time.sleep(0.3)
                    self.assertIsNone(a.poll(), "hll add replaced the sketch while another run held it")
                    c = self.path("elsewhere/c.pkhl")
                    if not creating:
                        shutil.copyfile(s, c)
                    add(c, keys(b"c"))
                    os.rename(c, s)
                    want += keys(b"c")
                    os.close(held)
                    self.assertEqual(a.wait(timeout=60), 0, a.stderr.read())
                _, exported, _ = run(["hll", "export", "--redis", s])
                self.assertEqual(support.decode_dense(exported), redis_registers(want))
                self.assert_no_stray_files(["s.pkhl", "elsewhere"])

    def test_add_to_a_sketch_replaced_by_another_kind_leaves_it(self):
        s = self.path("s.pkhl")
        run(["hll", "add", "--hash", "redis", s], stdin=b"x\n")
        with subprocess.Popen([support.PROBKIT, "hll", "add", s], stdin=subprocess.PIPE, stderr=subprocess.PIPE) as a:
            deadline = time.time() + 10
            while time.time() < deadline and not any(".probkit-" in f for f in os.listdir(self.dir)):
                time.sleep(0.02)
            os.mkdir(self.path("elsewhere"))
            run(["hll", "add", "--precision", "12", self.path("elsewhere/t.pkhl")], stdin=b"y\n")
            os.rename(self.path("elsewhere/t.pkhl"), s)
            replaced = self.read("s.pkhl")
            _, err = a.communicate(b"z\n", timeout=60)
        self.assertEqual(a.returncode, 1)
        self.assertIn("was replaced", err.decode())
        self.assertEqual(self.read("s.pkhl"), replaced)
        self.assert_no_stray_files(["s.pkhl", "elsewhere"])

    def test_count_of_several_is_the_union(self):
        a, b = self.path("a.pkhl"), self.path("b.pkhl")
        run(["hll", "add", a], stdin=lines_bytes(b"%d" % i for i in range(0, 60_000)))
        run(["hll", "add", b], stdin=lines_bytes(b"%d" % i for i in range(40_000, 100_000)))
        union = int(run(["hll", "count", a, b])[1])
        self.assertLessEqual(abs(union / 100_000 - 1), 3 * SIGMA_P14)
        both = self.path("both.pkhl")
        run(["hll", "add", both], stdin=lines_bytes(b"%d" % i for i in range(0, 100_000)))
        self.assertEqual(union, int(run(["hll", "count", both])[1]))  # max of registers is exact
        merged = self.path("m.pkhl")
        run(["hll", "merge", merged, a, b])
        self.assertEqual(self.read("m.pkhl"), self.read("both.pkhl"))

    def test_merge_folds_different_precisions(self):
        a, b = self.path("a.pkhl"), self.path("b.pkhl")
        data = lines_bytes(b"k%d" % i for i in range(50_000))
        run(["hll", "add", "--precision", "12", a], stdin=data)
        run(["hll", "add", "--precision", "16", b], stdin=data)
        n = int(run(["hll", "count", a, b])[1])
        self.assertLessEqual(abs(n / 50_000 - 1), 3 * 1.04 / 64)
        self.assertEqual(n, int(run(["hll", "count", a])[1]))  # b folded to p = 12 equals a

    def test_export_import_round_trip(self):
        s, back = self.path("s.pkhl"), self.path("back.pkhl")
        run(["hll", "add", "--hash", "redis", s], stdin=lines_bytes(b"%d" % i for i in range(5000)))
        _, exported, _ = run(["hll", "export", "--redis", s])
        self.assertEqual(len(exported), support.REDIS_DENSE_BYTES)
        run(["hll", "import", "--redis", self.write("e.bin", exported), back])
        self.assertEqual(self.read("back.pkhl"), self.read("s.pkhl"))
        # As redis-cli GET prints it: with a newline after the string.
        run(["hll", "import", "--redis", "-", back], stdin=exported + b"\n")
        self.assertEqual(self.read("back.pkhl"), self.read("s.pkhl"))

    def test_import_keeps_a_string_that_ends_in_a_newline_byte(self):
        # Only a newline that leaves no valid string is redis-cli's: a sparse string may end in the byte 0x0a, the
        # opcode ZERO of 11 registers (Redis's hyperloglog.c: 00xxxxxx, length - 1 = 10), and stripping it
        # would lose registers. Registers 0..16371 zero (XZERO 16372: 01xxxxxx yyyyyyyy, length - 1 = 0x3ff3),
        # register 16372 at 1 (VAL: 1vvvvvxx, value - 1 = 0, run - 1 = 0), 16373..16383 zero.
        header = b"HYLL" + bytes([1, 0, 0, 0]) + bytes(7) + b"\x80"  # sparse; the cached count marked stale
        sparse = header + bytes([0x7F, 0xF3, 0x80, 0x0A])
        s = self.path("s.pkhl")
        run(["hll", "import", "--redis", self.write("sparse.bin", sparse), s])
        want = bytearray(support.HLL_REGISTERS)
        want[16372] = 1
        self.assertEqual(support.decode_dense(run(["hll", "export", "--redis", s])[1]), bytes(want))

    def test_option_mismatch_with_existing_sketch(self):
        s = self.path("s.pkhl")
        run(["hll", "add", "--precision", "12", s], stdin=b"a\n")
        before = self.read("s.pkhl")
        self.assert_fails(["hll", "add", "--precision", "14", s, self.write("x.txt", b"b\n")], mentions="precision")
        self.assert_fails(["hll", "add", "--hash", "redis", s, self.path("x.txt")], mentions="hash")
        self.assertEqual(self.read("s.pkhl"), before)

    def test_count_of_a_saturated_sketch(self):
        # Every register at its maximum: the estimate is infinite, which no
        # integer holds (llround of it printed -9223372036854775808).
        redis = self.write("full.redis", support.encode_dense(bytes([51]) * support.HLL_REGISTERS))
        run(["hll", "import", "--redis", redis, self.path("full.pkhl")])
        self.assertEqual(run(["hll", "count", self.path("full.pkhl")])[1], b"inf\n")

    def test_count_of_a_nearly_saturated_sketch(self):
        # Every register one below its maximum: a finite estimate past 2^63,
        # printed whole; "inf" was printed for anything past llround's range.
        redis = self.write("near.redis", support.encode_dense(bytes([50]) * support.HLL_REGISTERS))
        run(["hll", "import", "--redis", redis, self.path("near.pkhl")])
        count = run(["hll", "count", self.path("near.pkhl")])[1]
        self.assertRegex(count, rb"^[0-9]{20}\n$")
        self.assertGreater(int(count), 2**63)

    def test_export_needs_redis_mode(self):
        s = self.path("s.pkhl")
        run(["hll", "add", s], stdin=b"a\n")
        self.assert_fails(["hll", "export", "--redis", s], mentions="--hash redis")
        self.assert_fails(["hll", "export", s], mentions="--redis")

    def test_merge_of_different_hashes_fails(self):
        a, b = self.path("a.pkhl"), self.path("b.pkhl")
        run(["hll", "add", a], stdin=b"a\n")
        run(["hll", "add", "--hash", "redis", b], stdin=b"a\n")
        self.assert_fails(["hll", "count", a, b], mentions="different hashes")
        self.assert_fails(["hll", "merge", self.path("m.pkhl"), a, b], mentions="different hashes")
        self.assert_no_stray_files(["a.pkhl", "b.pkhl"])


class BloomTest(CliTestCase):
    def build(self, keys_data, capacity, fpr="0.01", extra=()):
        f = self.path("f.pkbf")
        run(["bloom", "build", "--capacity", capacity, "--fpr", fpr, *extra, "-o", f], stdin=keys_data)
        return f

    def test_no_false_negatives_and_expected_fpr(self):
        n = 200_000
        present = [b"https://example.com/page/%d" % i for i in range(n)]
        for layout in ("cacheline512", "parquet_sbbf"):
            f = self.build(lines_bytes(present), n, extra=["--layout", layout])
            # Every inserted line is possibly present, in input order, duplicates kept.
            query = present[::-1] + present[:100]
            _, out, _ = run(["bloom", "query", "--present", f], stdin=lines_bytes(query))
            self.assertEqual(out, lines_bytes(query), layout)
            self.assertEqual(run(["bloom", "query", "--absent", f], stdin=lines_bytes(present))[1], b"")
            # Absent keys: the measured FPR is close to the filter's model.
            absent = [b"https://example.org/other/%d" % i for i in range(n)]
            _, hits, _ = run(["bloom", "query", "--present", f], stdin=lines_bytes(absent))
            _, misses, _ = run(["bloom", "query", "--absent", f], stdin=lines_bytes(absent))
            fp = hits.count(b"\n")
            self.assertEqual(fp + misses.count(b"\n"), n)
            info = dict(line.split(": ", 1) for line in run(["bloom", "info", f])[1].decode().splitlines())
            self.assertEqual(info["layout"], layout)
            expected = float(info["expected_fpr"])
            self.assertLess(expected, 0.0105)
            self.assertLessEqual(abs(fp / n - expected), 4 * math.sqrt(expected / n) + 0.1 * expected,
                                 (layout, fp / n, expected))
            self.assertLessEqual(abs(float(info["estimated_count"]) / n - 1), 0.05)
            self.assertGreater(float(info["fill_ratio"]), 0.0)
            self.assertEqual(int(info["bytes"]) * 8, int(info["bits"]))

    def test_info_of_a_large_filter_holding_one_key(self):
        # One key in 29 M bits: a fill ratio of about 2e-7, which %.6f printed
        # as 0.000000, the fill of an empty filter.
        f = self.path("one.pkbf")
        run(["bloom", "build", "--capacity", "3e6", "--fpr", "0.01", "-o", f], stdin=b"only\n")
        info = dict(line.split(": ", 1) for line in run(["bloom", "info", f])[1].decode().splitlines())
        fill = float(info["fill_ratio"])
        self.assertGreater(fill, 0.0)
        self.assertLessEqual(fill, 16 / int(info["bits"]))

    def test_query_order_crlf_and_final_line(self):
        f = self.build(b"keep\r\nalso\n", 100)
        _, out, _ = run(["bloom", "query", "--absent", f], stdin=b"new1\r\nkeep\nalso\r\nnew2\nkeep\nnew3")
        self.assertEqual(out, b"new1\nnew2\nnew3\n")

    def test_query_with_field_writes_whole_lines(self):
        f = self.build(b"u1\nu3\n", 100)
        data = b"u1,a\nu2,b\nu3,c\nu4,d\n"
        _, out, _ = run(["bloom", "query", "--absent", "--field", "1", "--delimiter", ",", f], stdin=data)
        self.assertEqual(out, b"u2,b\nu4,d\n")
        _, out, _ = run(["bloom", "query", "--present", "--field", "1", "--delimiter", ",", f, "-"], stdin=data)
        self.assertEqual(out, b"u1,a\nu3,c\n")

    def test_build_from_files_larger_than_buffer(self):
        keys = [b"%d" % (i * 2654435761 % 10**12) for i in range(300_000)]
        src = self.write("keys.txt", lines_bytes(keys))
        f = self.path("f.pkbf")
        run(["bloom", "build", "--capacity", "300000", "--fpr", "0.001", "-o", f, src],
            env={"PROBKIT_READ_BUFFER": "100000"})
        _, out, _ = run(["bloom", "query", "--absent", f, src])
        self.assertEqual(out, b"")
        # The same filter, byte for byte, whatever the buffer and thread count.
        g = self.path("g.pkbf")
        run(["bloom", "build", "--capacity", "300000", "--fpr", "0.001", "--threads", "1", "-o", g], stdin=lines_bytes(keys))
        self.assertEqual(self.read("f.pkbf"), self.read("g.pkbf"))

    def test_over_capacity_warns(self):
        code, _, err = run(["bloom", "build", "--capacity", "100", "--fpr", "0.01", "-o", self.path("f.pkbf")],
                           stdin=lines_bytes(b"%d" % i for i in range(5000)))
        self.assertEqual(code, 0)
        self.assertIn("warning", err)
        _, _, err = run(["bloom", "build", "--capacity", "100", "--fpr", "0.01", "-o", self.path("f.pkbf")],
                        stdin=lines_bytes(b"%d" % i for i in range(300)))
        self.assertIn("warning: about", err)
        # 1.5 times the capacity: the rate (about 4%) is worse than asked.
        _, _, err = run(["bloom", "build", "--capacity", "1000", "--fpr", "0.01", "-o", self.path("f.pkbf")],
                        stdin=lines_bytes(b"%d" % i for i in range(1500)))
        self.assertIn("warning: about", err)
        # Three keys in a filter for one: one whole block, whose rate (about 0.006) beats the 0.1 asked. The
        # warning said the rate was "about 0.00584, not 0.1", as if that were worse.
        _, _, err = run(["bloom", "build", "--capacity", "1", "--fpr", "0.1", "-o", self.path("f.pkbf")],
                        stdin=b"a\nb\nc\n")
        self.assertEqual(err, "")

    def test_costly_rate_is_noted(self):
        # k stops at 16, so past about 1e-9 for_capacity adds blocks: 10 keys at 1e-30 took 479 MB in silence.
        code, _, err = run(["bloom", "build", "--capacity", "100000", "--fpr", "1e-15", "-o", self.path("f.pkbf")],
                           stdin=b"a\n")
        self.assertEqual(code, 0)
        self.assertIn("note: --fpr 1e-15 at --capacity 100000 takes 6831040 bytes, 546 bits a key", err)
        self.assertIn("(a classic Bloom filter takes 72)", err)
        # Small filters, and rates the layout reaches at its usual cost, are quiet.
        for capacity, fpr, layout in (("1000", "1e-15", "cacheline512"), ("100000", "1e-6", "cacheline512"),
                                      ("100000", "1e-6", "parquet_sbbf")):
            _, _, err = run(["bloom", "build", "--capacity", capacity, "--fpr", fpr, "--layout", layout,
                             "-o", self.path("f.pkbf")], stdin=b"a\n")
            self.assertEqual(err, "", (capacity, fpr, layout))

    def test_filter_past_the_format_names_the_options(self):
        err = self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "1e-320", "-o", self.path("f.pkbf")],
                                stdin=b"a\n")
        self.assertIn("--capacity 10 at --fpr 1e-320", err)
        self.assert_no_stray_files([])

    def test_saturated_filter_warns(self):
        # Every bit set: the estimated count is infinite (the warning said the
        # false-positive rate was "about 0").
        code, _, err = run(["bloom", "build", "--capacity", "300", "--fpr", "0.01", "-o", self.path("f.pkbf")],
                           stdin=lines_bytes(b"%d" % i for i in range(100_000)))
        self.assertEqual(code, 0)
        self.assertIn("saturated", err)
        self.assertIn("false-positive rate 1", err)
        self.assertIn("expected_fpr: 1\n", run(["bloom", "info", self.path("f.pkbf")])[1].decode())

    def test_empty_filter(self):
        f = self.build(b"", 1000)
        info = run(["bloom", "info", f])[1].decode()
        self.assertIn("estimated_count: 0\n", info)
        self.assertEqual(run(["bloom", "query", "--absent", f], stdin=b"a\n\nb")[1], b"a\n\nb\n")


class BadInputTest(CliTestCase):
    def make_sketch(self):
        s = self.path("s.pkhl")
        run(["hll", "add", s], stdin=b"a\nb\n")
        return s

    def make_filter(self):
        f = self.path("f.pkbf")
        run(["bloom", "build", "--capacity", "1000", "--fpr", "0.01", "-o", f], stdin=b"a\nb\n")
        return f

    def test_missing_files(self):
        missing = self.path("nope.txt")
        self.assert_fails(["distinct", missing], mentions="nope.txt")
        self.assert_fails(["hll", "add", self.path("s.pkhl"), missing], mentions="nope.txt")
        self.assert_fails(["hll", "count", missing], mentions="nope.txt")
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "0.1", "-o", self.path("f.pkbf"), missing],
                          mentions="nope.txt")
        self.assert_fails(["bloom", "query", "--absent", missing], mentions="nope.txt")
        self.assert_fails(["bloom", "info", missing], mentions="nope.txt")
        self.assert_fails(["hll", "import", "--redis", missing, self.path("s.pkhl")], mentions="nope.txt")
        self.assert_fails(["distinct", self.dir], mentions="folder")
        self.assert_no_stray_files([])

    def test_missing_input_after_good_ones_writes_nothing(self):
        good = self.write("good.txt", b"x\n")
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "0.1", "-o", self.path("f.pkbf"), good,
                           self.path("gone.txt")])
        self.assert_fails(["hll", "add", self.path("s.pkhl"), good, self.path("gone.txt")])
        self.assert_no_stray_files(["good.txt"])

    def test_output_that_is_an_input_is_refused(self):
        # `-o keys.txt keys.txt` would replace the keys with the filter built
        # from them: refused, by any name of the file, and nothing written.
        lines = b"".join(b"key%d\n" % i for i in range(1000))
        keys = self.write("keys.txt", lines)
        os.symlink("keys.txt", self.path("link.txt"))
        os.link(keys, self.path("hard.txt"))
        other = self.write("other.txt", b"x\n")
        build = ["bloom", "build", "--capacity", "1000", "--fpr", "0.01", "-o"]
        for out, inputs in ((keys, [keys]), (self.path("link.txt"), [keys]), (self.path("hard.txt"), [other, keys]),
                            (keys, [other, "-", self.path("link.txt")])):
            self.assert_fails(build + [out] + inputs, stdin=b"y\n", mentions="is an input and the output")
        sketch = self.make_sketch()
        before = self.read("s.pkhl")
        self.assert_fails(["hll", "add", sketch, other, sketch], mentions="'%s' is an input" % sketch)
        # Standard input redirected from the output file (`< keys.txt`).
        for args in (build + [keys], ["hll", "add", sketch]):
            target = keys if args[0] == "bloom" else sketch
            with open(target, "rb") as stdin:
                p = subprocess.run([support.PROBKIT, *args], stdin=stdin, capture_output=True)
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn("standard input is an input and the output", p.stderr.decode())
        self.assertEqual(self.read("keys.txt"), lines)
        self.assertEqual(self.read("s.pkhl"), before)
        self.assert_no_stray_files(["hard.txt", "keys.txt", "link.txt", "other.txt", "s.pkhl"])
        # An output that is none of the inputs is written as before. (Not
        # /dev/null: a regression must not replace the machine's; devices are
        # test_output_to_pipes_and_long_names's, with pipes of its own.)
        run(build + [self.path("f.pkbf"), keys])
        run(build + [self.path("f.pkbf"), keys])  # replacing an existing output that is not an input
        run(["hll", "add", sketch, other])

    def test_bad_numbers(self):
        out = self.path("f.pkbf")
        for args, what in ((["distinct", "--precision", "abc"], "--precision"),
                           (["distinct", "--precision", "19"], "--precision"),
                           (["distinct", "--precision", "3"], "--precision"),
                           (["distinct", "--threads", "two"], "--threads"),
                           (["distinct", "--threads", "-1"], "--threads"),
                           # Past the pool's 4096, in 64 bits: 2^32 + 1 cast to unsigned would read as 1 thread.
                           (["distinct", "--threads", "4097"], "--threads"),
                           (["distinct", "--threads", "4294967297"], "--threads"),
                           (["distinct", "--field", "0"], "--field"),
                           (["distinct", "--field", "1x"], "--field"),
                           (["bloom", "build", "--capacity", "0", "--fpr", "0.01", "-o", out], "--capacity"),
                           (["bloom", "build", "--capacity", "-5", "--fpr", "0.01", "-o", out], "--capacity"),
                           (["bloom", "build", "--capacity", "1.5", "--fpr", "0.01", "-o", out], "--capacity"),
                           (["bloom", "build", "--capacity", "", "--fpr", "0.01", "-o", out], "--capacity"),
                           (["bloom", "build", "--capacity", "10", "--fpr", "1", "-o", out], "--fpr"),
                           (["bloom", "build", "--capacity", "10", "--fpr", "0", "-o", out], "--fpr"),
                           (["bloom", "build", "--capacity", "10", "--fpr", "nan", "-o", out], "--fpr"),
                           (["bloom", "build", "--capacity", "10", "--fpr", "0.1x", "-o", out], "--fpr"),
                           (["bench", "--keys", "0"], "--keys"),
                           # Only plain decimals: strtod alone took these.
                           (["distinct", "--precision", "0x10"], "--precision"),
                           (["distinct", "--precision", " 14"], "--precision"),
                           (["distinct", "--precision", "+14"], "--precision"),
                           (["bloom", "build", "--capacity", "1e", "--fpr", "0.01", "-o", out], "--capacity"),
                           (["bloom", "build", "--capacity", "10", "--fpr", "0x1p-4", "-o", out], "--fpr"),
                           (["bloom", "build", "--capacity", "10", "--fpr", " 0.1", "-o", out], "--fpr"),
                           (["bloom", "build", "--capacity", "10", "--fpr", ".", "-o", out], "--fpr"),
                           # Whole numbers exactly, not as strtod rounds them: these passed as 5, 1001, 0 and 0.
                           (["distinct", "--precision", "4.99999999999999999999"], "--precision"),
                           (["bloom", "build", "--capacity", "1000.00000000000000001", "--fpr", "0.01", "-o", out],
                            "--capacity"),
                           (["distinct", "--threads", "1e-400"], "--threads"),
                           (["distinct", "--threads", "-0"], "--threads"),
                           (["distinct", "--threads", "1.8446744073709551616e19"], "--threads")):
            self.assert_fails(args, stdin=b"a\n", mentions=what)
        self.assert_no_stray_files([])
        # A range is shown as written, not as "(0.000000, 1.000000)".
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "2", "-o", out], mentions="in (0, 1)")
        # Inside the range as written, but not as a double: the message says
        # so ("is not a number in (0, 1)" read as if 1e-400 were no number).
        for fpr, bound in (("1e-400", "0"), ("0.99999999999999999", "1")):
            self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", fpr, "-o", out],
                              mentions=f"'{fpr}' rounds to {bound} as a double, which is not in (0, 1)")
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "1.0", "-o", out],
                          mentions="'1.0' is not a number in (0, 1)")
        # What people write still works.
        for capacity, fpr in (("1e6", "0.001"), ("1000", "1e-3"), ("2.5e3", ".05"), ("1E4", "5E-2")):
            run(["bloom", "build", "--capacity", capacity, "--fpr", fpr, "-o", out], stdin=b"a\n")
        keys = lines_bytes(b"%d" % i for i in range(1000))
        want = run(["distinct", "--precision", "5"], stdin=keys)[1]
        for five in ("5.0", "5e0", "0.5e1", "50e-1", "0005.000"):
            self.assertEqual(run(["distinct", "--precision", five], stdin=keys)[1], want, five)

    def test_bad_options_and_operands(self):
        self.assert_fails([], mentions="command")
        self.assert_fails(["frobnicate"], mentions="frobnicate")
        self.assert_fails(["distinct", "--bogus"], mentions="--bogus")
        # A switch takes no value: --absent=no read as --absent would write the lines it was told not to.
        self.assert_fails(["bloom", "query", "--absent=no", self.path("f.pkbf")], stdin=b"a\n",
                          mentions="option --absent takes no value")
        self.assert_fails(["distinct", "--help=1"], mentions="option --help takes no value")
        # An option given twice is refused, not settled silently by the last one (nor by the first).
        self.assert_fails(["distinct", "--precision", "12", "--precision=14"], mentions="--precision given twice")
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "0.1", "-o", self.path("a.pkbf"), "-o",
                           self.path("b.pkbf")], stdin=b"a\n", mentions="--output given twice")
        self.assert_fails(["distinct", "--precision"], mentions="--precision")
        self.assert_fails(["distinct", "--hash", "md5"], mentions="md5")
        self.assert_fails(["distinct", "--backend", "quantum"], mentions="quantum")
        self.assert_fails(["distinct", "--delimiter", ","], mentions="--field")
        self.assert_fails(["distinct", "--field", "1", "--delimiter", ",,"], mentions="--delimiter")
        # A line never holds its own end: every field past the first was the empty key.
        self.assert_fails(["distinct", "--field", "2", "--delimiter", "\n"], stdin=b"a\n", mentions="--delimiter")
        self.assert_fails(["hll"], mentions="subcommand")
        self.assert_fails(["hll", "fold"], mentions="fold")
        self.assert_fails(["hll", "add"], mentions="SKETCH")
        self.assert_fails(["hll", "merge", self.path("out.pkhl")], mentions="SKETCH")
        self.assert_fails(["bloom", "query", self.path("f.pkbf")], mentions="--absent")
        self.assert_fails(["bloom", "query", "--absent", "--present", self.path("f.pkbf")], mentions="--absent")
        self.assert_fails(["bloom", "build", "--fpr", "0.1", "-o", self.path("f.pkbf")], mentions="--capacity")
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "0.1"], mentions="-o")
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "0.1", "--layout", "x", "-o",
                           self.path("f.pkbf")], mentions="--layout")
        self.assert_no_stray_files([])

    def test_corrupt_and_truncated_files(self):
        s, f = self.make_sketch(), self.make_filter()
        sketch, filt = self.read("s.pkhl"), self.read("f.pkbf")
        cases = {
            "flipped.pkhl": sketch[:100] + bytes([sketch[100] ^ 1]) + sketch[101:],
            "truncated.pkhl": sketch[:-1],
            "short.pkhl": sketch[:10],
            "empty.pkhl": b"",
            "garbage.pkhl": b"not a sketch at all\n" * 10,
        }
        for name, data in cases.items():
            self.write(name, data)
            self.assert_fails(["hll", "count", self.path(name)], mentions=name)
            self.assert_fails(["hll", "export", "--redis", self.path(name)], mentions=name)
            # Adding to a corrupt sketch fails and leaves it as it was.
            self.assert_fails(["hll", "add", self.path(name)], stdin=b"x\n", mentions=name)
            self.assertEqual(self.read(name), data)
        fcases = {
            "flipped.pkbf": filt[:200] + bytes([filt[200] ^ 0x40]) + filt[201:],
            "truncated.pkbf": filt[: len(filt) // 2],
            "grown.pkbf": filt + b"\0",
        }
        for name, data in fcases.items():
            self.write(name, data)
            self.assert_fails(["bloom", "query", "--absent", self.path(name)], stdin=b"a\n", mentions=name)
            self.assert_fails(["bloom", "info", self.path(name)], mentions=name)
        # Sparse runs covering 2 x 16384 registers: Redis rejects it, so must we.
        self.write("bad-redis.bin", b"HYLL\x01\0\0\0" + b"\0" * 8 + b"\x7f\xff\x7f\xff")
        self.assert_fails(["hll", "import", "--redis", self.path("bad-redis.bin"), self.path("out.pkhl")],
                          mentions="Redis")
        self.assertFalse(os.path.exists(self.path("out.pkhl")))
        self.assertEqual(sorted(os.listdir(self.dir)),
                         sorted(["s.pkhl", "f.pkbf", "bad-redis.bin", *cases, *fcases]))

    def test_wrong_kind(self):
        s, f = self.make_sketch(), self.make_filter()
        self.assert_fails(["bloom", "query", "--absent", s], stdin=b"a\n", mentions="HyperLogLog sketch, not a")
        self.assert_fails(["bloom", "info", s], mentions="not a probkit Bloom filter")
        self.assert_fails(["hll", "count", f], mentions="Bloom filter, not a")
        self.assert_fails(["hll", "add", f], stdin=b"a\n", mentions="Bloom filter")
        redis = self.path("r.bin")
        run(["hll", "add", "--hash", "redis", self.path("r.pkhl")], stdin=b"a\n")
        with open(redis, "wb") as out:
            out.write(run(["hll", "export", "--redis", self.path("r.pkhl")])[1])
        self.assert_fails(["hll", "count", redis], mentions="hll import")
        self.assert_fails(["hll", "import", "--redis", s, self.path("x.pkhl")], mentions="Redis")
        self.assertFalse(os.path.exists(self.path("x.pkhl")))

    def test_unwritable_output(self):
        self.assert_fails(["bloom", "build", "--capacity", "10", "--fpr", "0.1", "-o",
                           self.path("no/such/dir/f.pkbf")], stdin=b"a\n", mentions="no/such/dir")
        self.assert_fails(["hll", "merge", self.path("missing-dir/m.pkhl"), self.make_sketch()],
                          mentions="missing-dir")

    def test_output_through_links_keeps_them_and_its_mode(self):
        real = self.make_sketch()  # a, b
        link = self.path("link.pkhl")
        os.symlink("s.pkhl", link)
        run(["hll", "add", link], stdin=b"c\n")
        self.assertTrue(os.path.islink(link), "the link was replaced by a file")
        self.assertEqual(run(["hll", "count", real])[1], b"3\n")
        os.chmod(real, 0o600)
        run(["hll", "add", real], stdin=b"d\n")
        self.assertEqual(os.stat(real).st_mode & 0o777, 0o600, "a private sketch was made world-readable")
        dangling = self.path("later.pkhl")
        os.symlink("made-later.pkhl", dangling)
        run(["hll", "add", dangling], stdin=b"x\n")
        self.assertTrue(os.path.islink(dangling))
        self.assertEqual(run(["hll", "count", self.path("made-later.pkhl")])[1], b"1\n")

    def test_read_only_output_is_refused(self):
        sketch = self.make_sketch()
        before = self.read("s.pkhl")
        os.chmod(sketch, 0o444)
        as_user = None
        if os.geteuid() == 0:  # root may write anything: run as nobody, as the shell's `>` would refuse
            os.chmod(self.dir, 0o777)
            as_user = lambda: (os.setgid(65534), os.setuid(65534))
        p = subprocess.run([support.PROBKIT, "hll", "add", sketch], input=b"z\n", capture_output=True,
                           preexec_fn=as_user)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("Permission denied", p.stderr.decode())
        self.assertEqual(self.read("s.pkhl"), before)
        self.assertEqual(os.stat(sketch).st_mode & 0o777, 0o444)
        self.assert_no_stray_files(["s.pkhl"])

    def test_output_to_pipes_and_long_names(self):
        # A pipe is written in place. (Only pipes of this test's own: a
        # regression must not replace the machine's /dev/stdout or /dev/null,
        # as the old rename did when run as root.)
        args = ["bloom", "build", "--capacity", "1000", "--fpr", "0.01", "-o"]
        keys = b"a\nb\nc\n"
        run(args + [self.path("f.pkbf")], stdin=keys)
        self.assertEqual(run(args + ["/dev/fd/1"], stdin=keys)[1], self.read("f.pkbf"))
        # "-" is standard output for every output file, as it is standard
        # input for the inputs; hll add, which rewrites its SKETCH, refuses it.
        self.assertEqual(run(args + ["-"], stdin=keys)[1], self.read("f.pkbf"))
        run(["hll", "add", self.path("s.pkhl")], stdin=keys)
        self.assertEqual(run(["hll", "merge", "-", self.path("s.pkhl")])[1], self.read("s.pkhl"))
        self.assert_fails(["hll", "add", "-"], stdin=keys, mentions="'-' is not one")
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the filter's 1320 bytes fit the pipe's buffer
        try:
            run(args + [fifo], stdin=keys)
            self.assertEqual(os.read(reader, 1 << 16), self.read("f.pkbf"))
        finally:
            os.close(reader)
        self.assertTrue(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a file")
        long_name = "n" * 250 + ".pkbf"  # 255 bytes: the temporary file's name must still fit
        run(args + [self.path(long_name)], stdin=keys)
        self.assertEqual(self.read(long_name), self.read("f.pkbf"))
        self.assert_no_stray_files(["f.pkbf", "s.pkhl", "fifo", long_name])

    def test_closed_stdin_is_not_read_from_a_file(self):
        # With descriptor 0 closed, opening the sketch or filter file gets 0:
        # it used to be taken for standard input, read to its end and kept.
        sketch, bloom = self.make_sketch(), self.make_filter()
        before = self.read("s.pkhl")
        for args in (["hll", "add", sketch], ["bloom", "query", "--absent", bloom]):
            p = subprocess.run([support.PROBKIT, *args], capture_output=True, preexec_fn=lambda: os.close(0))
            self.assertEqual(p.returncode, 1, (args, p.stderr))
            self.assertIn("standard input", p.stderr.decode())
        self.assertEqual(self.read("s.pkhl"), before)

    def test_closed_stdout(self):
        # With descriptor 1 closed, the first input opened got it:
        # `-o /dev/stdout` then resolved to that input and replaced it with the
        # filter, and `-o -` read the whole input before failing.
        keys = self.write("in.txt", b"a\nb\n")
        build = [support.PROBKIT, "bloom", "build", "--capacity", "100", "--fpr", "0.01", "-o"]
        for out in ("/dev/stdout", "-"):
            p = subprocess.run(build + [out, keys], capture_output=True, preexec_fn=lambda: os.close(1))
            self.assertEqual(self.read("in.txt"), b"a\nb\n", f"-o {out} replaced the input")
            self.assertEqual(p.returncode, 1, (out, p.stderr))
            self.assertIn("cannot write standard output" if out == "-" else "cannot write '/dev/stdout'",
                          p.stderr.decode())
        # A closed standard input named by path fails too (/dev/null in its
        # place would have read as empty).
        p = subprocess.run([support.PROBKIT, "distinct", "/dev/stdin"], capture_output=True,
                           preexec_fn=lambda: os.close(0))
        self.assertEqual(p.returncode, 1, p.stdout)
        self.assertIn("/dev/stdin", p.stderr.decode())
        # A write error on "-" names standard output, not a file called '-'.
        sketch = self.make_sketch()
        with open("/dev/full", "wb") as full:
            p = subprocess.run([support.PROBKIT, "hll", "merge", "-", sketch], stdout=full, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot write standard output", p.stderr.decode())
        self.assert_no_stray_files(["in.txt", "s.pkhl"])
        # Output written at exit says why it failed, as the output written
        # as it goes does (it said "cannot write standard output" alone).
        for args in (["hll", "count", sketch], ["distinct", self.path("in.txt")]):
            with open("/dev/full", "wb") as full:
                p = subprocess.run([support.PROBKIT, *args], stdout=full, stderr=subprocess.PIPE)
            self.assertEqual(p.returncode, 1, args)
            self.assertEqual(p.stderr.decode(), "probkit: cannot write standard output: No space left on device\n",
                             args)

    def test_filter_header_errors_come_before_its_length(self):
        # Trailing bytes after a header wrong in another field: the field's
        # message, not "more than the N bytes its header gives".
        good = self.read(os.path.basename(self.make_filter()))
        for offset, value, message in ((4, 2, "unsupported format version 2"), (7, 0, "k = 0 is outside"), (12, 1, "reserved byte 12"),
                                       (8, 9, "unknown hash kind 9")):
            bad = bytearray(good)
            bad[offset] = value
            path = self.write("bad.pkbf", bytes(bad) + b"x" * 100)
            self.assert_fails(["bloom", "info", path], mentions=message)

    def test_input_that_shrinks_while_read(self):
        # Files are read through memory mappings; one truncated meanwhile (log
        # rotation's copytruncate) used to kill probkit with SIGBUS, leaving
        # the output's temporary file behind. probkit is stopped mid-read,
        # the file truncated, and probkit continued.
        for lines in (4_000_000, 16_000_000):
            big = self.write("big.txt", b"".join(b"key-%d\n" % i for i in range(lines)))
            p = subprocess.Popen([support.PROBKIT, "hll", "add", "--threads", "1", self.path("s.pkhl"), big],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            deadline = time.time() + 10
            while time.time() < deadline and not any(".probkit-" in f for f in os.listdir(self.dir)):
                time.sleep(0.005)
            time.sleep(0.05)  # into the file
            p.send_signal(signal.SIGSTOP)
            running = p.poll() is None
            os.truncate(big, 0)
            p.send_signal(signal.SIGCONT)
            code = p.wait(timeout=60)
            err = p.stderr.read().decode()
            if not running or code == 0:  # it had read everything already: try a larger file
                if os.path.exists(self.path("s.pkhl")):
                    os.remove(self.path("s.pkhl"))
                continue
            self.assertEqual(code, 1, err)
            self.assertIn("'%s': it shrank while it was read" % big, err)
            self.assert_no_stray_files(["big.txt"])
            return
        self.skipTest("probkit read 16 million lines before it could be stopped")

    def run_short_of_memory(self, args):
        """Runs probkit where an allocation of 200 GiB or more must fail: under an 8 GiB
        address-space limit (whatever the allocator or the overcommit policy), or, for a
        sanitizer build, which maps terabytes of shadow memory, where the kernel's overcommit
        heuristic refuses it, with the sanitizer's allocator told to return null rather than
        stop. Returns run()'s (code, stdout, stderr)."""
        with open(support.PROBKIT, "rb") as f:
            binary = f.read()
        if b"__asan_init" not in binary and b"__tsan_init" not in binary:
            limit = 8 << 30
            p = subprocess.run([support.PROBKIT] + [str(a) for a in args], capture_output=True, timeout=600,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
            return p.returncode, p.stdout, p.stderr.decode("utf-8", "replace")
        try:
            with open("/proc/sys/vm/overcommit_memory") as f:
                overcommit = f.read().strip()
            with open("/proc/meminfo") as f:
                meminfo = {line.split(":")[0]: int(line.split()[1]) for line in f}
        except OSError as e:
            self.skipTest(f"a sanitizer build, and no /proc to tell whether 200 GiB can be allocated: {e}")
        if overcommit == "1" or meminfo["MemTotal"] + meminfo.get("SwapTotal", 0) > (150 << 20):
            self.skipTest(f"a sanitizer build, and 200 GiB may be granted here (vm.overcommit_memory={overcommit}, "
                          f"{meminfo['MemTotal'] >> 20} GiB memory)")
        env = {name: os.environ.get(name, "") + ":allocator_may_return_null=1" for name in ("ASAN_OPTIONS", "TSAN_OPTIONS")}
        return run(args, env=env, check=False)

    def assert_fails_short_of_memory(self, args, mentions):
        code, out, err = self.run_short_of_memory(args)
        self.assertEqual(code, 1, f"probkit {args}: expected exit 1, got {code}; stderr: {err!r}")
        self.assertEqual(out, b"")
        self.assertEqual(len(err.splitlines()), 1, err)
        self.assertIn(mentions, err)
        return err

    def test_filter_too_large_for_memory(self):
        # A well-formed file whose filter needs more memory than there is is
        # not called invalid: its header may be honest. 2^32 - 1 blocks,
        # 256 GiB, in a sparse file of that length.
        self.make_filter()
        header = bytearray(self.read("f.pkbf")[:32])
        num_blocks = (1 << 32) - 1
        header[24:32] = num_blocks.to_bytes(8, "little")
        big = self.write("big.pkbf", bytes(header))
        try:
            os.truncate(big, 32 + 64 * num_blocks + 8)
        except OSError as e:
            self.skipTest(f"this file system holds no 256 GiB sparse file: {e}")
        if os.stat(big).st_blocks * 512 > (1 << 20):
            self.skipTest("this file system does not keep the 256 GiB file sparse")
        err = self.assert_fails_short_of_memory(["bloom", "info", big],
                                                f"needs {64 * num_blocks} bytes, more than can be allocated")
        self.assertIn(f"cannot load the Bloom filter in '{big}'", err)
        self.assertNotIn("not a valid", err)
        # Building one that does not fit names what was asked for (it said only "cannot allocate N bytes").
        err = self.assert_fails_short_of_memory(
            ["bloom", "build", "--capacity", "200000000000", "--fpr", "0.01", "-o", self.path("huge.pkbf"), "/dev/null"],
            "bloom build: a filter for --capacity 200000000000 at --fpr 0.01 does not fit in memory: cannot allocate")
        self.assert_no_stray_files(["f.pkbf", "big.pkbf"])

    def test_endless_sketch_input_stops(self):
        # No sketch file is larger than 1 MiB: reading one stops there (it
        # read /dev/zero, or `yes`, until memory ran out).
        self.assert_fails(["hll", "count", "/dev/zero"], mentions="more than 1048576 bytes")
        self.assert_fails(["hll", "import", "--redis", "-", self.path("x.pkhl")], stdin=b"y\n" * 600_000,
                          mentions="not a Redis HyperLogLog string")
        self.assert_no_stray_files([])

    def test_filter_input_stops_where_its_header_says(self):
        # A filter file was read whole, however long: `bloom query /dev/zero`
        # until memory ran out. A regular file must have the length its header
        # gives; a pipe is read to that length and one byte more; without a
        # filter header, 64 bytes are read.
        bloom = self.make_filter()
        good = self.read("f.pkbf")
        query = ["bloom", "query", "--present"]
        self.assert_fails(query + ["/dev/zero"], mentions="bad magic")
        self.write("long.pkbf", good + b"\0")
        self.assert_fails(query + [self.path("long.pkbf")], mentions=f"holds {len(good) + 1} bytes, not the {len(good)}")
        self.assertEqual(run(query + [bloom], stdin=b"a\n")[0], 0)
        # Standard input, a file already partly read: its length is what is left.
        self.write("prefixed.bin", b"abc\n" + good)
        with open(self.path("prefixed.bin"), "rb") as f:
            f.seek(4)
            p = subprocess.run([support.PROBKIT, "bloom", "info", "-"], stdin=f, capture_output=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        # A pipe with a valid header and then 64 MiB: probkit must close it
        # long before the writer is done (bounded, so that a regression fails
        # instead of eating the machine's memory).
        fifo = self.path("fifo")
        os.mkfifo(fifo)
        written = [0]

        def feed():
            try:
                with open(fifo, "wb") as w:
                    w.write(good[:32])
                    zeros = bytes(1 << 20)
                    for _ in range(64):
                        w.write(zeros)
                        written[0] += len(zeros)
            except BrokenPipeError:
                pass

        writer = threading.Thread(target=feed, daemon=True)  # never keeps the test process alive
        writer.start()
        try:
            self.assert_fails(query + [fifo], stdin=b"", mentions=f"more bytes follow the {len(good)}")
        finally:
            writer.join(timeout=60)
        self.assertLess(written[0], 8 << 20, "probkit read on past the filter's length")
        # A header that claims 1 GiB in front of 8 bytes: "truncated", without
        # taking the gigabyte (the bitset's memory is taken as bytes arrive).
        claim = bytearray(good[:32])
        claim[24:32] = (1 << 24).to_bytes(8, "little")
        p = subprocess.Popen([support.PROBKIT, "bloom", "info", "-"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
        p.stdin.write(bytes(claim) + bytes(8))
        p.stdin.close()
        err = p.stderr.read().decode()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        self.assertEqual(p.returncode, 1, err)
        self.assertIn("truncated", err)
        self.assertLess(usage.ru_maxrss, 200 << 10, f"{usage.ru_maxrss} KiB for a 40-byte input")

    def test_backend_cuda_on_host_fails_cleanly(self):
        # The file commands keep their sketches in host memory: the CLI says so (it passed on the library's
        # "cannot serve a host-resident object; move it with to_device() first"). bench runs CUDA where it can.
        only_bench = "this command runs on the CPU (scalar or simd); only `probkit bench` runs the CUDA backend"
        self.assert_fails(["distinct", "--backend", "cuda"], stdin=b"a\n", mentions="--backend cuda: " + only_bench)
        self.assert_fails(["hll", "add", self.path("s.pkhl")], stdin=b"a\n", env={"PROBKIT_BACKEND": "CUDA"},
                          mentions="PROBKIT_BACKEND=cuda: " + only_bench)
        self.assert_no_stray_files([])
        code, out, err = run(["bench", "--backend", "cuda", "--keys", "1000", "--string-keys", "100", "--absent-keys",
                              "100", "--reps", "1"], check=False)
        self.assertEqual(code, 0, err)
        self.assertRegex(out.decode(), r"\ncuda +(not available|[0-9])")

    def test_bad_backend_environment_fails_whatever_the_input(self):
        # PROBKIT_BACKEND and PROBKIT_SIMD_TARGET are checked before any input is read: an empty input (no batch
        # for the library to check them at) and bench (which names its backends) passed a misspelt name.
        bench = ["bench", "--keys", "1000", "--string-keys", "100", "--absent-keys", "100", "--reps", "1"]
        for env, mentions in (({"PROBKIT_BACKEND": "bogus"}, "PROBKIT_BACKEND: unknown backend 'bogus'"),
                              ({"PROBKIT_SIMD_TARGET": "bogus"},
                               "PROBKIT_SIMD_TARGET: SIMD target BOGUS is not compiled into probkit")):
            for stdin in (b"", b"a\n"):
                self.assert_fails(["distinct"], stdin=stdin, env=env, mentions=mentions)
            self.assert_fails(bench, env=env, mentions=mentions)
        # A backend named on the command line is what runs: the library reads neither variable then.
        code, out, err = run(["distinct", "--backend", "scalar"], stdin=b"a\n",
                             env={"PROBKIT_BACKEND": "bogus", "PROBKIT_SIMD_TARGET": "bogus"}, check=False)
        self.assertEqual((code, out), (0, b"1\n"), err)

    @unittest.skipIf(os.environ.get("PROBKIT_SANITIZER") == "thread",
                     "under ThreadSanitizer (scripts/test-sanitize.sh --thread) a signal to a thread blocked on a "
                     "lock waits until the lock is taken, here until more input comes")
    def test_interrupted_build_leaves_no_file(self):
        # The output's temporary file exists while the input is read; a signal
        # then must remove it (and leave an existing output untouched).
        run(["hll", "add", self.path("s.pkhl")], stdin=b"a\n")
        sketch = self.read("s.pkhl")
        # Beyond INT, TERM and HUP, every signal whose default ends the process (QUIT, PIPE, USR1, ALRM, ...
        # left the file behind); no core file (QUIT) in the test's folder.
        build = ["bloom", "build", "--capacity", "1000", "--fpr", "0.01", "-o", self.path("f.pkbf")]
        add = ["hll", "add", self.path("s.pkhl")]
        for sig, args in ((signal.SIGTERM, build), (signal.SIGINT, add), (signal.SIGQUIT, add), (signal.SIGPIPE, build),
                          (signal.SIGUSR1, add), (signal.SIGALRM, build)):
            p = subprocess.Popen([support.PROBKIT, *args], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL,
                                 preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_CORE, (0, 0)))
            p.stdin.write(b"a\nb\n")
            p.stdin.flush()
            deadline = time.time() + 10
            while time.time() < deadline and not any(".probkit-" in f for f in os.listdir(self.dir)):
                time.sleep(0.02)
            self.assertTrue(any(".probkit-" in f for f in os.listdir(self.dir)), "no temporary file while reading")
            p.send_signal(sig)
            p.wait(timeout=10)
            p.stdin.close()
            self.assertEqual(p.returncode, -sig)
            self.assert_no_stray_files(["s.pkhl"])
            self.assertEqual(self.read("s.pkhl"), sketch)


    def test_file_size_limit_is_an_error_that_leaves_no_file(self):
        # Past `ulimit -f`, SIGXFSZ ended the process with the temporary file left behind; ignored, the write
        # fails with EFBIG and the error path removes it.
        keys = self.write("keys.txt", b"".join(b"%d\n" % i for i in range(200_000)))
        p = subprocess.run([support.PROBKIT, "bloom", "build", "--capacity", "1000000", "--fpr", "0.01", "-o",
                            self.path("f.pkbf"), keys], capture_output=True, timeout=120,
                           preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (10 << 10, 10 << 10)))
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(b"cannot write '%s': File too large" % self.path("f.pkbf").encode(), p.stderr)
        self.assert_no_stray_files(["keys.txt"])

    def test_output_naming_an_open_descriptor_is_written_through_it(self):
        # -o /dev/stdout (or /dev/fd/N) means the descriptor as it is open: appended to a log (the file used to be
        # replaced, the log lost), and twice into one redirection (the second run wrote beside a deleted file).
        run(["hll", "add", self.path("s.pkhl")], stdin=b"a\nb\n")
        sketch = self.read("s.pkhl")
        log = self.write("log.txt", b"a line to keep\n")
        for name in ("/dev/stdout", "/proc/self/fd/1", "/dev/fd/1"):
            with open(log, "ab") as out:
                subprocess.run([support.PROBKIT, "hll", "merge", name, self.path("s.pkhl")], stdout=out, check=True,
                               timeout=60)
        self.assertEqual(self.read("log.txt"), b"a line to keep\n" + sketch * 3)
        self.assert_no_stray_files(["s.pkhl", "log.txt"])

    def test_input_that_shrinks_within_its_last_page(self):
        # Bytes between a file's new end and the end of its page read as zeros, with no SIGBUS: the build took
        # them for keys and succeeded. probkit maps the input, then blocks opening its FIFO output until the test
        # has truncated the file and opens the FIFO's other end.
        keys = self.write("keys.txt", b"".join(b"k%04d\n" % i for i in range(1000)))  # 6000 bytes, two pages
        fifo = self.path("out.fifo")
        os.mkfifo(fifo)
        p = subprocess.Popen([support.PROBKIT, "bloom", "build", "--capacity", "2000", "--fpr", "0.001", "-o", fifo,
                              keys], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        def mapped():
            with open(f"/proc/{p.pid}/maps") as maps:
                return keys in maps.read()

        deadline = time.time() + 30
        while time.time() < deadline and not mapped():
            time.sleep(0.01)
        self.assertTrue(mapped(), "the input was never mapped")
        os.truncate(keys, 5000)
        with open(fifo, "rb") as f:
            written = f.read()
        code = p.wait(timeout=60)
        err = p.stderr.read().decode()
        self.assertEqual(code, 1, err)
        self.assertIn("'%s': it shrank while it was read" % keys, err)
        self.assertEqual(written, b"", "a filter was written from the lost bytes")

    def test_standard_input_file_is_read_once(self):
        # A regular file on standard input is read as a pipe is: once, however many "-" name it, and left at its
        # end for whoever reads standard input next.
        run(["bloom", "build", "--capacity", "100", "--fpr", "0.01", "-o", self.path("empty.pkbf")], stdin=b"")
        two = self.write("two.txt", b"a\nb\n")
        with open(two, "rb") as f:
            out = subprocess.run([support.PROBKIT, "bloom", "query", "--absent", self.path("empty.pkbf"), "-", "-"],
                                 stdin=f, capture_output=True, check=True, timeout=60).stdout
        self.assertEqual(out, b"a\nb\n")
        with open(two, "rb") as f:
            out = subprocess.run(["sh", "-c", '"$0" bloom query --absent "$1"; cat', support.PROBKIT,
                                  self.path("empty.pkbf")], stdin=f, capture_output=True, check=True,
                                 timeout=60).stdout
        self.assertEqual(out, b"a\nb\n")

    @unittest.skipIf(os.geteuid() != 0, "needs root to run probkit as another user")
    def test_replaced_file_keeps_its_group_and_mode(self):
        # Replacing a file owned by someone else: the user cannot give it to its owner, but (a member of its
        # group) can keep its group, which was lost with write access for the group. As root, the mode is set
        # after the owner, so a change of owner does not clear the set-ID bits.
        at = os.path.realpath(support.PROBKIT)
        while at != "/":
            if not os.stat(at).st_mode & stat.S_IXOTH:
                self.skipTest(f"another user cannot run {support.PROBKIT} ({at} is not open to others)")
            at = os.path.dirname(at)
        run(["hll", "add", self.path("shared.pkhl")], stdin=b"a\n")
        shared = self.path("shared.pkhl")
        os.chmod(self.dir, 0o777)
        os.chown(shared, 0, 4321)
        os.chmod(shared, 0o664)

        def as_group_member():
            os.setgroups([4321])
            os.setgid(65534)
            os.setuid(65534)

        subprocess.run([support.PROBKIT, "hll", "add", shared], input=b"b\n", check=True, timeout=60,
                       preexec_fn=as_group_member)
        st = os.stat(shared)
        self.assertEqual((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)), (65534, 4321, 0o664))
        os.chown(shared, 0, 4321)
        os.chmod(shared, 0o6775)
        run(["hll", "add", shared], stdin=b"c\n")
        st = os.stat(shared)
        self.assertEqual((st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)), (0, 4321, 0o6775))

    @unittest.skipIf(os.environ.get("PROBKIT_SANITIZER") == "thread",
                     "under ThreadSanitizer a signal to a thread blocked on a lock waits until the lock is taken")
    def test_hangup_ignored_at_start_stays_ignored(self):
        # nohup, or a shell's background job: the caller chose to survive the
        # signal, and the output must still be written.
        p = subprocess.Popen([support.PROBKIT, "hll", "add", self.path("s.pkhl")], stdin=subprocess.PIPE,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
        p.stdin.write(b"a\nb\n")
        p.stdin.flush()
        deadline = time.time() + 10
        while time.time() < deadline and not any(".probkit-" in f for f in os.listdir(self.dir)):
            time.sleep(0.02)
        p.send_signal(signal.SIGHUP)
        time.sleep(0.2)
        self.assertIsNone(p.poll(), "SIGHUP ended a run that ignored it")
        p.stdin.write(b"c\n")
        p.stdin.close()
        self.assertEqual(p.wait(timeout=10), 0, p.stderr.read())
        self.assertEqual(run(["hll", "count", self.path("s.pkhl")])[1], b"3\n")


class BenchTest(CliTestCase):
    def test_bench_small_runs_every_backend_and_agrees(self):
        code, out, err = run(["bench", "--keys", "200000", "--string-keys", "20000", "--absent-keys", "20000",
                              "--reps", "1"])
        text = out.decode()
        self.assertEqual(code, 0, err)
        self.assertIn("scalar", text)
        self.assertTrue(text.rstrip().endswith("all backends bit-identical to scalar: yes"), text)

    def test_bench_reports_write_errors(self):
        with open("/dev/full", "wb") as full:
            p = subprocess.run([support.PROBKIT, "bench", "--keys", "1000", "--string-keys", "100", "--absent-keys",
                                "100", "--reps", "1"], stdout=full, stderr=subprocess.PIPE)
        self.assertEqual(p.returncode, 1)
        self.assertIn("cannot write standard output: No space left on device", p.stderr.decode())


if __name__ == "__main__":
    support.main()
