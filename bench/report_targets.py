"""A machine page's sections (docs/benchmarks/) on the floors and targets (the verdicts, the thread speed-ups,
the in-cache rates split into hashing and kernel) and on the speed-of-light probes of the run."""
import math

from report_data import mps, mps_step, ratio, spread, table

# Issue 4's in-cache targets (M keys/s, one thread, u64 keys, 256 KiB cacheline512), quoted by the floors
# table and by the hash/kernel split.
TARGET_CONTAINS_256K = 600e6
TARGET_ADD_256K = 400e6
TARGET_STR16 = 200e6  # Bloom add and HLL add of 16-byte strings


def measured(x):
    """Whether x is a figure: present, finite and above zero. A rate over a zero probe (inf, or NaN) or a zero
    CPU time is no measurement, and is reported missing rather than judged."""
    return x is not None and math.isfinite(x) and x > 0


def cut(x, decimals):
    """x cut (not rounded) to `decimals`: 1e-9 of a step over, so that a value whose binary form falls just
    below its decimal one (1.13 * 100 = 112.99999999999999) keeps it."""
    scale = 10 ** decimals
    return math.floor(x * scale + 1e-9) / scale


def ratio3(x):
    """A ratio as the floors table prints it (and judges it): cut, not rounded, to 3 decimals, so that a ratio
    below a bar never prints as the bar and passes it (0.8496 printed 0.850 and met 0.85)."""
    return "–" if x is None else f"{cut(x, 3):.3f}"


def cut_ratio2(x):
    """A ratio cut to 2 decimals, as the scaling table prints it (beside the verdicts table's 3)."""
    return "–" if not measured(x) else f"{cut(x, 2):.2f}"


def cut_mps(x):
    """(text, value) of a rate as mps prints it, cut, not rounded, for the same reason (599.6 M/s printed 600
    and met 600); ("–", None) where x is no measurement."""
    if not measured(x):
        return "–", None
    step = mps_step(x)
    shown = cut(x / step, 0) * step
    return mps(shown), shown


# Issue 2's floors and issue 4's targets: (operation, bar as printed, benchmark, kind, threshold, the
# benchmark's fields). kind: 'rate' (keys/s), 'probe' (÷ probe), 'reference' (÷ hashing alone). The
# verdicts table of each machine's page and the summary of every machine on the index page judge these.
TARGETS = (
    ("contains, 256 KiB cacheline512", "floor ≥ 300 M/s", "bloom_contains", "rate", 300e6,
     dict(layout="cacheline512", keys="u64", size="256KiB")),
    ("contains, 256 KiB cacheline512", "target ≥ 600 M/s", "bloom_contains", "rate", TARGET_CONTAINS_256K,
     dict(layout="cacheline512", keys="u64", size="256KiB")),
    ("add, 256 KiB cacheline512", "target ≥ 400 M/s", "bloom_add", "rate", TARGET_ADD_256K,
     dict(layout="cacheline512", keys="u64", size="256KiB")),
    ("contains, 1 GiB cacheline512", "floor ≥ 0.5× probe", "bloom_contains", "probe", 0.5,
     dict(layout="cacheline512", keys="u64", size="1GiB")),
    ("contains, 1 GiB cacheline512", "target ≥ 0.85× probe", "bloom_contains", "probe", 0.85,
     dict(layout="cacheline512", keys="u64", size="1GiB")),
    ("add, 1 GiB cacheline512", "target ≥ 0.80× probe", "bloom_add", "probe", 0.8,
     dict(layout="cacheline512", keys="u64", size="1GiB")),
    ("HLL add, XXH64", "floor ≥ 300 M/s", "hll_add", "rate", 300e6, dict(keys="u64", hash="xxh64")),
    ("HLL add, XXH64", "target ≥ 0.80× hashing alone", "hll_add", "reference", 0.8, dict(keys="u64", hash="xxh64")),
    ("HLL add, pre-hashed", "target ≥ 1 G/s", "hll_add", "rate", 1e9, dict(keys="prehashed")),
    ("Bloom add, 16-byte strings, 256 KiB", "target ≥ 200 M/s", "bloom_add", "rate", TARGET_STR16,
     dict(layout="cacheline512", keys="str16", size="256KiB")),
    ("HLL add, 16-byte strings, XXH64", "target ≥ 200 M/s", "hll_add", "rate", TARGET_STR16,
     dict(keys="str16", hash="xxh64")),
)


