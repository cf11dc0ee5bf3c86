#!/usr/bin/env python3
"""Writes docs/BENCHMARKS.md, docs/ACCURACY.md and their PNG plots (docs/img/)
from the raw results that scripts/bench-report.sh leaves in docs/data/:

    bench.json          Google Benchmark JSON of build/bench/probkit_bench (32 MiB and 1 GiB filters, or a
                        BENCH_FILTER run); its context says whether repetitions were interleaved
    bench_interleaved.json  the rest (256 KiB filters, HLL, hashing), repetitions interleaved
    peers.json          bench/peers/run.py
    hll_accuracy.csv    build/bench/probkit_accuracy hll
    bloom_fpr.csv       build/bench/probkit_accuracy bloom
    machine.json        what produced them (CPU, cores, memory, commit, date)

    python3 bench/report.py [--data docs/data] [--docs docs]

The work is in its sibling modules: report_data.py (loading, formatting, Bench), report_plots.py (the PNGs),
report_benchmarks.py (BENCHMARKS.md) and report_accuracy.py (ACCURACY.md).
"""
import argparse
import os

from report_accuracy import write_accuracy
from report_benchmarks import write_benchmarks
from report_data import Bench, load_bench, load_csv, load_json


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="docs/data")
    p.add_argument("--docs", default="docs")
    a = p.parse_args()
    os.makedirs(os.path.join(a.docs, "img"), exist_ok=True)
    machine = load_json(os.path.join(a.data, "machine.json")) or {}
    bench_path = os.path.join(a.data, "bench.json")
    if os.path.exists(bench_path):
        ctx, rows = load_bench(bench_path)
        # Whether its repetitions were shuffled together (probkit_bench records it; earlier runs were not).
        rows = [dict(r, interleaved=ctx.get("probkit_random_interleaving") == "true") for r in rows]
        # The in-cache benchmarks' run, with repetitions interleaved (bench-report.sh), when it was made.
        interleaved_path = os.path.join(a.data, "bench_interleaved.json")
        if os.path.exists(interleaved_path):
            ctx_i, rows_i = load_bench(interleaved_path)
            ctx = ctx or ctx_i
            rows += [dict(r, interleaved=True) for r in rows_i]
        write_benchmarks(Bench(ctx, rows, machine), load_json(os.path.join(a.data, "peers.json")), a.docs)
    hll_path, bloom_path = os.path.join(a.data, "hll_accuracy.csv"), os.path.join(a.data, "bloom_fpr.csv")
    if os.path.exists(hll_path) and os.path.exists(bloom_path):
        hm, hr = load_csv(hll_path)
        bm, br = load_csv(bloom_path)
        write_accuracy(hm, hr, bm, br, machine, a.docs)


if __name__ == "__main__":
    main()
