"""docs/benchmarks/<machine>.md, one machine's page, from its Bench and the peers' results: its sections, each a
function of the run."""
import os

from report_data import LARGE_BYTES, mps, ratio, size_bytes, table
from report_peers import peers_section, peers_title
from report_plots import plot_bloom
from report_targets import floors_section, probes_section, split_section


def bloom_section(b):
    out = []
    cases = [("contains", "cacheline512"), ("add", "cacheline512"), ("count", "cacheline512"),
             ("contains", "parquet_sbbf"), ("add", "parquet_sbbf")]
    main = b.engines[:2]
    for op, layout in cases:
        rows = []
        for keys in ("u64", "str16", "url", "id"):
            for s in b.sizes:
                for t in sorted({r["threads"] for r in b.rows}):
                    cells = [keys, s, t]
                    any_ = False
                    for e in main:
                        r = b.get(f"bloom_{op}", layout=layout, keys=keys, size=s, engine=e, threads=t)
                        any_ |= r is not None
                        cells += [mps(r and r["keys_per_s"]), ratio(r and r["vs_probe"]),
                                  mps(r and r.get("keys_per_cpu_s")), ratio(r and r.get("vs_probe_cpu"))]
                    if any_:
                        rows.append(cells)
        header = ["keys", "filter", "threads"]
        for e in main:
            header += [f"{e} M keys/s", f"{e} ÷ probe", f"{e} M keys/CPU-s", f"{e} ÷ probe (CPU)"]
        out.append(f"### {op}, {layout}\n\n" + table(header, rows))
    return "\n\n".join(out)


def by_k_section(b, op):
    """bloom_{op}_k: M keys/s at each k, beside the read probe (contains) or the update probe (add)."""
    bench = f"bloom_{op}_k"
    probe = "vs_probe" if op == "contains" else "vs_reference"
    ks = sorted({int(r["k"]) for r in b.rows if r["bench"] == bench})
    if not ks:
        return "_Not measured in this run._"
    rows = []
    for e in b.engines:
        cells = [e]
        for k in ks:
            r = b.get(bench, k=str(k), engine=e)
            cells.append(f"{mps(r and r['keys_per_s'])} ({ratio(r and r.get(probe))})")
        if any(c != "– (–)" for c in cells[1:]):
            rows.append(cells)
    return table(["engine"] + [f"k = {k}: M keys/s (÷ probe)" for k in ks], rows)


def sweep_section(b):
    rows = []
    for op, layout in [("contains", "cacheline512"), ("add", "cacheline512"), ("count", "cacheline512"),
                       ("contains", "parquet_sbbf"), ("add", "parquet_sbbf")]:
        for s in ("256KiB", "1GiB"):
            cells = [f"{op} {layout}", s]
            for e in b.engines:
                r = b.get(f"bloom_{op}", layout=layout, keys="u64", size=s, engine=e, threads=1)
                cells.append(f"{mps(r and r['keys_per_s'])} ({ratio(r and r['vs_probe'])})")
            rows.append(cells)
    for keys, h in (("u64", "xxh64"), ("prehashed", "none")):
        cells = [f"HLL add {keys} {h}", "p=14"]
        for e in b.engines:
            r = b.get("hll_add", keys=keys, hash=h, engine=e, threads=1)
            cells.append(f"{mps(r and r['keys_per_s'])} ({ratio(r and r['vs_probe'])})")
        rows.append(cells)
    cells = ["hash alone u64 xxh64", ""]
    for e in b.engines:
        r = b.get("hash", keys="u64", hash="xxh64", engine=e, threads=1)
        cells.append(mps(r and r["keys_per_s"]))
    rows.append(cells)
    return table(["operation (u64, 1 thread)", "size"] + [f"{e}: M keys/s (÷ probe)" for e in b.engines], rows)