def target_rows(b, bench, kw):
    """The run's one-thread rows of a floor's or target's benchmark, one per engine."""
    return [r for r in b.rows if r["bench"] == bench and r["threads"] == 1
            and all(r.get(k) == v for k, v in kw.items())]


def target_figure(r, kind, cpu):
    """(text, value as printed, standard deviation over the repetitions as printed, or None) of r's figure for
    a floor or target of this kind, per wall-clock second or (cpu) per CPU second; (None, None, None) where r
    lacks it or holds no measurement (see measured)."""
    rate_key = "keys_per_cpu_s" if cpu else "keys_per_s"
    key = rate_key if kind == "rate" else ("vs_probe" if kind == "probe" else "vs_reference") + ("_cpu" if cpu else "")
    x = r.get(key)
    if not measured(x):
        return None, None, None
    sd = r.get("sd", {}).get(key)
    sd = sd if sd is not None and math.isfinite(sd) else None
    if kind == "rate":
        text, shown = cut_mps(x)
        if sd is None:
            return f"{text} M/s", shown, None
        step = mps_step(sd)
        return f"{text} ± {mps(sd)} M/s", shown, round(sd / step) * step
    spread = f" ± {sd:.3f}" if sd is not None else ""
    return (f"{ratio3(x)}{spread} ({cut_mps(r.get(rate_key))[0]} M/s)", float(ratio3(x)),
            None if sd is None else float(f"{sd:.3f}"))


def engine_figure(b, target, engine):
    """An engine's one-thread figure (per wall-clock second) for one of TARGETS, as the verdicts print it, or
    None where the run did not measure it."""
    _, _, bench, kind, _, kw = target
    r = next((r for r in target_rows(b, bench, kw) if r.get("engine") == engine), None)
    return target_figure(r, kind, False)[0] if r else None


def served_verdict(b, target, cpu=False):
    """(figure text, verdict) of the engine the library serves on the run's CPU (b.best), one thread, for one
    of TARGETS; ("not measured", "**missing**") where the run did not measure it. The verdict is on the figure as
    printed (cut, not rounded), so the two cannot disagree, and says "within noise" where the bar lies within
    one standard deviation of it."""
    _, _, bench, kind, threshold, kw = target
    served = next((r for r in target_rows(b, bench, kw) if r.get("engine") == b.best), None)
    text, shown, sd = target_figure(served, kind, cpu) if served else (None, None, None)
    if text is None:
        return "not measured", "**missing**"
    if served.get("label") and served["label"] != b.best:
        text += f" (served by {served['label']})"
    verdict = "yes" if shown >= threshold else "**no**"
    # On the figures as printed: 0.860 ± 0.010 against 0.85 is within the noise, whatever float 0.86 - 0.85 is.
    if sd is not None and round(abs(shown - threshold), 9) <= round(sd, 9):
        verdict += " (within noise)"
    return text, verdict


def verdicts_table(b):
    """One row per floor/target, judged on the engine the library serves on this CPU (b.best) at one thread:
    its figure per wall-clock second and per CPU second and whether each meets the bar, judged on the figure
    as printed; beside it, for information only, the fastest other pinned target and the AVX2 target."""
    out = []
    for target in TARGETS:
        what, bar, bench, kind, _, kw = target
        (wall, wall_verdict), (cpu, cpu_verdict) = served_verdict(b, target), served_verdict(b, target, cpu=True)
        rs = target_rows(b, bench, kw)
        others = [r for r in rs if r.get("engine") != b.best and r.get("keys_per_s")]
        fastest = max(others, key=lambda r: r["keys_per_s"], default=None)
        other = f"{fastest['engine']}: {target_figure(fastest, kind, False)[0] or '–'}" if fastest else "–"
        # The targets name a 2-core AVX2 machine: the AVX2 engine's figure on this one, where it was measured.
        out.append([what, bar, wall, cpu, f"{wall_verdict} / {cpu_verdict}", other,
                    engine_figure(b, target, "AVX2") or "–"])
    return table(["operation (u64 keys unless said, 1 thread)", "floor / target",
                  f"{b.best} (served), per wall-clock second", "per CPU second", "met (wall / CPU)",
                  "fastest other target, per wall-clock second (information)", "AVX2 target, per wall-clock second"],
                 out)


