#!/usr/bin/env python3
"""A/B runs of probkit_bench binaries on a shared, noisy machine.

Runs each binary in turn, `rounds` times (the order reversed every other
round, so that neither binary always runs first), each run the benchmarks
that match `--filter` with `--reps` repetitions, and keeps each run's median
keys/s per benchmark. Every round's figures are written as they come (one
JSON line a run to --out, and a line a benchmark to stdout), so a run cut
short by a time limit still leaves the rounds it finished. Ends with a table:
per benchmark and binary, each round's median in M keys/s, their median, and
that median over the first binary's.

    scripts/ab-bench.py --filter 'hll_add/keys=u64/.*/threads=16/' \\
        --rounds 8 --reps 7 --out ab.jsonl old/probkit_bench new/probkit_bench

Compare binaries built from two trees (git worktree) with the same flags, and
keep a row of unchanged code in the filter: how far its figures move between
the binaries is the noise of the run.
"""
import argparse
import collections
import json
import statistics
import subprocess
import sys
import time


def run_once(binary, bench_filter, reps, timeout):
    cmd = [binary, "--benchmark_filter=" + bench_filter, "--benchmark_repetitions=%d" % reps,
           "--benchmark_report_aggregates_only=true", "--benchmark_format=json"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    if done.returncode != 0:
        raise RuntimeError("%s exited %d: %s" % (binary, done.returncode, done.stderr[-2000:]))
    medians = {}
    for b in json.loads(done.stdout)["benchmarks"]:
        if b.get("aggregate_name") == "median" and "keys_per_s" in b:
            medians[b["run_name"]] = b["keys_per_s"] / 1e6
    return medians


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binaries", nargs="+", help="probkit_bench binaries (two or more)")
    ap.add_argument("--filter", required=True, help="Google Benchmark regex")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--reps", type=int, default=5, help="repetitions a run (at least 2: medians)")
    ap.add_argument("--out", help="JSON lines, one a run, appended as they come")
    ap.add_argument("--run-timeout", type=float, default=120, help="seconds one run may take")
    args = ap.parse_args()
    if args.reps < 2:
        ap.error("--reps must be at least 2 (a median of one repetition is not reported)")
    figures = collections.defaultdict(list)  # (benchmark, binary) -> medians, a round each
    out = open(args.out, "a", encoding="utf-8") if args.out else None
    for r in range(args.rounds):
        order = args.binaries if r % 2 == 0 else args.binaries[::-1]
        for binary in order:
            t0 = time.time()
            medians = run_once(binary, args.filter, args.reps, args.run_timeout)
            if not medians:
                sys.exit("no benchmark of %s matches %r" % (binary, args.filter))
            for name, value in sorted(medians.items()):
                figures[(name, binary)].append(value)
                print("round %d %s %s %.1f" % (r, binary, name, value), flush=True)
            if out:
                out.write(json.dumps({"round": r, "binary": binary, "seconds": round(time.time() - t0, 1),
                                      "M_keys_per_s": medians}) + "\n")
                out.flush()
    names = sorted({name for name, _ in figures})
    for name in names:
        print(name)
        first = figures.get((name, args.binaries[0]), [])
        for binary in args.binaries:
            values = figures.get((name, binary), [])
            if values:
                ratio = ""
                if binary != args.binaries[0] and first:
                    ratio = "  x%.3f of the first" % (statistics.median(values) / statistics.median(first))
                print("  %-40s %s  median %.1f%s" % (binary[-40:], " ".join("%.1f" % v for v in values),
                                                     statistics.median(values), ratio))


if __name__ == "__main__":
    main()