def hll_section(b):
    rows = []
    for keys, h in (("u64", "xxh64"), ("u64", "redis"), ("prehashed", "none"), ("str16", "xxh64"), ("str16", "redis"),
                    ("url", "xxh64"), ("id", "xxh64")):
        for t in sorted({r["threads"] for r in b.rows}):
            for e in b.engines[:2]:
                r = b.get("hll_add", keys=keys, hash=h, engine=e, threads=t)
                hs = b.get("hash", keys=keys, hash=h, engine=e, threads=t)
                if r:
                    rows.append([keys, h, t, e, mps(r["keys_per_s"]), ratio(r["vs_probe"]),
                                 mps(r.get("reference")) if "reference" in r else "–",
                                 ratio(r.get("vs_reference")), mps(r.get("keys_per_cpu_s")),
                                 ratio(r.get("vs_reference_cpu")), mps(hs and hs["keys_per_s"])])
    return table(["keys", "hash", "threads", "engine", "HLL add M keys/s", "÷ seq-read probe",
                  "hashing alone (same process) M/s", "÷ hashing alone", "HLL add M keys/CPU-s",
                  "÷ hashing alone (CPU)", "hash benchmark M/s"], rows) + "\n\n" + hashing_alone_note(b)


def hashing_alone_note(b):
    """How the run measured HLL add's yardstick, hashing alone (probkit_bench says so in its context)."""
    how = next((c.get("probkit_hashing_alone", "") for n, c in b.contexts.items()
                if n == "bench_interleaved.json" or len(b.contexts) == 1), "")
    if "recent" in how:
        return ("\"Hashing alone\": the same engine's hash kernel over the same keys as HLL add (one pool, read in "
                "the same order), into an L1-resident buffer and nothing else; the median of 3 runs of 20 ms, "
                "measured again beside each repetition (when the last is over 3 s old, as the probes are), so each "
                "÷ hashing alone is a median of per-repetition ratios. The hash benchmark's column is the "
                "benchmark of its own, over the same keys.")
    return ("\"Hashing alone\" (this run predates measuring it beside each repetition): the same engine's hash "
            "kernel into an L1-resident buffer, measured once per engine, key type, hash and thread count (the "
            "median of 5 passes over the pool) and reused for every repetition, over synthetic keys 0, 1, 2, ... "
            "where HLL add reads synthetic keys 3·2^40 + 0, 1, 2, ... (the hashing speed does not depend on the "
            "values). The hash benchmark's column is the benchmark of its own, over those same other keys.")


def hll_fresh_section(b):
    rows = []
    for t in sorted({r["threads"] for r in b.rows}):
        for e in b.engines:
            r = b.get("hll_add_fresh", keys="u64", hash="xxh64", engine=e, threads=t)
            steady = b.get("hll_add", keys="u64", hash="xxh64", engine=e, threads=t)
            if r:
                rows.append([e, t, mps(r["keys_per_s"]), ratio(r.get("vs_reference")),
                             mps(steady and steady["keys_per_s"]),
                             ratio(steady and r["keys_per_s"] / steady["keys_per_s"])])
    if not rows:
        return "_Not measured in this run._"
    return table(["engine", "threads", "fresh sketch M keys/s", "÷ hashing alone", "steady state M keys/s",
                  "fresh ÷ steady"], rows)


def keys_check_section(b):
    rows = []
    for offsets, width in (("int32", 4), ("int64", 8)):
        for t in sorted({r["threads"] for r in b.rows}):
            r = b.get("keys_check", offsets=offsets, threads=t)
            if r:
                rows.append([offsets, t, r["label"], mps(r["keys_per_s"]), f"{r['keys_per_s'] * width / 1e9:.1f}",
                             ratio(r["vs_probe"])])
    if not rows:
        return "_Not in this run._"
    return table(["offsets", "threads", "target", "M keys/s", "GB/s", "÷ seq-read probe"], rows)


