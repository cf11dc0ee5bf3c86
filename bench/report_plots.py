"""bench/report.py's PNG plots (docs/img/): Bloom throughput vs filter size, HLL error and Bloom FPR."""
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from report_data import size_bytes, size_words  # noqa: E402

DPI = 80


def plot_bloom(b, docs, op, layout, threads, fname):
    """Throughput vs filter size per engine, the probe as a dashed line (for add also the update probe,
    dotted); per wall-clock second (left) and per CPU second (right). A probe at a size is the median of the
    probes measured beside each benchmark. Returns False, and writes nothing, where the run measured no engine
    at this layout and thread count (a BENCH_FILTER run's selection)."""
    sizes = [s for s in b.sizes if any(b.get(f"bloom_{op}", layout=layout, keys="u64", size=s, engine=e,
                                             threads=threads) for e in b.engines)]
    if not sizes:
        return False
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.6))
    xs = [size_bytes(s) for s in sizes]

    def probe_line(key):
        spreads = [b.probe_spread(key, s, threads, bench=f"bloom_{op}") for s in sizes]
        return [x[0] / 1e6 if x else math.nan for x in spreads]

    for ax, (rate, probe_key, what) in zip(axes, (("keys_per_s", "probe", "per wall-clock second"),
                                                 ("keys_per_cpu_s", "probe_cpu", "per CPU second"))):
        probe = probe_line(probe_key)
        updates = probe_line("reference" if probe_key == "probe" else "reference_cpu") if op == "add" else []
        for e in b.engines:
            ys = []
            for s in sizes:
                r = b.get(f"bloom_{op}", layout=layout, keys="u64", size=s, engine=e, threads=threads)
                ys.append(r[rate] / 1e6 if r and r.get(rate) else math.nan)
            if all(math.isnan(y) for y in ys):
                continue
            ax.plot(xs, ys, marker="o", label=e)  # broken where not measured, not drawn across
        ax.plot(xs, probe, "k--", label="probe: random 64-B reads")
        if not all(math.isnan(y) for y in updates):
            ax.plot(xs, updates, "k:", label="probe: random 64-B updates")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xticks(xs, [size_words(s) for s in sizes], fontsize=7, rotation=45)  # 8, 16 and 32 MiB sit close
        ax.set_xlabel("filter size")
        ax.set_ylabel("M keys/s (u64)")
        ax.set_title(what, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(f"Bloom {op}, {layout}, {threads} thread{'s' if threads > 1 else ''}", fontsize=11)
    fig.tight_layout()
    path = os.path.join(docs, "img", fname)  # fname may name a machine's folder
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=DPI)
    plt.close(fig)
    return True


def plot_hll_accuracy(rows, docs, field, fname, title):
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    colors = {}
    for p in sorted({int(r["p"]) for r in rows}):
        pts = sorted((int(r["n"]), float(r[field])) for r in rows if int(r["p"]) == p)
        line, = ax.plot([x for x, _ in pts], [100 * y for _, y in pts], label=f"p={p}")
        colors[p] = line.get_color()
        theory = 100 * 1.04 / math.sqrt(2 ** p)
        ax.axhline(theory, color=colors[p], ls=":", lw=1)
        if field == "mean_rel_error":
            ax.axhline(-theory, color=colors[p], ls=":", lw=1)
    ax.set_xscale("log")
    ax.set_xlabel("true cardinality n")
    ax.set_ylabel("%")
    ax.set_title(title + "  (dotted: ±1.04/√m)" if field == "mean_rel_error" else title + "  (dotted: 1.04/√m)")
    if field == "mean_rel_error":
        ax.set_ylim(-4, 4)
    else:
        ax.set_yscale("log")
        ax.set_ylim(bottom=0.01)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "img", fname), dpi=DPI)
    plt.close(fig)


def plot_bloom_fpr(rows, docs, fname):
    fig, axes = plt.subplots(1, 2, figsize=(9.6, 3.8), sharey=True)
    for ax, layout in zip(axes, ("cacheline512", "parquet_sbbf")):
        rs = [r for r in rows if r["layout"] == layout]
        x = [float(r["bits_per_key"]) for r in rs]
        ax.plot(x, [float(r["measured_fpr"]) for r in rs], "o", ms=4, label="measured")
        ax.plot(x, [float(r["model_fpr"]) for r in rs], "-", label="blocked model (bloom_model_fpr)")
        ax.plot(x, [float(r["classic_fpr"]) for r in rs], "--", label="classic Bloom, same k")
        ax.plot(x, [float(r["classic_best_fpr"]) for r in rs], ":", label="classic Bloom, best k")
        ax.set_yscale("log")
        ax.set_xlabel("bits per key")
        ax.set_title(layout + (" (k by model)" if layout == "cacheline512" else " (k = 8)"))
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("false-positive rate")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(docs, "img", fname), dpi=DPI)
    plt.close(fig)
