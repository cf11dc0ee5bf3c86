"""bench/report.py's inputs: loading the raw results (and refusing a set of files that mixes runs), formatting
figures, and Bench, one benchmark run with the machine that made it."""
import csv
import json
import os
import statistics

# The Bloom benchmarks' filter sizes are read from the run (Bench.sizes): the full matrix's 256 KiB, 32 MiB and
# 1 GiB, and between them a sweep of one thread's u64 contains and add (bloom_bench.cc's kSweepSizes; earlier
# runs have none).
# Filters whose repetitions page in a buffer of 32 MiB or more run apart (scripts/bench-report.sh).
LARGE_BYTES = 32 << 20

COUNTERS = ("keys_per_s", "probe", "vs_probe", "reference", "vs_reference", "hit_rate", "keys_per_cpu_s",
            "probe_cpu", "vs_probe_cpu", "reference_cpu", "vs_reference_cpu")
# The two benchmark files of a run: bench.json the large filters (or a BENCH_FILTER run's selection, alone),
# bench_interleaved.json the rest.
BENCH_FILES = ("bench.json", "bench_interleaved.json")


class ReportError(Exception):
    """Inputs the report cannot be made from (missing, or from different runs): report.py exits non-zero."""


def size_bytes(label):
    """A size label as bloom_bench.cc writes it (256KiB, 8MiB, 1GiB) in bytes."""
    for unit, shift in (("KiB", 10), ("MiB", 20), ("GiB", 30)):
        if label.endswith(unit):
            return int(label[:-3]) << shift
    raise ReportError(f"not a filter size: {label!r}")


def size_words(label):
    """32MiB -> 32 MiB."""
    return label[:-3] + " " + label[-3:]


# -- loading -----------------------------------------------------------------
def _row_of(b, source):
    """A benchmark's parsed name fields (op/key=value/...), where it came from, and its counters."""
    name = b.get("run_name", b["name"]).replace("/real_time", "")
    parts = name.split("/")
    row = {"bench": parts[0], "name": name, "label": b.get("label", ""), "source": source}
    for p in parts[1:]:
        if "=" in p:
            k, v = p.split("=", 1)
            row[k] = v
    row["threads"] = int(row.get("threads", 1))
    for c in COUNTERS:
        if c in b:
            row[c] = float(b[c])
    return row


def _failure(b):
    """Why a benchmark run did not finish (Google Benchmark's SkipWithError / SkipWithMessage), or None."""
    if b.get("error_occurred"):
        return "failed: " + (b.get("error_message") or "no message")
    if b.get("skipped"):
        return "skipped: " + (b.get("skip_message") or "no message")
    return None


def load_bench(path):
    """One Google Benchmark JSON file: (context, rows, failed). A row per benchmark: its median aggregate, with
    `sd` holding the standard deviation of each counter over the repetitions (Google Benchmark's _stddev
    aggregate) where the file has it. A benchmark with aggregates is read from them alone (a file may also
    hold each repetition: one of those is not the median); without, from its repetitions (their median, and
    their standard deviation when there are several). `failed`: (file, benchmark, why) for each benchmark run
    that ended in an error or a skip, or has no counters; those are in no row."""
    source = os.path.basename(path)
    with open(path) as f:
        data = json.load(f)
    groups = {}  # run name -> {"plain": [runs], aggregate name: run}, in file order
    for b in data["benchmarks"]:
        g = groups.setdefault(b.get("run_name", b["name"]), {"plain": []})
        if b.get("run_type") == "aggregate":
            g[b.get("aggregate_name")] = b
        else:
            g["plain"].append(b)
    rows, failed = [], []
    for name, g in groups.items():
        shown = name.replace("/real_time", "")
        for b in g["plain"]:
            if _failure(b):
                failed.append((source, shown, _failure(b)))
        ok = [b for b in g["plain"] if not _failure(b)]
        if "median" in g:
            row = _row_of(g["median"], source)
            row["repetitions"] = int(g["median"].get("repetitions", 1))
            sd = g.get("stddev", {})
            row["sd"] = {c: float(sd[c]) for c in COUNTERS if c in sd}
        elif ok:
            # Without aggregates (one repetition, or aggregates not asked for) the repetitions themselves.
            runs = [_row_of(b, source) for b in ok]
            row = dict(runs[0], repetitions=len(runs), sd={})
            for c in COUNTERS:
                xs = [r[c] for r in runs if c in r]
                if xs:
                    row[c] = statistics.median(xs)
                if len(xs) > 1:
                    row["sd"][c] = statistics.stdev(xs)
        else:
            continue  # every repetition failed: listed above
        if "keys_per_s" not in row:
            failed.append((source, shown, "no counters (the benchmark reported none)"))
            continue
        rows.append(row)
    return data.get("context", {}), rows, failed


