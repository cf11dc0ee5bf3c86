#!/usr/bin/env python3
"""Writes docs/BENCHMARKS.md (every machine side by side), docs/benchmarks/<machine>.md (one page per kind of
machine), docs/ACCURACY.md and their PNG plots (docs/img/) from the raw results that scripts/bench-report.sh
leaves in docs/data/:

    machines/<machine>/   one folder per kind of machine (bench/machine.py key: vendor, family, model, ISA),
                          the latest run there:
        bench.json          Google Benchmark JSON of build/bench/probkit_bench (32 MiB and 1 GiB filters, or a
                            BENCH_FILTER run); its context says whether repetitions were interleaved
        bench_interleaved.json  the rest (256 KiB filters, HLL, hashing), repetitions interleaved
        peers.json          bench/peers/run.py
        machine.json        what produced them (CPU, vCPUs, memory, commit, date, run id)
    hll_accuracy.csv    build/bench/probkit_accuracy hll (the same on every machine: every backend's results
    bloom_fpr.csv       build/bench/probkit_accuracy bloom   are identical; each CSV names its machine)

    python3 bench/report.py [--data docs/data] [--docs docs]

In each machine's folder bench.json and machine.json are required, bench_interleaved.json and peers.json
optional; both CSVs are required. A machine's benchmark files and machine.json must carry one run id
(probkit_run_id in the JSON contexts, run_id in machine.json: scripts/bench-report.sh stamps every file of a
run), or none at all (files from before run ids, accepted with a note on the page). Otherwise, or when a
required file is missing, nothing is written and the exit status is 1. peers.json and the CSVs may come from
another run (SKIP_PEERS=1, SKIP_ACCURACY=1): the pages print their own stamps.

The work is in its sibling modules: report_data.py (loading, checking, formatting, Bench), report_plots.py
(the PNGs), report_index.py (BENCHMARKS.md), report_benchmarks.py (a machine's page), report_targets.py (its
floors, targets and probes), report_peers.py (its peers section) and report_accuracy.py (ACCURACY.md).
"""
import argparse
import os
import sys

from report_accuracy import write_accuracy
from report_benchmarks import write_benchmarks
from report_data import ReportError, load_accuracy, load_machines
from report_index import write_index


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="docs/data")
    p.add_argument("--docs", default="docs")
    a = p.parse_args()
    try:
        # Every input is read and checked before anything is written: a refused set leaves the pages as they were.
        runs = load_machines(a.data)
        (hm, hr), (bm, br) = load_accuracy(a.data)
    except ReportError as e:
        print(f"bench/report.py: {e}", file=sys.stderr)
        return 1
    os.makedirs(os.path.join(a.docs, "img"), exist_ok=True)
    for key, bench, peers in runs:
        write_benchmarks(bench, peers, a.docs, key)
    write_index(runs, a.docs)
    # The accuracy CSVs name the machine that made them; machine.json of that run, where it is still kept,
    # fills in what an older CSV's stamp lacks.
    made_by = next((b.machine for _, b, _ in runs if b.run_id and b.run_id == hm.get("run")), {})
    write_accuracy(hm, hr, bm, br, made_by, a.docs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
