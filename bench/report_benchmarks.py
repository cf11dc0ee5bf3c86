"""docs/BENCHMARKS.md from one Bench and the peers' results: its sections, each a function of the run."""
import os

from report_data import SIZES, mps, ratio, table
from report_plots import plot_bloom


# Issue 4's in-cache targets (M keys/s, one thread, u64 keys, 256 KiB cacheline512), quoted by the floors
# table and by the hash/kernel split.
TARGET_CONTAINS_256K = 600e6
TARGET_ADD_256K = 400e6
TARGET_STR16 = 200e6  # Bloom add and HLL add of 16-byte strings


def floors_section(b):
    """One row per floor/target: the figure per wall-clock second and per CPU second, and whether each meets it."""
    out = []

    def best_of(bench, key="keys_per_s", **kw):
        rs = [r for r in b.rows if r["bench"] == bench and all(r.get(k) == v for k, v in kw.items())]
        return max(rs, key=lambda r: r.get(key, 0)) if rs else None

    def check(what, target, bench, kind, threshold, **kw):
        """kind: 'rate' (keys/s), 'probe' (÷ probe), 'reference' (÷ hashing alone)."""
        cells = []
        verdicts = []
        engine = "–"
        for cpu in (False, True):
            suffix = "_cpu" if cpu else ""
            key = {"rate": "keys_per" + ("_cpu_s" if cpu else "_s"), "probe": "vs_probe" + suffix,
                   "reference": "vs_reference" + suffix}[kind]
            # The fastest engine's row, and its ratio (not the largest ratio of any engine: a probe taken at
            # a bad moment would make a slow engine look best).
            r = best_of(bench, key="keys_per" + ("_cpu_s" if cpu else "_s"), threads=1, **kw)
            x = r.get(key) if r else None
            if x is None:
                cells.append("–")
                verdicts.append("–")
                continue
            engine = r["label"] or r.get("engine")
            if kind == "rate":
                cells.append(f"{mps(x)} M/s ({engine})")
            else:
                base = r["keys_per_cpu_s" if cpu else "keys_per_s"]
                cells.append(f"{x:.2f}× ({mps(base)} M/s, {engine})")
            verdicts.append("yes" if x >= threshold else "**no**")
        # The targets name a 2-core AVX2 machine: the AVX2 engine's figure on this one, where it was measured.
        r = b.get(bench, engine="AVX2", threads=1, **kw)
        avx2 = "–"
        if r and r.get("keys_per_s"):
            x = r["keys_per_s"] if kind == "rate" else r.get("vs_probe" if kind == "probe" else "vs_reference")
            avx2 = f"{mps(x)} M/s" if kind == "rate" else f"{x:.2f}× ({mps(r['keys_per_s'])} M/s)"
        out.append([what, target] + cells + [" / ".join(verdicts), avx2])

    check("contains, 256 KiB cacheline512", "floor ≥ 300 M/s", "bloom_contains", "rate", 300e6,
          layout="cacheline512", keys="u64", size="256KiB")
    check("contains, 256 KiB cacheline512", "target ≥ 600 M/s", "bloom_contains", "rate", TARGET_CONTAINS_256K,
          layout="cacheline512", keys="u64", size="256KiB")
    check("add, 256 KiB cacheline512", "target ≥ 400 M/s", "bloom_add", "rate", TARGET_ADD_256K,
          layout="cacheline512", keys="u64", size="256KiB")
    check("contains, 1 GiB cacheline512", "floor ≥ 0.5× probe", "bloom_contains", "probe", 0.5,
          layout="cacheline512", keys="u64", size="1GiB")
    check("contains, 1 GiB cacheline512", "target ≥ 0.85× probe", "bloom_contains", "probe", 0.85,
          layout="cacheline512", keys="u64", size="1GiB")
    check("add, 1 GiB cacheline512", "target ≥ 0.80× probe", "bloom_add", "probe", 0.8,
          layout="cacheline512", keys="u64", size="1GiB")
    check("HLL add, XXH64", "floor ≥ 300 M/s", "hll_add", "rate", 300e6, keys="u64", hash="xxh64")
    check("HLL add, XXH64", "target ≥ 0.80× hashing alone", "hll_add", "reference", 0.8, keys="u64", hash="xxh64")
    check("HLL add, pre-hashed", "target ≥ 1 G/s", "hll_add", "rate", 1e9, keys="prehashed")
    check("Bloom add, 16-byte strings, 256 KiB", "target ≥ 200 M/s", "bloom_add", "rate", TARGET_STR16,
          layout="cacheline512", keys="str16", size="256KiB")
    check("HLL add, 16-byte strings, XXH64", "target ≥ 200 M/s", "hll_add", "rate", TARGET_STR16, keys="str16", hash="xxh64")
    table1 = table(["operation (u64 keys unless said, 1 thread)", "floor / target", "per wall-clock second",
                    "per CPU second", "met (wall / CPU)", "AVX2 engine, per wall-clock second"], out)

    rows = []
    if b.all_threads > 1:
        for bench, kw, what in (
                ("bloom_contains", dict(layout="cacheline512", keys="u64", size="256KiB"), "contains 256 KiB"),
                ("bloom_add", dict(layout="cacheline512", keys="u64", size="256KiB"), "add 256 KiB"),
                ("bloom_contains", dict(layout="cacheline512", keys="u64", size="1GiB"), "contains 1 GiB"),
                ("bloom_add", dict(layout="cacheline512", keys="u64", size="1GiB"), "add 1 GiB"),
                ("hll_add", dict(keys="u64", hash="xxh64"), "HLL add XXH64"),
                ("hll_add", dict(keys="prehashed"), "HLL add pre-hashed"),
                ("bloom_add", dict(layout="cacheline512", keys="str16", size="256KiB"), "add 256 KiB, strings"),
                ("hll_add", dict(keys="str16", hash="xxh64"), "HLL add, strings")):
            r1 = b.get(bench, engine=b.best, threads=1, **kw)
            rn = b.get(bench, engine=b.best, threads=b.all_threads, **kw)
            s = rn["keys_per_s"] / r1["keys_per_s"] if r1 and rn else None
            p = rn["probe"] / r1["probe"] if r1 and rn else None
            # Hashing alone shares nothing between threads (each streams its keys and hashes them into a
            # private buffer): its speed-up is what the machine gave such work, beside the probe's.
            hkeys = "str16" if kw.get("keys") == "str16" else "u64"
            h1 = b.get("hash", keys=hkeys, hash="xxh64", engine=b.best, threads=1)
            hn = b.get("hash", keys=hkeys, hash="xxh64", engine=b.best, threads=b.all_threads)
            hs = hn["keys_per_s"] / h1["keys_per_s"] if h1 and hn else None
            rows.append([what, b.best, mps(r1 and r1["keys_per_s"]), mps(rn and rn["keys_per_s"]), ratio(s),
                         "–" if s is None else ("yes" if s >= 1.8 else "**no**"), ratio(p), ratio(hs),
                         "–" if not r1 else "interleaved" if r1.get("interleaved") else "back to back"])
    table2 = table(["operation", "engine", "1 thread M/s", f"{b.all_threads} threads M/s", "speed-up (target ≥ 1.8)",
                    "met", "probe's own speed-up", f"hashing alone's speed-up ({'u64 or str16'})", "measured in"],
                   rows)
    # Each vCPU's speed alone (in-cache hashing pinned to it): unequal vCPUs cap a speed-up below the
    # thread count however well the work divides.
    vcpus = sorted((int(r["cpu"]), r["keys_per_s"]) for r in b.rows if r["bench"] == "vcpu_speed" and "keys_per_s" in r)
    vcpu_note = ""
    if len(vcpus) > 1:
        rates = [x for _, x in vcpus]
        vcpu_note = ("Each vCPU alone (in-cache XXH64 of u64 keys, the benchmark pinned to it, medians): "
                     + ", ".join(f"cpu {c} {mps(x)} M keys/s" for c, x in vcpus)
                     + f". Work that divides perfectly over these {len(rates)} vCPUs gains at most "
                     f"{sum(rates) / max(rates):.2f}x over one thread on the fastest of them (the 1-thread runs are "
                     "not pinned). ")
    if all(r.get("interleaved") for r in b.rows):
        passes = ("\"Interleaved\": the repetitions of every benchmark ran shuffled together with the others' of "
                  "its run (Google Benchmark's random interleaving; the 32 MiB and 1 GiB filters in a run of their "
                  "own), so that a burst of other work falls on the 1-thread and all-threads runs alike. ")
    elif any(r.get("interleaved") for r in b.rows):
        passes = ("\"Interleaved\": the benchmarks whose filters and keys set up in moments ran with their "
                  "repetitions shuffled together (Google Benchmark's random interleaving), so that a burst of other "
                  "work falls on the 1-thread and all-threads runs alike; \"back to back\": the 32 MiB and 1 GiB "
                  "benchmarks, whose filters take seconds to build, each ran its repetitions one after another. ")
    else:
        passes = ""
    return (table1 + "\n\nThe per-CPU-second figures count each thread's CPU time (keys × threads ÷ process CPU "
            "time), so they show what the code does with a core to itself on a shared machine; the probe is "
            "measured the same way for the CPU ratios. The last column is the AVX2 engine (the Highway AVX2 "
            "target pinned on this CPU, the instruction set the targets name), where the run measured it: "
            "the run measures 16-byte strings on scalar and the best engine only."
            "\n\n### Scaling with threads (wall clock, best engine)\n\n"
            + table2 + "\n\n" + passes + vcpu_note + "On a shared machine the other work takes cores away from the all-threads runs; the "
            "probe's own speed-up, measured beside it, shows how much parallelism the machine gave random reads at "
            "that moment, and the hash benchmark's (each thread streams its share of the keys and hashes them into "
            "a private buffer, nothing shared) what it gave work that shares nothing.")