def load_csv(path):
    meta, lines = {}, []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                k, _, v = line[1:].partition(":")
                meta[k.strip()] = v.strip()
            else:
                lines.append(line)
    return meta, list(csv.DictReader(lines))


def load_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


def require(path, what):
    """The path, or a ReportError that says which input is missing and what makes it."""
    if not os.path.exists(path):
        raise ReportError(f"{path} is missing ({what}); scripts/bench-report.sh makes it. Nothing was written.")
    return path


def load_run(data):
    """The benchmark run in the folder `data`: bench.json (required), bench_interleaved.json (when the run
    made it) and machine.json (required), as a Bench. Refuses files that carry different run ids, or where
    some carry one and others not: their figures would be set side by side as if measured together."""
    machine = load_json(require(os.path.join(data, "machine.json"), "the machine and commit of the run"))
    require(os.path.join(data, "bench.json"), "probkit_bench's results")
    contexts, rows, failed = {}, [], []
    for name in BENCH_FILES:
        path = os.path.join(data, name)
        if not os.path.exists(path):
            continue
        ctx, rs, fs = load_bench(path)
        # Whether its repetitions were shuffled together (probkit_bench records it; earlier runs did not).
        interleaved = ctx.get("probkit_random_interleaving") == "true" or name == "bench_interleaved.json"
        contexts[name] = ctx
        rows += [dict(r, interleaved=interleaved) for r in rs]
        failed += fs
    ids = {"machine.json": machine.get("run_id")}
    ids.update({name: ctx.get("probkit_run_id") for name, ctx in contexts.items()})
    if len(set(ids.values())) > 1:
        raise ReportError(
            f"{data} mixes benchmark runs: " + ", ".join(f"{n} is from run {i or '(none recorded)'}"
                                                         for n, i in ids.items())
            + ". Rerun scripts/bench-report.sh (it replaces them together). Nothing was written.")
    return Bench(contexts, rows, machine, failed)


def load_machines(data):
    """Every machine's latest run under data/machines/: [(key, Bench, peers.json or None)], sorted by key; an
    empty folder is no run. Refuses (ReportError) a folder load_run refuses, and a data folder with no run."""
    root = os.path.join(data, "machines")
    keys = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))
                  and os.listdir(os.path.join(root, d))) if os.path.isdir(root) else []
    if not keys:
        raise ReportError(f"{root} holds no machine's run; scripts/bench-report.sh makes one. Nothing was written.")
    return [(k, load_run(os.path.join(root, k)), load_json(os.path.join(root, k, "peers.json"))) for k in keys]


def load_accuracy(data):
    """The two accuracy CSVs, ((hll meta, rows), (bloom meta, rows)); both required, and from one run where
    they name theirs."""
    hll = load_csv(require(os.path.join(data, "hll_accuracy.csv"), "probkit_accuracy hll"))
    bloom = load_csv(require(os.path.join(data, "bloom_fpr.csv"), "probkit_accuracy bloom"))
    if hll[0].get("run") != bloom[0].get("run"):
        raise ReportError(f"{data}: hll_accuracy.csv (run {hll[0].get('run') or '(none recorded)'}) and "
                          f"bloom_fpr.csv (run {bloom[0].get('run') or '(none recorded)'}) come from different "
                          "runs. Rerun scripts/bench-report.sh. Nothing was written.")
    return hll, bloom


# -- formatting --------------------------------------------------------------
def mps_step(x):
    """The step mps prints a rate of x to (the verdicts cut to it): whole M/s from 100 M/s, tenths from
    1 M/s, else thousandths."""
    return 1e6 if x >= 1e8 else 1e5 if x >= 1e6 else 1e3


def mps(x):
    """A rate in millions, with as many decimals as a small rate needs."""
    if x is None or x == 0:
        return "–"
    return f"{x / 1e6:,.{ {1e6: 0, 1e5: 1, 1e3: 3}[mps_step(x)] }f}"


def ratio(x):
    return "–" if x is None else f"{x:.2f}"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def spread(xs):
    """(median, lowest, highest, how many) of a list of figures, or None for none."""
    return (statistics.median(xs), min(xs), max(xs), len(xs)) if xs else None


