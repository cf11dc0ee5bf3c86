"""A machine page's peers section (docs/benchmarks/): bench/peers/run.py's results under their own stamp
(commit, date, machine), and whether they come from the benchmarks' run."""
from report_data import machine_name, mps, table

# What the peers' HLL error rows compare: not all of them are p = 14 sketches like probkit's.
SKETCHES = (
    "The HLL error rows set sketches of different sizes side by side: probkit and datasketches (lgK = 14) hold "
    "2^14 registers (p = 14, expected relative error about 1.04/√m = 0.8 %), but DuckDB's approx_count_distinct "
    "is its own HyperLogLog of 64 registers (p = 6, about 13 %; DuckDB 1.1 and later), and ClickHouse's "
    "uniqCombined64 keeps 64-bit hashes in an array, then a hash table, and for large sets an HLL of 2^17 cells "
    "(p = 17, its default HLL_precision, about 0.3 %). Their error ratios are those of their own default "
    "sketch sizes, not of p = 14.")


def peers_title(b, peers):
    """The section's heading: "same run" only where peers.json says it is the benchmarks' run."""
    same = peers and b.run_id and (peers.get("run") or {}).get("id") == b.run_id
    return "Peers (issue 4), same run, same keys" if same else "Peers (issue 4), same keys"


def peers_stamp(b, peers):
    """Which run and machine the peers' figures come from, and whether that is the benchmarks' run."""
    pm = peers.get("machine", {})
    served = peers.get("raw", {}).get("probkit_bloom", {}).get("threads_1", {}).get("served", "?")
    run = peers.get("run")
    python = f"; Python {pm['python']}" if pm.get("python") else ""
    if not run:
        return (f"Machine: {pm.get('cpu', '?')}, {pm.get('cores', '?')} vCPUs{python}; probkit engine: {served}. "
                "**peers.json carries no stamp** (commit, date, run; it predates them): it may come from another run "
                "than the benchmarks above, on a machine it names only as above.")
    text = (f"Machine: {machine_name(pm)}{python}. Commit `{run.get('commit', '?')}`, {run.get('date', '?')}; "
            f"probkit engine: {served}.")
    if b.run_id and run.get("id") == b.run_id:
        return text + " The benchmarks' run."
    why = "the benchmarks carry no run id" if not b.run_id else f"run {run.get('id')}, the benchmarks' is {b.run_id}"
    return (text + f" **Not the benchmarks' run** ({why}; they are commit `{b.machine.get('commit', '?')}`, "
            f"{b.machine.get('date', '?')}): the probkit figures beside the peers are their own run's, not the "
            "tables above.")


def peers_section(b, peers):
    if peers is None:
        return "_The peer comparison was not run (bench/peers/run.py)._"
    rows = []
    for r in peers["rows"]:
        fmt = (lambda x: f"{x:.3g}") if ("FPR" in r["metric"] or "error" in r["metric"]) else mps
        fmt_v = (lambda x: "–" if x is None else fmt(x))
        unit = "" if ("FPR" in r["metric"] or "error" in r["metric"]) else " M"
        rows.append([r["group"], r["peer"], r["metric"].replace("|relative error|", "abs. relative error"),
                     fmt_v(r["peer_value"]) + unit, fmt_v(r["probkit_value"]) + unit,
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
    return (peers_stamp(b, peers) + "\n\n"
            f"Filters: {pr.get('filter', {}).get('keys', '?'):,} u64 keys inserted, as many never-inserted keys "
            f"queried (so the hit rate is the FPR), capacity {pr.get('filter', {}).get('capacity', '?'):,} at "
            f"FPR 0.01 for every filter (probkit: `for_capacity`, cacheline512, "
            f"{pk.get('bits_per_key', 0):.2f} bits/key, k={pk.get('k', '?')}); libbloom at its own size, probkit at "
            f"the same number of bytes. HLL column: {pr.get('column', {}).get('keys', '?'):,} distinct u64 keys. "
            "Python peers are fed their fastest input form (a prepared list, batch calls where they exist); "
            "their time includes the interpreter, which is what a Python user gets.\n\n"
            "**ratio = probkit / peer for throughput and peer / probkit for FPR and error: > 1 means probkit is "
            "better.** Errors are one sample each (one key set), so their ratio is noisy; the HLL error over "
            "many seeds is in [ACCURACY.md](../ACCURACY.md). " + SKETCHES + "\n\n" +
            table(["", "peer", "metric", "peer", "probkit", "probkit threads", "ratio", "note"], rows) +
            "\n\nMissing peers:\n\n" + miss + memory)