def split_section(b):
    """The in-cache u64 rates split into hashing alone and the filter kernel alone (pre-hashed keys), per
    engine, and which of the two already falls short of a target on its own."""
    def hashing(keys, e):
        return b.get("hash", keys=keys, hash="xxh64", engine=e, threads=1)

    def in_cache(op, keys, e):  # one thread, 256 KiB cacheline512 filter
        return b.get(f"bloom_{op}", layout="cacheline512", keys=keys, size="256KiB", engine=e, threads=1)

    rows, short = [], {"contains": [], "add": []}
    targets = {"contains": TARGET_CONTAINS_256K, "add": TARGET_ADD_256K}
    for e in b.engines:
        h = hashing("u64", e)
        cells = [e, mps(h and h["keys_per_s"])]
        for op in ("contains", "add"):
            k = in_cache(op, "prehashed", e)
            u = in_cache(op, "u64", e)
            serial = (1 / (1 / h["keys_per_s"] + 1 / k["keys_per_s"])) if h and k else None
            cells += [mps(k and k["keys_per_s"]), mps(serial), mps(u and u["keys_per_s"])]
            if h and k:
                parts = [f"hashing alone {mps(h['keys_per_s'])}"] if h["keys_per_s"] < targets[op] else []
                if k["keys_per_s"] < targets[op]:
                    parts.append(f"kernel alone {mps(k['keys_per_s'])}")
                if parts:
                    short[op].append(f"{e} ({', '.join(parts)} M/s)")
        rows.append(cells)
    if not any(len(r) > 2 and r[2] != "–" for r in rows):
        return "_No pre-hashed Bloom rows in this run._"
    tab = table(["engine", "hashing alone (u64, XXH64)", "contains: kernel alone (pre-hashed)",
                 "contains: hash then kernel, no overlap", "contains: u64 measured",
                 "add: kernel alone (pre-hashed)", "add: hash then kernel, no overlap", "add: u64 measured"], rows)
    lines = []
    for op in ("contains", "add"):
        if short[op]:
            lines.append(f"- {op} (target {targets[op] / 1e6:.0f} M/s): one half alone is already below the "
                         f"target on " + "; ".join(short[op]) + ".")
        else:
            lines.append(f"- {op} (target {targets[op] / 1e6:.0f} M/s): neither half alone is below the target "
                         f"on any engine.")
    e = b.best
    ks = in_cache("add", "prehashed", e)
    if ks and "reference" in ks:
        lines.append(f"- add, {e}: one 64-byte read-modify-write per random line of a 256 KiB buffer, with nothing "
                     f"else to do (the update probe, same run), ran at {mps(ks['reference'])} M/s; the add kernel "
                     f"alone reached {ratio(ks.get('vs_reference'))}× of it.")
    hs = hashing("str16", e)
    us = in_cache("add", "str16", e)
    if hs and ks and us:
        serial = 1 / (1 / hs["keys_per_s"] + 1 / ks["keys_per_s"])
        lines.append(f"- add of 16-byte strings (target {TARGET_STR16 / 1e6:.0f} M/s), {e}: hashing the strings alone "
                     f"{mps(hs['keys_per_s'])} M/s and the add kernel alone {mps(ks['keys_per_s'])} M/s make "
                     f"{mps(serial)} M/s with no overlap; measured {mps(us['keys_per_s'])} M/s.")
    clock, h = b.core_clock_hz(), hashing("u64", e)
    kc = in_cache("contains", "prehashed", e)
    uc = in_cache("contains", "u64", e)
    ua = in_cache("add", "u64", e)
    if clock and h and kc and ks and uc and ua:
        def cycles(rate):
            return f"{clock / rate:.1f}"
        lines.append(
            f"- In core cycles per key at the measured clock ({clock / 1e9:.2f} GHz), {e}: hashing alone "
            f"{cycles(h['keys_per_s'])}, the contains kernel alone {cycles(kc['keys_per_s'])}, the add kernel alone "
            f"{cycles(ks['keys_per_s'])}; u64 contains measured {cycles(uc['keys_per_s'])} and add "
            f"{cycles(ua['keys_per_s'])}. At this clock the targets leave {cycles(TARGET_CONTAINS_256K)} (contains) "
            f"and {cycles(TARGET_ADD_256K)} (add) cycles per key; the measured cycles per key would meet them at "
            f"{TARGET_CONTAINS_256K * clock / uc['keys_per_s'] / 1e9:.1f} and "
            f"{TARGET_ADD_256K * clock / ua['keys_per_s'] / 1e9:.1f} GHz.")
    return ("A u64 key is hashed (XXH64) and then tested or set, so its rate cannot exceed either half's. "
            "The halves are measured apart in the same run: the hash benchmark, and the filter kernel fed "
            "pre-hashed keys (the XXH64 hashes of the same u64 keys, so the same blocks and bits). "
            "\"No overlap\" is 1 / (1/hash + 1/kernel); a measured rate above it means the two overlapped. "
            "M keys/s, one thread, 256 KiB cacheline512, k = 6.\n\n" + tab + "\n\n" + "\n".join(lines))