# The add into a 1 GiB filter and its ideal (bench/bloom_bench.cc's bloom_add_owned): a row each in the scaling
# table, and the sentence that sets one against the other.
ADD_1GIB = dict(layout="cacheline512", keys="u64", size="1GiB")
ADD_1GIB_IDEAL = dict(layout="cacheline512", keys="prehashed", size="1GiB")
SCALING_ROWS = (
    ("bloom_contains", dict(layout="cacheline512", keys="u64", size="256KiB"), "contains 256 KiB"),
    ("bloom_add", dict(layout="cacheline512", keys="u64", size="256KiB"), "add 256 KiB"),
    ("bloom_contains", dict(layout="cacheline512", keys="u64", size="1GiB"), "contains 1 GiB"),
    ("bloom_add", ADD_1GIB, "add 1 GiB"),
    ("bloom_add_owned", ADD_1GIB_IDEAL, "add 1 GiB, ideal (below the table)"),
    ("hll_add", dict(keys="u64", hash="xxh64"), "HLL add XXH64"),
    ("hll_add", dict(keys="prehashed"), "HLL add pre-hashed"),
    ("bloom_add", dict(layout="cacheline512", keys="str16", size="256KiB"), "add 256 KiB, strings"),
    ("hll_add", dict(keys="str16", hash="xxh64"), "HLL add, strings"))


def scaling_row(b, engine, bench, kw, what):
    """One row of the thread speed-ups: the rates at 1 and all threads, the speed-up and its verdict, and the
    probe beside it: its own speed-up and the operation's rate as a fraction of it at each thread count. The
    probe is the one that bounds the operation: random line reads for contains, random line updates for add
    (the least memory work an add does), the sequential read of the key column for HLL add."""
    r1 = b.get(bench, engine=engine, threads=1, **kw)
    rn = b.get(bench, engine=engine, threads=b.all_threads, **kw)
    probe_key = "reference" if bench.startswith("bloom_add") else "probe"
    judged = bench != "bloom_add_owned"  # the ideal is there to compare the add with

    def rate(r, key):
        return r.get(key) if r else None

    def div(x, y):
        return x / y if x and y else None

    s = div(rate(rn, "keys_per_s"), rate(r1, "keys_per_s"))
    # Hashing alone shares nothing between threads (each streams its keys and hashes them into a private
    # buffer): its speed-up is what the machine gave such work, beside the probe's.
    # (None for the ideal of the add, which hashes nothing.)
    hkeys = None if bench == "bloom_add_owned" else "str16" if kw.get("keys") == "str16" else "u64"
    h1 = hkeys and b.get("hash", keys=hkeys, hash="xxh64", engine=engine, threads=1)
    hn = hkeys and b.get("hash", keys=hkeys, hash="xxh64", engine=engine, threads=b.all_threads)
    # Judged, as printed, on the speed-up cut to 2 decimals: 1.797 printed 1.80 beside a "no".
    shown = None if s is None else cut(s, 2)
    if s is None and judged and engine == b.best:
        met = "**missing**"
    elif s is None or not judged:
        met = "–"
    elif engine == b.best:
        met = "yes" if shown >= 1.8 else "**no**"
    else:  # another engine's verdict is for information: the library serves b.best here
        met = "(yes)" if shown >= 1.8 else "(no)"
    # Rates cut as the verdicts table cuts them, and "÷ probe" the median of the per-repetition ratios, as
    # there: a rate over the median probe paired figures of different repetitions (0.84 here, 0.828 there).
    return [what, engine, cut_mps(rate(r1, "keys_per_s"))[0], cut_mps(rate(rn, "keys_per_s"))[0], ratio(shown), met,
            ratio(div(rate(rn, probe_key), rate(r1, probe_key))),
            cut_ratio2(rate(r1, "vs_" + probe_key)),
            cut_ratio2(rate(rn, "vs_" + probe_key)),
            ratio(div(rate(hn, "keys_per_s"), rate(h1, "keys_per_s"))),
            "–" if not r1 else "interleaved" if r1.get("interleaved") else "back to back"]