def repetitions_line(b):
    def large(r):
        return r["bench"].startswith("bloom_") and size_bytes(r["size"]) >= LARGE_BYTES

    def reps(rows):
        return max((r["repetitions"] for r in rows), default=0)
    small_rows = [r for r in b.rows if not large(r)]
    large_rows = [r for r in b.rows if large(r)]
    if not any(r.get("interleaved") for r in b.rows):
        return f"Every figure is the **median of {reps(b.rows)} repetitions**."
    if all(r.get("interleaved") for r in large_rows):
        how_large = (f"of {reps(large_rows)} repetitions, shuffled together likewise in a run of their own, for "
                     "filters of 32 MiB and more, whose repetitions each page in a filter of up to 1 GiB")
    else:
        how_large = (f"of {reps(large_rows)} repetitions back to back for filters of 32 MiB and more, which take "
                     "seconds to build")
    return (f"Every figure is a **median**: of {reps(small_rows)} repetitions shuffled together with the other "
            f"benchmarks' (random interleaving) for filters under 32 MiB, HLL and hashing, which set up in moments; "
            f"{how_large}.")


def run_line(b):
    """The run id, where the files carry one (Bench.identity_note says so where they do not)."""
    return f", run `{b.run_id}`" if b.run_id else ""


def notes_block(b):
    """What the page must say before any figure: that the files carry no run identity, and which benchmarks
    failed or were skipped (they are in no table)."""
    out = [b.identity_note()] if b.identity_note() else []
    if b.failed:
        out.append(f"**{len(b.failed)} benchmark run(s) did not finish and are in no table below:**\n\n"
                   + "\n".join(f"- `{name}` ({source}): {why}" for source, name, why in b.failed))
    return "\n" + "\n\n".join(out) if out else ""