def probes_section(b):
    rows = []
    for s in SIZES:
        for t in sorted({r["threads"] for r in b.rows}):
            r = next((r for r in b.rows if r["bench"].startswith("bloom_") and r.get("size") == s
                      and r["threads"] == t), None)
            u = next((r for r in b.rows if r["bench"] == "bloom_add" and r.get("size") == s
                      and r["threads"] == t and "reference" in r), None)
            if r:
                rows.append([s, t, mps(r["probe"]), mps(r.get("probe_cpu")), mps(u and u["reference"]),
                             mps(u and u.get("reference_cpu"))])
    seq = []
    for t in sorted({r["threads"] for r in b.rows}):
        r = b.get("hll_add", keys="u64", hash="xxh64", engine="scalar", threads=t)
        if r:
            seq.append([t, mps(r["probe"]), f"{r['probe'] * 8 / 1e9:.1f}", mps(r.get("probe_cpu"))])
    return (table(["buffer", "threads", "random 64-byte reads, M/s", "per CPU second, M/s",
                   "random 64-byte updates, M/s", "per CPU second, M/s"], rows) + "\n\n" +
            "Updates (the probe quoted beside Bloom add): each thread ORs a value into whole random lines of its "
            "own slice of the buffer, one 64-byte vector store per line where the CPU has one; the least memory "
            "work an add does per key.\n\n" +
            "Sequential read of the HLL key column (16 Mi u64 keys, 128 MiB):\n\n" +
            table(["threads", "M keys/s", "GB/s", "per CPU second, M keys/s"], seq))