def floors_section(b):
    """The verdicts, then the thread speed-ups of the served engine and of the AVX2 target."""
    table1 = verdicts_table(b)
    rows = []
    # The served engine's speed-ups, and the AVX2 target's where the run measured it at every thread count: the
    # targets name a 2-core AVX2 machine, and a faster core meets the memory's limits at fewer threads.
    avx2 = b.best != "AVX2" and any(r.get("engine") == "AVX2" and r["threads"] == b.all_threads for r in b.rows)
    scaling_engines = [b.best] + (["AVX2"] if avx2 else [])
    if b.all_threads > 1:
        for engine in scaling_engines:
            for bench, kw, what in SCALING_ROWS:
                if bench == "bloom_add_owned" and not b.get(bench, engine=engine, **kw):
                    continue  # the ideal is information: left out where the run did not measure it
                rows.append(scaling_row(b, engine, bench, kw, what))
    table2 = table(["operation", "engine", "1 thread M/s", f"{b.all_threads} threads M/s", "speed-up (target ≥ 1.8)",
                    "met", "bounding probe's own speed-up", "÷ bounding probe, 1 thread",
                    f"÷ bounding probe, {b.all_threads} threads",
                    "hashing alone's speed-up (u64 or str16)", "measured in"], rows)
    # The public add at all threads against its ideal (no hashing, no exchange), per engine.
    ideal = []
    for engine in scaling_engines if b.all_threads > 1 else []:
        add = b.get("bloom_add", engine=engine, threads=b.all_threads, **ADD_1GIB)
        owned = b.get("bloom_add_owned", engine=engine, threads=b.all_threads, **ADD_1GIB_IDEAL)
        if add and owned and add.get("keys_per_s") and owned.get("keys_per_s"):
            ideal.append(f"{engine} {cut_mps(add['keys_per_s'])[0]} M keys/s against "
                         f"{cut_mps(owned['keys_per_s'])[0]} M keys/s, "
                         f"add ÷ ideal {add['keys_per_s'] / owned['keys_per_s']:.2f}")
    ideal_note = ("The ideal of the add into a large filter (\"ideal\" row, not judged) runs the bare add kernel "
                  "with each worker inserting only the pre-hashed keys of its own blocks, sorted out before the "
                  "timing: no hashing, and nothing handed between the workers. The public add at "
                  f"{b.all_threads} threads (hashing its keys, each worker setting its own blocks' keys: two workers "
                  "on AVX-512 each hash every key and add their own in one loop since bebee14; before it, and "
                  "otherwise, each worker hands the owners of the other blocks the hashes of its share) against it: " + "; ".join(ideal) + ". ") if ideal else ""
    avx2_note = ("The AVX2 rows' verdicts, in parentheses, are for information: the library serves "
                 f"{b.best} on this CPU. A faster core comes nearer a memory ceiling at one thread and so has less "
                 "to gain from more threads: compare the two engines' ÷ probe figures. ") if avx2 else ""
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
    return (table1 + "\n\nThe verdicts are the served engine's; the fastest other target is there for information "
            "(a target the library does not pick on this CPU can win a single row). Each figure is a median over "
            "the repetitions, and each verdict is on the figure as printed (cut, not rounded: rates to whole "
            "M/s, ratios to 3 decimals), so the two cannot disagree. Beside each figure, ± its standard deviation "
            "over the repetitions (Google Benchmark's stddev aggregate); for the ratio targets the figure is the "
            "median of the per-repetition ratios, with the rate in parentheses. A verdict whose threshold lies "
            "within one standard deviation of the figure, both as printed, is within the noise of the run, and is "
            "marked so. The per-CPU-second figures count each thread's CPU time (keys × threads ÷ "
            "process CPU time), so they show what the code does with a core to itself on a shared machine; the "
            "probe is measured the same way for the CPU ratios. The last column is the AVX2 engine (the Highway "
            "AVX2 target pinned on this CPU, the instruction set the targets name), where the run measured it."
            "\n\n### Scaling with threads (wall clock)\n\n"
            + table2 + "\n\nThe served engine, and the AVX2 target where the run measured it at every thread count "
            "(the targets name a 2-core AVX2 machine). Beside each speed-up, the probe that bounds the operation, "
            "measured beside it at the same thread count: random 64-byte reads for contains, random 64-byte updates "
            "for add (the verdicts table above sets add beside the read probe), the sequential read of the key "
            "column for HLL add; \"÷ bounding probe\" is the median of the per-repetition ratios, as in the "
            "verdicts table (cut to 2 decimals). Its own speed-up shows how much parallelism the machine gave that kind of memory "
            "work at that moment, and the operation's rate as a fraction of it shows how close the operation came "
            "to it. Where the probe is the operation's ceiling, its speed-up can reach at most the probe's own "
            "speed-up ÷ its 1-thread ÷ probe figure, whatever the code does. Hashing alone's speed-up (each thread "
            "streams its share of the keys and hashes them into a private buffer, nothing shared) shows what the "
            "machine gave work that shares nothing. "
            + avx2_note + ideal_note + passes + vcpu_note
            + "On a shared machine the other work takes cores away from the all-threads runs.")


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
            serial = (1 / (1 / h["keys_per_s"] + 1 / k["keys_per_s"])
                      if h and k and measured(h["keys_per_s"]) and measured(k["keys_per_s"]) else None)
            cells += [mps(k and k["keys_per_s"]), mps(serial), mps(u and u["keys_per_s"])]
            if h and k and measured(h["keys_per_s"]) and measured(k["keys_per_s"]):
                # Judged on the rates as printed, cut: 399.6 M/s read "kernel alone 400 M/s", below 400.
                (h_text, h_shown), (k_text, k_shown) = cut_mps(h["keys_per_s"]), cut_mps(k["keys_per_s"])
                parts = [f"hashing alone {h_text}"] if h_shown < targets[op] else []
                if k_shown < targets[op]:
                    parts.append(f"kernel alone {k_text}")
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
    updates = b.probe_spread("reference", "256KiB", 1, bench="bloom_add")
    if ks and "reference" in ks and updates:
        med, lo, hi, n = updates
        lines.append(f"- add, {e}: one 64-byte read-modify-write per random line of a 256 KiB buffer, with nothing "
                     f"else to do (the update probe, same run), ran at {mps(med)} M/s: the median of the probes "
                     f"measured beside the {n} add benchmarks of 256 KiB at one thread ({mps(lo)}–{mps(hi)}), as in "
                     f"the probe table below. The one measured beside this benchmark (pre-hashed keys) ran at "
                     f"{mps(ks['reference'])} M/s, and the add kernel alone reached "
                     f"{ratio(ks.get('vs_reference'))}× of it.")
    hs = hashing("str16", e)
    us = in_cache("add", "str16", e)
    if hs and ks and us:
        serial = 1 / (1 / hs["keys_per_s"] + 1 / ks["keys_per_s"])
        lines.append(f"- add of 16-byte strings (target {TARGET_STR16 / 1e6:.0f} M/s), {e}: hashing the strings alone "
                     f"{mps(hs['keys_per_s'])} M/s and the add kernel alone {mps(ks['keys_per_s'])} M/s make "
                     f"{mps(serial)} M/s with no overlap; measured {mps(us['keys_per_s'])} M/s.")
    lines += cycles_line(b, e, hashing("u64", e), in_cache("contains", "prehashed", e), ks,
                         in_cache("contains", "u64", e), in_cache("add", "u64", e))
    return ("A u64 key is hashed (XXH64) and then tested or set, so its rate cannot exceed either half's. "
            "The halves are measured apart in the same run: the hash benchmark, and the filter kernel fed "
            "pre-hashed keys (the XXH64 hashes of the same u64 keys, so the same blocks and bits). "
            "\"No overlap\" is 1 / (1/hash + 1/kernel); a measured rate above it means the two overlapped. "
            "M keys/s, one thread, 256 KiB cacheline512, k = 6.\n\n" + tab + "\n\n" + "\n".join(lines))