def write_benchmarks(b, peers, docs, key):
    """Writes docs/benchmarks/{key}.md and its plots (docs/img/{key}/): the run of the machine `key`."""
    plots = []
    for op, layout in (("contains", "cacheline512"), ("add", "cacheline512"), ("contains", "parquet_sbbf")):
        for t in sorted({r["threads"] for r in b.rows}):
            fname = f"{key}/bloom_{op}_{layout}_t{t}.png"
            if plot_bloom(b, docs, op, layout, t, fname):
                plots.append(f"![Bloom {op} {layout} {t} threads](../img/{fname})")
    m = b.machine
    text = f"""# probkit benchmarks on {m.get('cpu', '?')} ({m.get('isa', '?')})

Generated by `scripts/bench-report.sh` (which runs `build/bench/probkit_bench`, `bench/peers/run.py`
and `bench/report.py`) on this machine; do not edit by hand. The other machines' pages and a summary of
all: [BENCHMARKS.md](../BENCHMARKS.md). Raw results: [docs/data/machines/{key}/](../data/machines/{key}/).
CPU only: the CUDA backend's figures, measured on a GPU, are in [BENCHMARKS-GPU.md](../BENCHMARKS-GPU.md).

**Machine that produced every figure on this page:** {b.machine_line()}.
Commit `{m.get('commit', '?')}`, {m.get('date', '?')}{run_line(b)}. Engines measured: {', '.join(b.engines)}
(`scalar` is the reference backend; the others are Highway targets of the Simd backend, pinned with
`probkit::set_simd_target`). Best engine on this CPU: **{b.best}**. "All threads" = {b.all_threads}.
{m.get('note', '')}
{notes_block(b)}

{repetitions_line(b)} Each benchmark prints beside its
throughput a speed-of-light probe measured in the same process on a buffer of the same size
(bench/probes.hpp): for Bloom filters the rate of independent random 64-byte reads (random lines, prefetched),
for HLL and hashing the sequential read rate of the key column in keys/s; "÷ probe" is the ratio.
The probe is a plain loop (the best of a direct schedule and prefetches 64, 128 and 256 lines ahead
into L1, and from commit 33b9e21 on also 128 and 256 ahead into L2 with 32 ahead into L1, as the
kernels prefetch from DRAM since e0f7f64, and from 169cbd5 on also 128 ahead into L2 with 16 into L1, as
they do since), not a proof of the hardware's limit: a ratio a little above 1 means the kernel keeps more misses in
flight than it does.
Filters are loaded to 10 bits/key (cacheline512 k = 6, parquet_sbbf k = 8) and queried with batches
of 2^20 keys, half of them inserted; keys come from pools of 16 × 2^20 (URL- and ID-like strings, as
in the HLL section, from pools of 4 × 2^20) so that a 1 GiB filter is not served from a large L3 cache.
Between the full matrix's sizes (256 KiB, 32 MiB, 1 GiB), runs from commit 481ccbf on measure u64
contains and add into cacheline512 filters of 1, 4, 8, 16 and 128 MiB too, at one thread, on the best
target and AVX2 below it: the plots' points between, where the kernels' prefetching starts (1 MiB) and
goes to two levels (8 MiB).

## Floors (issue 2) and targets (issue 4)

The floors and targets are stated for a 2-core AVX2 machine; these figures come from the machine
above. Each verdict is on the engine the library serves on this CPU, the best target (**{b.best}**), at
one thread.

{floors_section(b)}

### The in-cache targets, hash and kernel apart

{split_section(b)}

## Speed-of-light probes (same run)

{probes_section(b)}

## Bloom filters: throughput vs filter size

{chr(10).join(plots)}

_Plots: {b.machine_line()}; u64 keys; one line per engine; the dashed line is the read probe, the dotted one (add) the update probe._

{bloom_section(b)}

### contains by k (cacheline512, 256 KiB, u64 keys, one thread)

The same filter size, load (10 bits/key) and queries at each k, so that only the probes per key
change. `for_capacity` picks k = 6 for a 1% false-positive rate, 8 for 0.2-0.3%, 9 for 0.1% and 12
for 0.01%. The AVX2 test holds eight probes in a vector: past k = 8 it tests a second vector of
probes against the same two loads of the block.

{by_k_section(b, "contains")}

### add by k (cacheline512, 256 KiB, u64 keys, one thread)

The same filter size and inserted keys at each k (each k its own filter, filling up as the
repetitions go), beside the random-line update probe. The AVX2 add sets each probe's bit by a
read-modify-write of its word, the positions computed ahead for eight keys at a time: those of probes
0-7 (one vector multiply per key) up to k = 8, all 16 (two) past it.

{by_k_section(b, "add")}

## Every SIMD target (u64 keys, one thread)

M keys/s and, in parentheses, the ratio to the probe.

{sweep_section(b)}

## HyperLogLog add (p = 14)

Keys: u64, pre-hashed, 16-byte strings, URL-like strings of 30 to 86 bytes (`url`: a scheme and
host, the key in base 36, more path; 59.5 bytes on average) and ID-like strings of 9 to 31 bytes
(`id`: the key in base 36 and 0 to 22 letters; 20 bytes on average), which AVX-512 and AVX2 hash a
string a vector lane, each lane reading its string in 32-byte windows.

{hll_section(b)}

### Into a fresh sketch

A new sketch per iteration and one add of a batch of 2^20 distinct u64 keys (XXH64): the call that
counts one column's distinct values. The steady state is the table above's (the same keys into a
sketch that has seen them all). While the registers are young most keys raise one (the kernels then
raise every key's register without first reading it), and the floor screen starts only once the
smallest register leaves 0, after about m ln m ≈ 160,000 keys.

{hll_fresh_section(b)}

## Checking a batch of strings

Making a `Keys` view of Arrow-style strings checks every offset (in range, non-decreasing) before
any kernel reads a string, so that a bad batch changes nothing: one pass over the offsets that
every bulk call of strings pays first, vectorised and split over the workers. Batches of 2^20
offsets from a pool of 16 × 2^20, beside the sequential-read probe over as many bytes.

{keys_check_section(b)}

## {peers_title(b, peers)}

{peers_section(b, peers)}
"""
    os.makedirs(os.path.join(docs, "benchmarks"), exist_ok=True)
    with open(os.path.join(docs, "benchmarks", f"{key}.md"), "w") as f:
        f.write(text)
