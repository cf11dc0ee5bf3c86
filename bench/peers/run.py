#!/usr/bin/env python3
"""The peer comparison of issue 4: probkit beside the libraries a user would
otherwise pick, on the same keys, in one run; every result is a ratio
probkit / peer. Peers that cannot be imported or started are reported as
missing with the reason, never dropped.

    python3 bench/peers/run.py --build build --out build/peers.json [--quick] [--run-id ID --commit C]

probkit is driven through build/bench/peers/probkit_peer, which reads the same
key files as the peers. Nothing here is part of the test suite. peers.json is
stamped like machine.json (bench/machine.py): the machine, and the run's id,
commit and date (scripts/bench-report.sh passes its run's id and commit;
without them the file is a run of its own).
"""
import argparse
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import machine  # noqa: E402  (bench/machine.py: the stamp every data file of a run carries)

MASK = np.uint64(0xFFFFFFFFFFFFFFFF)


def keys_u64(first, n):
    """Synthetic distinct keys: the SplitMix64 finaliser of first .. first+n-1
    (a bijection, so the true distinct count is n). Same as bench/bench_common.cc."""
    with np.errstate(over="ignore"):
        x = np.arange(first, first + n, dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def median_time(fn, reps):
    """Median seconds of fn() over reps runs, and fn's last result."""
    times, result = [], None
    for _ in range(reps):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


class Runner:
    def __init__(self, args):
        self.args = args
        self.peer_bin = os.path.join(args.build, "bench", "peers", "probkit_peer")
        self.tmp = tempfile.mkdtemp(prefix="probkit_peers_", dir=args.tmp)
        self.results = {"machine": dict(machine.describe(), python=platform.python_version()),
                        "run": machine.stamp(args.run_id or machine.new_run_id(), args.commit or machine.commit()),
                        "params": {}, "rows": [], "missing": {}, "raw": {}, "versions": {}}

    def probkit(self, *argv):
        out = subprocess.run([self.peer_bin, *map(str, argv)], capture_output=True, text=True)
        if out.returncode == 3:  # probkit_peer built without the peer: {"missing": why}
            raise RuntimeError(json.loads(out.stdout)["missing"])
        if out.returncode != 0:
            raise RuntimeError(f"probkit_peer {argv[0]} failed: {out.stderr.strip() or out.stdout.strip()}")
        return json.loads(out.stdout)

    def write(self, name, array):
        path = os.path.join(self.tmp, name)
        array.astype("<u8").tofile(path)
        return path

    def row(self, group, peer, metric, peer_value, probkit_value, probkit_threads, note="", higher_is_better=True):
        ratio = None
        if peer_value and probkit_value is not None:
            ratio = probkit_value / peer_value if higher_is_better else peer_value / probkit_value
        self.results["rows"].append({
            "group": group, "peer": peer, "metric": metric, "peer_value": peer_value,
            "probkit_value": probkit_value, "probkit_threads": probkit_threads, "ratio": ratio, "note": note})

    def missing(self, peer, why):
        self.results["missing"][peer] = str(why)
        print(f"  {peer}: MISSING ({why})", file=sys.stderr)

    def attempt(self, peer, fn):
        print(f"[peers] {peer}", file=sys.stderr)
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - any failure makes the peer missing, with the reason
            self.missing(peer, f"{type(e).__name__}: {e}")

    # -- Bloom filters -------------------------------------------------------
    def bloom(self):
        a = self.args
        n, fpr = a.filter_keys, 0.01
        keys, queries = keys_u64(0, n), keys_u64(1 << 40, n)
        kf, qf = self.write("filter_keys.u64", keys), self.write("filter_queries.u64", queries)
        self.results["params"]["filter"] = {"keys": n, "queries": n, "capacity": n, "fpr": fpr,
                                            "queries_are": "never inserted (hit rate = FPR)"}
        one = self.probkit("bloom", "--keys", kf, "--queries", qf, "--capacity", n, "--fpr", fpr, "--threads", 1,
                           "--reps", a.reps)["probkit"]
        allt = self.probkit("bloom", "--keys", kf, "--queries", qf, "--capacity", n, "--fpr", fpr, "--threads", 0,
                            "--reps", a.reps)["probkit"]
        self.results["raw"]["probkit_bloom"] = {"threads_1": one, "threads_all": allt}
        signed = keys.view(np.int64).tolist()
        qsigned = queries.view(np.int64).tolist()

        def python_filter(peer, make, add_all, count_hits):
            build_s, filt = median_time(lambda: add_all(make()), a.reps)
            query_s, hits = median_time(lambda: count_hits(filt), a.reps)
            res = {"build_keys_per_s": n / build_s, "query_keys_per_s": n / query_s, "fpr": hits / n}
            self.results["raw"][peer] = res
            self.row("bloom", peer, "build keys/s", res["build_keys_per_s"], one["build_keys_per_s"], 1)
            self.row("bloom", peer, "query keys/s", res["query_keys_per_s"], one["query_keys_per_s"], 1)
            self.row("bloom", peer, "FPR (lower is better)", res["fpr"], one["fpr"], 1, higher_is_better=False)

        def rbloom_peer():
            import rbloom

            def add_all(f):
                f.update(signed)
                return f
            python_filter("rbloom", lambda: rbloom.Bloom(n, fpr), add_all,
                          lambda f: sum(map(f.__contains__, qsigned)))

        def fastbloom_peer():
            import fastbloom_rs

            def add_all(f):
                f.add_int_batch(signed)
                return f
            python_filter("fastbloom-rs", lambda: fastbloom_rs.FilterBuilder(n, fpr).build_bloom_filter(), add_all,
                          lambda f: sum(f.contains_int_batch(qsigned)))

        def pyprobables_peer():
            import probables
            kb = [int(k).to_bytes(8, "little") for k in keys]
            qb = [int(k).to_bytes(8, "little") for k in queries]

            def add_all(f):
                for k in kb:
                    f.add(k)
                return f
            python_filter("pyprobables", lambda: probables.BloomFilter(est_elements=n, false_positive_rate=fpr),
                          add_all, lambda f: sum(map(f.check, qb)))

        def libbloom_peer():
            r = self.probkit("libbloom", "--keys", kf, "--queries", qf, "--capacity", n, "--fpr", fpr,
                             "--reps", a.reps)
            lb, pk = r["libbloom"], r["probkit"]
            self.results["raw"]["libbloom"] = r
            note = f"same bits/key ({lb['bits_per_key']:.2f}); libbloom k={lb['k']}, probkit k={pk['k']}"
            self.row("bloom", "libbloom", "build keys/s", lb["build_keys_per_s"], pk["build_keys_per_s"], 1, note)
            self.row("bloom", "libbloom", "query keys/s", lb["query_keys_per_s"], pk["query_keys_per_s"], 1, note)
            self.row("bloom", "libbloom", "FPR (lower is better)", lb["fpr"], pk["fpr"], 1, note,
                     higher_is_better=False)

        self.attempt("libbloom", libbloom_peer)
        self.attempt("rbloom", rbloom_peer)
        self.attempt("fastbloom-rs", fastbloom_peer)
        self.attempt("pyprobables", pyprobables_peer)

    # -- HyperLogLog ---------------------------------------------------------
    def hll(self):
        a = self.args

        def datasketches_peer():
            import datasketches
            n = a.hll_py_keys
            keys = keys_u64(2 << 40, n)
            kf = self.write("hll_py_keys.u64", keys)
            signed = keys.view(np.int64).tolist()

            def build():
                sk = datasketches.hll_sketch(14, datasketches.tgt_hll_type.HLL_8)
                for k in signed:
                    sk.update(k)
                return sk
            secs, sk = median_time(build, a.reps)
            est = sk.get_estimate()
            pk = self.probkit("hll", "--keys", kf, "--p", 14, "--threads", 1, "--reps", a.reps)
            self.results["raw"]["datasketches"] = {"add_keys_per_s": n / secs, "estimate": est, "n": n,
                                                   "probkit": pk}
            note = f"lgK 14, {n} keys"
            self.row("hll", "datasketches", "add keys/s", n / secs, pk["add_keys_per_s"], 1, note)
            self.row("hll", "datasketches", "abs. relative error (lower is better)", abs(est / n - 1),
                     abs(pk["rel_error"]), 1, note, higher_is_better=False)

        self.attempt("datasketches", datasketches_peer)

        n = a.column_keys
        column = keys_u64(3 << 40, n)
        cf = self.write("column.u64", column)
        self.results["params"]["column"] = {"keys": n, "distinct": n}
        pk1 = self.probkit("hll", "--keys", cf, "--p", 14, "--threads", 1, "--reps", a.reps)
        pka = self.probkit("hll", "--keys", cf, "--p", 14, "--threads", 0, "--reps", a.reps)
        self.results["raw"]["probkit_column"] = {"threads_1": pk1, "threads_all": pka}

        def sql_peer(peer, sketch, threads_all, threads_one, run_query, estimate_of):
            for label, setup, pk in (("all threads", threads_all, pka), ("1 thread", threads_one, pk1)):
                setup()
                secs, est = median_time(run_query, a.reps)
                est = estimate_of(est)
                self.results["raw"].setdefault(peer, {})[label] = {"keys_per_s": n / secs, "estimate": est}
                note = f"{n} u64 keys in memory, {label}"
                self.row("hll", peer, "keys/s", n / secs, pk["add_keys_per_s"], pk["threads"], note)
                # Not a p = 14 sketch (probkit's): its error is its own default size's.
                self.row("hll", peer, "abs. relative error (lower is better)", abs(est / n - 1), abs(pk["rel_error"]),
                         pk["threads"], f"{note}; {peer}: {sketch}, probkit p = 14", higher_is_better=False)

        def duckdb_peer():
            import duckdb
            con = duckdb.connect()
            cores = os.cpu_count()
            con.register("src", _table(column))
            con.execute("CREATE TABLE t AS SELECT k FROM src")
            con.unregister("src")
            self.results["versions"]["duckdb"] = duckdb.__version__
            # DuckDB 1.1 on: its own HyperLogLog of 64 registers (ApproxDistinctCountState, P = 6).
            sql_peer("duckdb", "HLL of 64 registers (p = 6)", lambda: con.execute(f"SET threads = {cores}"),
                     lambda: con.execute("SET threads = 1"),
                     lambda: con.execute("SELECT approx_count_distinct(k) FROM t").fetchone()[0], float)
            con.close()

        def chdb_peer():
            from chdb import session as chs
            sess = chs.Session(os.path.join(self.tmp, "chdb"))
            sess.query("CREATE TABLE t (k UInt64) ENGINE = Memory")
            sess.query(f"INSERT INTO t SELECT k FROM file('{cf}', 'RowBinary', 'k UInt64')")
            cores = os.cpu_count()
            threads = {"n": cores}
            import chdb
            self.results["versions"]["chdb"] = getattr(chdb, "__version__", "?")
            # uniqCombined64 without a parameter: HLL_precision 17 (2^17 cells) once past its array and hash table.
            sql_peer("chdb (ClickHouse)", "uniqCombined64 default, HLL of 2^17 cells (p = 17)",
                     lambda: threads.update(n=cores), lambda: threads.update(n=1),
                     lambda: sess.query(f"SELECT uniqCombined64(k) FROM t SETTINGS max_threads = {threads['n']}",
                                        "CSV").bytes(),
                     lambda b: float(b.decode().strip()))
            sess.close()

        self.attempt("duckdb", duckdb_peer)
        self.attempt("chdb (ClickHouse)", chdb_peer)
        self.attempt("redis", self.redis)

    def redis(self):
        import redis as redis_py
        server = shutil.which("redis-server")
        if server is None:
            raise RuntimeError("redis-server not installed (apt-get install redis-server)")
        a = self.args
        n = a.redis_keys
        keys = keys_u64(4 << 40, n)
        text = [str(int(k)) for k in keys]
        sf = os.path.join(self.tmp, "redis_keys.txt")
        with open(sf, "w") as f:
            f.write("\n".join(text) + "\n")
        with socket.socket() as s:  # a free port on the loopback interface
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen([server, "--bind", "127.0.0.1", "--port", str(port), "--save", "",
                                 "--appendonly", "no", "--protected-mode", "yes"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            r = redis_py.Redis(host="127.0.0.1", port=port)
            for _ in range(100):
                try:
                    r.ping()
                    break
                except redis_py.ConnectionError:
                    time.sleep(0.05)
            per_cmd, per_flush = 1000, 64

            def load():
                r.delete("hll")
                pipe = r.pipeline(transaction=False)
                for i in range(0, n, per_cmd):
                    pipe.pfadd("hll", *text[i:i + per_cmd])
                    if (i // per_cmd) % per_flush == per_flush - 1:
                        pipe.execute()
                pipe.execute()
                return r.pfcount("hll")
            secs, count = median_time(load, a.reps)
        finally:
            proc.terminate()
            proc.wait(timeout=10)
        pk = self.probkit("hll", "--strings", sf, "--hash", "redis", "--threads", 1, "--reps", a.reps)
        same = round(pk["estimate"]) == count
        self.results["raw"]["redis"] = {"add_keys_per_s": n / secs, "pfcount": count, "probkit": pk,
                                        "probkit_equals_pfcount": same}
        note = (f"PFADD pipelined ({per_cmd} elements/command), {n} decimal-string keys; probkit Redis mode "
                f"{'equals' if same else 'DIFFERS FROM'} PFCOUNT ({count})")
        self.row("hll", "redis", "add keys/s", n / secs, pk["add_keys_per_s"], 1, note)


def _table(column):
    """The column as an Arrow table (zero-copy) or, without pyarrow, a pandas frame."""
    try:
        import pyarrow
        return pyarrow.table({"k": column})
    except ImportError:
        import pandas
        return pandas.DataFrame({"k": column})


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build")
    p.add_argument("--out", default="build/peers.json")
    p.add_argument("--tmp", default=None, help="folder for the key files (default: system temp)")
    p.add_argument("--quick", action="store_true", help="small sizes, one repetition")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--filter-keys", type=int, default=1_000_000)
    p.add_argument("--hll-py-keys", type=int, default=1_000_000)
    p.add_argument("--column-keys", type=int, default=100_000_000)
    p.add_argument("--redis-keys", type=int, default=1_000_000)
    p.add_argument("--run-id", help="the run this is part of (scripts/bench-report.sh's); default: a new one")
    p.add_argument("--commit", help="the commit of that run; default: HEAD's (+dirty)")
    a = p.parse_args()
    if a.quick:
        a.reps, a.filter_keys, a.hll_py_keys, a.column_keys, a.redis_keys = 1, 100_000, 100_000, 2_000_000, 100_000
    run = Runner(a)
    try:
        run.bloom()
        run.hll()
    finally:
        shutil.rmtree(run.tmp, ignore_errors=True)
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    with open(a.out, "w") as f:
        json.dump(run.results, f, indent=1)
    for r in run.results["rows"]:
        ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else "n/a"
        print(f"{r['group']:5} {r['peer']:18} {r['metric']:36} probkit/peer = {ratio}  {r['note']}")
    for peer, why in run.results["missing"].items():
        print(f"MISSING {peer}: {why}")


if __name__ == "__main__":
    main()