def vcpus(m):
    """machine.json's CPUs: "N vCPUs" (what the OS schedules on) and, where recorded, lscpu's topology."""
    n = m.get("vcpus", m.get("cores"))  # "cores" in files before the topology was recorded: os.cpu_count()
    text = f"{n if n is not None else '?'} vCPUs"
    t = m.get("topology")
    if t:
        text += (f" (lscpu: {t.get('sockets', '?')} socket(s) × {t.get('cores_per_socket', '?')} core(s) × "
                 f"{t.get('threads_per_core', '?')} thread(s) per core)")
    return text


def machine_name(m):
    """CPU, ISA and vCPUs of a machine stamp (machine.json or peers.json's)."""
    return f"{m.get('cpu', '?')} ({m.get('isa', '?')}), {vcpus(m)}"


class Bench:
    """One benchmark run: each file's rows (row["source"] names the file) and context, and its machine."""

    def __init__(self, contexts, rows, machine, failed=()):
        self.contexts, self.rows, self.machine, self.failed = contexts, rows, machine, list(failed)
        ctx = next(iter(contexts.values()), {})
        self.ctx = ctx
        self.run_id = ctx.get("probkit_run_id")
        self.engines = [e for e in ctx.get("probkit_engines", "scalar").split(",") if e]
        self.best = self.engines[1] if len(self.engines) > 1 else self.engines[0]
        self.all_threads = int(ctx.get("probkit_threads_all", machine.get("vcpus", machine.get("cores", 1))))
        # Every filter size a Bloom benchmark of the run measured, smallest first.
        self.sizes = sorted({r["size"] for r in rows if r["bench"].startswith("bloom_") and r.get("size")},
                            key=size_bytes)

    def get(self, bench, **kw):
        return find(self.rows, bench=bench, **kw)

    def core_clock_hz(self, row):
        """The core clock probkit_bench measured in the run of the file `row` came from, or None."""
        ghz = self.contexts.get(row["source"], {}).get("probkit_core_clock_ghz") if row else None
        return float(ghz) * 1e9 if ghz else None

    def clock_text(self):
        """The measured core clock(s): one figure, or each file's where they differ."""
        clocks = [(n, float(c["probkit_core_clock_ghz"])) for n, c in self.contexts.items()
                  if c.get("probkit_core_clock_ghz")]
        if not clocks:
            return ""
        if len({f"{ghz:.2f}" for _, ghz in clocks}) == 1:
            return f"core clock measured at {clocks[0][1]:.2f} GHz"
        return "core clock measured at " + " and ".join(f"{ghz:.2f} GHz ({self.holds(n)}, {n})" for n, ghz in clocks)

    def holds(self, source):
        """What a benchmark file holds, in words: its filter sizes where it has nothing else."""
        rows = [r for r in self.rows if r["source"] == source]
        sizes = [s for s in self.sizes if any(r.get("size") == s for r in rows)]
        if sizes and len(self.contexts) > 1 and all(r.get("size") in sizes for r in rows):
            return ", ".join(size_words(s) for s in sizes[:-1]) + (" and " if len(sizes) > 1 else "") + \
                size_words(sizes[-1]) + " filters"
        return "the rest" if source == "bench_interleaved.json" else "its benchmarks"

    def probe_spread(self, key, size, threads, bench=None):
        """The probe `key` as measured beside every Bloom benchmark (or `bench`'s only) of this size and thread
        count: (median, min, max, how many), or None. Every benchmark quotes the probe it measured beside
        itself; no one of them is the probe."""
        return spread([r[key] for r in self.rows if (r["bench"] == bench if bench else r["bench"].startswith("bloom_"))
                       and r.get("size") == size and r["threads"] == threads and r.get(key)])

    def identity_note(self):
        """What the page says about the files' run identity: nothing where they carry one (load_run checked
        it), a note where they predate it."""
        if self.run_id:
            return ""
        dates = ", ".join(f"{n} {c.get('date', '?')}" for n, c in self.contexts.items())
        return (f"_These data files carry no run identity (they predate it), so that they come from one run is "
                f"not checked: their own dates are {dates}; machine.json {self.machine.get('date', '?')}._")

    def machine_line(self):
        m = self.machine
        clock = self.clock_text()
        return (f"{m.get('cpu', '?')} ({m.get('isa', '?')}" + (f", {clock}" if clock else "")
                + f"), {vcpus(m)}, {m.get('memory_gib', '?')} GiB, {m.get('virtualisation', '')}").rstrip(", ")