def cycles_line(b, e, h, kc, ks, uc, ua):
    """The split in core cycles per key, each rate at the core clock of the run (file) its row came from."""
    rows = (h, kc, ks, uc, ua)
    if not all(rows) or not all(b.core_clock_hz(r) for r in rows):
        return []

    def cycles(r):
        return f"{b.core_clock_hz(r) / r['keys_per_s']:.1f}"
    sources = sorted({r["source"] for r in rows})
    clocks = {f"{b.core_clock_hz(r) / 1e9:.2f}" for r in rows}
    if len(clocks) == 1:
        where = f"at the clock measured in their run ({clocks.pop()} GHz, {', '.join(sources)})"
    else:
        where = "each at the clock measured in the run of its own file (" + ", ".join(
            f"{s} {b.core_clock_hz(next(r for r in rows if r['source'] == s)) / 1e9:.2f} GHz" for s in sources) + ")"
    clock_c, clock_a = b.core_clock_hz(uc), b.core_clock_hz(ua)
    return [f"- In core cycles per key {where}, {e}: hashing alone {cycles(h)}, the contains kernel alone "
            f"{cycles(kc)}, the add kernel alone {cycles(ks)}; u64 contains measured {cycles(uc)} and add "
            f"{cycles(ua)}. At that clock the targets leave {clock_c / TARGET_CONTAINS_256K:.1f} (contains) and "
            f"{clock_a / TARGET_ADD_256K:.1f} (add) cycles per key; the measured cycles per key would meet them at "
            f"{TARGET_CONTAINS_256K * clock_c / uc['keys_per_s'] / 1e9:.1f} and "
            f"{TARGET_ADD_256K * clock_a / ua['keys_per_s'] / 1e9:.1f} GHz."]


