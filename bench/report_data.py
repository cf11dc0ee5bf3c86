"""bench/report.py's inputs: loading the raw results, formatting figures, and Bench, one benchmark run
with the machine that made it."""
import csv
import json
import os

SIZES = ["256KiB", "32MiB", "1GiB"]
SIZE_BYTES = {"256KiB": 256 << 10, "32MiB": 32 << 20, "1GiB": 1 << 30}


# -- loading -----------------------------------------------------------------
def load_bench(path):
    """Median aggregate of each benchmark, as a dict of parsed name fields + counters."""
    with open(path) as f:
        data = json.load(f)
    rows = []
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") != "median":
            continue
        name = b.get("run_name", b["name"]).replace("/real_time", "")
        parts = name.split("/")
        row = {"bench": parts[0], "label": b.get("label", "")}
        for p in parts[1:]:
            if "=" in p:
                k, v = p.split("=", 1)
                row[k] = v
        row["threads"] = int(row.get("threads", 1))
        row["repetitions"] = int(b.get("repetitions", 1))
        for c in ("keys_per_s", "probe", "vs_probe", "reference", "vs_reference", "hit_rate", "keys_per_cpu_s",
                  "probe_cpu", "vs_probe_cpu", "reference_cpu", "vs_reference_cpu"):
            if c in b:
                row[c] = float(b[c])
        rows.append(row)
    # Without aggregates (one repetition) the plain runs are the medians.
    return data.get("context", {}), rows


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


# -- formatting --------------------------------------------------------------
def mps(x):
    """A rate in millions, with as many decimals as a small rate needs."""
    if x is None or x == 0:
        return "–"
    return f"{x / 1e6:,.0f}" if x >= 1e8 else f"{x / 1e6:,.1f}" if x >= 1e6 else f"{x / 1e6:.3f}"


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


class Bench:
    def __init__(self, context, rows, machine):
        self.ctx, self.rows, self.machine = context, rows, machine
        self.engines = [e for e in context.get("probkit_engines", "scalar").split(",") if e]
        self.best = self.engines[1] if len(self.engines) > 1 else self.engines[0]
        self.all_threads = int(context.get("probkit_threads_all", machine.get("cores", 1)))

    def get(self, bench, **kw):
        return find(self.rows, bench=bench, **kw)

    def core_clock_hz(self):
        """The core clock probkit_bench measured (a chain of dependent multiplies), or None."""
        ghz = self.ctx.get("probkit_core_clock_ghz")
        return float(ghz) * 1e9 if ghz else None

    def machine_line(self):
        m = self.machine
        clock = self.core_clock_hz()
        return (f"{m.get('cpu', '?')} ({m.get('isa', '?')}"
                + (f", core clock measured at {clock / 1e9:.2f} GHz" if clock else "")
                + f"), {m.get('cores', '?')} cores, "
                f"{m.get('memory_gib', '?')} GiB, {m.get('virtualisation', '')}".rstrip(", "))
