"""docs/BENCHMARKS.md's peers section: bench/peers/run.py's results."""
from report_data import mps, table


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