def bloom_section(b):
    out = []
    cases = [("contains", "cacheline512"), ("add", "cacheline512"), ("count", "cacheline512"),
             ("contains", "parquet_sbbf"), ("add", "parquet_sbbf")]
    main = b.engines[:2]
    for op, layout in cases:
        rows = []
        for keys in ("u64", "str16"):
            for s in SIZES:
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
    for keys, h in (("u64", "xxh64"), ("u64", "redis"), ("prehashed", "none"), ("str16", "xxh64"), ("str16", "redis")):
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
                  "÷ hashing alone (CPU)", "hash benchmark M/s"], rows)


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


def peers_section(peers):
    if peers is None:
        return "_The peer comparison was not run (bench/peers/run.py)._"
    rows = []
    for r in peers["rows"]:
        fmt = (lambda x: f"{x:.3g}") if ("FPR" in r["metric"] or "error" in r["metric"]) else mps
        fmt_v = (lambda x: "–" if x is None else fmt(x))
        unit = "" if ("FPR" in r["metric"] or "error" in r["metric"]) else " M"
        rows.append([r["group"], r["peer"], r["metric"].replace("|relative error|", "abs. relative error"), fmt_v(r["peer_value"]) + unit, fmt_v(r["probkit_value"]) + unit,
                     r["probkit_threads"], f"**{r['ratio']:.2f}**" if r["ratio"] is not None else "–", r["note"]])
    miss = "\n".join(f"- **{p}: missing** — {why}" for p, why in peers.get("missing", {}).items()) or "- none"
    pr = peers.get("params", {})
    pk = peers.get("raw", {}).get("probkit_bloom", {}).get("threads_1", {})
    col = peers.get("raw", {}).get("probkit_column", {}).get("threads_1", {})
    memory = (f"\n\nMemory (issue 4): the probkit filter above holds {pk.get('bytes', 0):,} bytes of bitset "
              f"({pk.get('bits_per_key', 0):.2f} bits/key) plus a fixed-size object")
    if col.get("register_bytes"):
        memory += f"; an HLL with p = 14 holds {col['register_bytes']:,} bytes of registers (one byte each)"
    memory += "."
    return (f"Filters: {pr.get('filter', {}).get('keys', '?'):,} u64 keys inserted, as many never-inserted keys "
            f"queried (so the hit rate is the FPR), capacity {pr.get('filter', {}).get('capacity', '?'):,} at "
            f"FPR 0.01 for every filter (probkit: `for_capacity`, cacheline512, "
            f"{pk.get('bits_per_key', 0):.2f} bits/key, k={pk.get('k', '?')}); libbloom at its own size, probkit at "
            f"the same number of bytes. HLL column: {pr.get('column', {}).get('keys', '?'):,} distinct u64 keys. "
            "Python peers are fed their fastest input form (a prepared list, batch calls where they exist); "
            "their time includes the interpreter, which is what a Python user gets.\n\n"
            "**ratio = probkit / peer for throughput and peer / probkit for FPR and error: > 1 means probkit is "
            "better.** Errors are one sample each (one key set), so their ratio is noisy; the HLL error over "
            "many seeds is in [ACCURACY.md](ACCURACY.md).\n\n" +
            table(["", "peer", "metric", "peer", "probkit", "probkit threads", "ratio", "note"], rows) +
            "\n\nMissing peers:\n\n" + miss + memory)