def probes_section(b):
    def cell(spread):
        """median (lowest–highest) of the probes measured beside each benchmark."""
        if not spread:
            return "–"
        med, lo, hi, _ = spread
        return f"{mps(med)} ({mps(lo)}–{mps(hi)})"
    threads = sorted({r["threads"] for r in b.rows})
    rows = []
    for s in b.sizes:
        for t in threads:
            reads = b.probe_spread("probe", s, t)
            updates = b.probe_spread("reference", s, t, bench="bloom_add")
            if reads:
                rows.append([s, t, cell(reads), cell(b.probe_spread("probe_cpu", s, t)), cell(updates),
                             cell(b.probe_spread("reference_cpu", s, t, bench="bloom_add")),
                             f"{reads[3]} / {updates[3] if updates else 0}"])
    seq = []
    for t in threads:
        # The HLL and hash benchmarks of u64 and pre-hashed keys read the same 128 MiB column.
        rs = [r for r in b.rows if r["bench"] in ("hll_add", "hll_add_fresh", "hash")
              and r.get("keys") in ("u64", "prehashed") and r["threads"] == t]
        wall = spread([r["probe"] for r in rs if r.get("probe")])
        cpu = spread([r["probe_cpu"] for r in rs if r.get("probe_cpu")])
        if wall:
            seq.append([t, cell(wall), f"{wall[0] * 8 / 1e9:.1f}", cell(cpu), wall[3]])
    return (table(["buffer", "threads", "random 64-byte reads, M/s", "per CPU second, M/s",
                   "random 64-byte updates, M/s", "per CPU second, M/s", "benchmarks (reads / updates)"], rows)
            + "\n\n" +
            "Every benchmark measures its probe beside itself, within seconds of its timed loop; each figure here "
            "is the median over the benchmarks of that buffer size and thread count (reads: every Bloom "
            "benchmark; updates: every Bloom add), and in parentheses the lowest and the highest, which show how "
            "much the machine moved during the run. The ratios in the other tables are each to its own "
            "benchmark's probe.\n\n"
            "Updates (the probe quoted beside Bloom add): each thread ORs a value into whole random lines of its "
            "own slice of the buffer, one 64-byte vector store per line where the CPU has one; the least memory "
            "work an add does per key.\n\n" +
            "Sequential read of the HLL key column (16 Mi u64 keys, 128 MiB), the probe beside every HLL and hash "
            "benchmark of u64 and pre-hashed keys: median (lowest–highest):\n\n" +
            table(["threads", "M keys/s", "GB/s", "per CPU second, M keys/s", "benchmarks"], seq))