def repetitions_line(b):
    def large(r):
        return r.get("size") in ("32MiB", "1GiB")

    def reps(rows):
        return max((r["repetitions"] for r in rows), default=0)
    small_rows = [r for r in b.rows if not large(r)]
    large_rows = [r for r in b.rows if large(r)]
    if not any(r.get("interleaved") for r in b.rows):
        return f"Every figure is the **median of {reps(b.rows)} repetitions**."
    if all(r.get("interleaved") for r in large_rows):
        how_large = (f"of {reps(large_rows)} repetitions, shuffled together likewise in a run of their own, for "
                     "32 MiB and 1 GiB filters, whose repetitions each page in a filter of up to 1 GiB")
    else:
        how_large = (f"of {reps(large_rows)} repetitions back to back for 32 MiB and 1 GiB filters, which take "
                     "seconds to build")
    return (f"Every figure is a **median**: of {reps(small_rows)} repetitions shuffled together with the other "
            f"benchmarks' (random interleaving) for 256 KiB filters, HLL and hashing, which set up in moments; "
            f"{how_large}.")


def write_benchmarks(b, peers, docs):
    plots = []
    for op, layout in (("contains", "cacheline512"), ("add", "cacheline512"), ("contains", "parquet_sbbf")):
        for t in sorted({r["threads"] for r in b.rows}):
            fname = f"bloom_{op}_{layout}_t{t}.png"
            plot_bloom(b, docs, op, layout, t, fname)
            plots.append(f"![Bloom {op} {layout} {t} threads](img/{fname})")
    m = b.machine
    text = f"""# probkit benchmarks

Generated by `scripts/bench-report.sh` (which runs `build/bench/probkit_bench`, `bench/peers/run.py`
and `bench/report.py`); do not edit by hand. Raw results: [docs/data/](data/).
CPU only: the CUDA backend's figures, measured on a GPU, are in [BENCHMARKS-GPU.md](BENCHMARKS-GPU.md).

**Machine that produced every figure on this page:** {b.machine_line()}.
Commit `{m.get('commit', '?')}`, {m.get('date', '?')}. Engines measured: {', '.join(b.engines)}
(`scalar` is the reference backend; the others are Highway targets of the Simd backend, pinned with
`probkit::set_simd_target`). Best engine on this CPU: **{b.best}**. "All threads" = {b.all_threads}.
{m.get('note', '')}

{repetitions_line(b)} Each benchmark prints beside its
throughput a speed-of-light probe measured in the same process on a buffer of the same size
(DESIGN.md §7): for Bloom filters the rate of independent random 64-byte reads (batched, prefetched),
for HLL and hashing the sequential read rate of the key column in keys/s; "÷ probe" is the ratio.
The probe is a plain loop (the better of a prefetched and a direct schedule), not a proof of the
hardware's limit: a ratio a little above 1 means the kernel keeps more misses in flight than it does.
Filters are loaded to 10 bits/key (cacheline512 k = 6, parquet_sbbf k = 8) and queried with batches
of 2^20 keys, half of them inserted; keys come from pools of 16 × 2^20 so that a 1 GiB filter is not
served from a large L3 cache.

## Floors (issue 2) and targets (issue 4)

The floors and targets are stated for a 2-core AVX2 machine; these figures come from the machine
above. Each figure is the fastest engine's (named in parentheses) at one thread.

{floors_section(b)}

### The in-cache targets, hash and kernel apart

{split_section(b)}

## Speed-of-light probes (same run)

{probes_section(b)}

## Bloom filters: throughput vs filter size

{chr(10).join(plots)}

_Plots: {b.machine_line()}; u64 keys; one line per engine; the dashed line is the read probe, the dotted one (add) the update probe._

{bloom_section(b)}

## Every SIMD target (u64 keys, one thread)

M keys/s and, in parentheses, the ratio to the probe.

{sweep_section(b)}

## HyperLogLog add (p = 14)

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

## Peers (issue 4), same run, same keys

Machine: {peers['machine']['cpu'] if peers else '?'}, {peers['machine']['cores'] if peers else '?'} cores;
probkit engine: {(peers or {}).get('raw', {}).get('probkit_bloom', {}).get('threads_1', {}).get('served', '?')}.

{peers_section(peers)}
"""
    with open(os.path.join(docs, "BENCHMARKS.md"), "w") as f:
        f.write(text)
