#!/usr/bin/env python3
"""PNG plots of the issue-6 results (bench/experiments/gpu_sparse_experiments.py JSON).

usage: bench/plots/gpu_sparse_plots.py RESULTS.json [MULTI.json] --outdir DIR [--prefix gpu-sparse]
Writes PREFIX-variation.png, -convergence.png, -time.png, -fault.png, -overhead.png,
-multi.png for the sections present.
"""
import argparse, json, os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

COLORS = {"gs": "tab:green", "jacobi": "tab:blue", "async-(1)": "tab:orange", "async-(5)": "tab:red",
          "async-(5)/256": "tab:brown", "async-(5)/448": "tab:purple", "cg": "black"}


def grid(n):
    cols = min(n, 4)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.4 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, list(axes.flat)


def device_of(recs):
    gpu = next((r["device"] for r in recs if r.get("backend", "gpu") == "gpu" and r.get("device")), "")
    return gpu


def variation(recs, out):
    fig, axes = plt.subplots(2, len(recs), figsize=(5.5 * len(recs), 7), squeeze=False)
    for c, rec in enumerate(recs):
        t = rec["table"]
        it = [r["iterations"] for r in t]
        ax = axes[0][c]
        ax.semilogy(it, [r["mean"] for r in t], "k-", label="mean")
        ax.fill_between(it, [r["min"] for r in t], [r["max"] for r in t], color="tab:red", alpha=0.3,
                        label="min-max")
        ax.set_title(f"{rec['matrix']}: async-(5), block {rec['block']}, {rec['runs']} runs")
        ax.set_xlabel("global iterations")
        ax.set_ylabel("relative residual")
        ax.legend()
        ax = axes[1][c]
        ax.semilogy(it, [r["abs_variation"] for r in t], label="absolute (max - min)")
        ax.semilogy(it, [r["rel_variation"] or None for r in t], label="relative ((max - min) / mean)")
        ax.set_xlabel("global iterations")
        ax.legend()
    fig.suptitle(f"Run-to-run variation (seed 002 Tables 2-3), {recs[0].get('streams', 1)} stream(s), "
                 f"{recs[0]['device']}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def convergence(recs, out):
    mats = list(dict.fromkeys(r["matrix"] for r in recs))
    fig, axes = grid(len(mats))
    for ax, mat in zip(axes, mats):
        for r in recs:
            if r["matrix"] != mat or not r["history"]:
                continue
            h = [p for p in r["history"] if p[1] is not None and p[1] > 0]
            ax.semilogy([p[0] for p in h], [p[1] for p in h], color=COLORS.get(r["method"]),
                        label=f"{r['method']} ({'CPU' if r['backend'] != 'gpu' else 'GPU'})")
        ax.set_title(mat)
        ax.set_xlabel("global iterations")
        ax.set_ylabel("relative residual")
        ax.legend(fontsize=7)
    fig.suptitle(f"Convergence (seed 002 Figures 6-7), GPU: {device_of(recs)}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def time_plot(recs, out):
    mats = list(dict.fromkeys(r["matrix"] for r in recs))
    fig, axes = grid(len(mats))
    for ax, mat in zip(axes, mats):
        for r in recs:
            if r["matrix"] != mat:
                continue
            pts = [(p[1], p[2]) for p in r["curve"] if p[2] is not None]
            pts += [(r["time_to_1e-6_s"], 1e-6)] if r["time_to_1e-6_s"] else []
            pts.sort()
            if not pts:
                continue
            ax.loglog([p[0] for p in pts], [p[1] for p in pts], "o-", ms=3, color=COLORS.get(r["variant"]),
                      label=f"{r['variant']} ({'CPU' if r['backend'] != 'gpu' else 'GPU'})")
        ax.axhline(1e-10, color="grey", lw=0.5)
        ax.set_title(mat)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("relative residual")
        ax.legend(fontsize=7)
    fig.suptitle(f"Residual against time (seed 002 Figure 9), GPU: {device_of(recs)}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def fault(recs, out):
    mats = list(dict.fromkeys(r["matrix"] for r in recs))
    fig, axes = plt.subplots(1, len(mats), figsize=(5.5 * len(mats), 4), squeeze=False)
    for ax, mat in zip(axes[0], mats):
        for r in recs:
            if r["matrix"] != mat:
                continue
            lab = "no fault" if r["fault"] is None else ("never recovered" if r["recover"] == -1
                                                         else f"recover-({r['recover']})")
            h = [p for p in r["history"] if p[1] is not None and p[1] > 0]
            ax.semilogy([p[0] for p in h], [p[1] for p in h], label=lab)
        ax.set_title(f"{mat}: async-(5), 25% fail at iteration 10")
        ax.set_xlabel("global iterations")
        ax.set_ylabel("relative residual")
        ax.legend(fontsize=8)
    fig.suptitle(f"Fault tolerance (seed 002 Figure 10 / Table 6), {recs[0]['device']}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def overhead(recs, out):
    fig, ax = plt.subplots(figsize=(6, 4))
    for r in recs:
        its = sorted(int(k) for k in r["times_s"])
        ax.plot(its, [r["times_s"][str(k)] * 1e3 for k in its], "o-", ms=3, label=r["method"])
    ax.set_xlabel("global iterations")
    ax.set_ylabel("time (ms)")
    ax.set_title(f"Local-iteration overhead, fv2d:99, block 448 (Table 4)\n{recs[0]['device']}", fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def multi(recs, out):
    mats = list(dict.fromkeys(r["matrix"] for r in recs))
    fig, axes = plt.subplots(1, len(mats), figsize=(5.5 * len(mats), 4), squeeze=False)
    for ax, mat in zip(axes[0], mats):
        rows = [r for r in recs if r["matrix"] == mat and r["time_to_1e-10_s"]]
        labels = [f"{'plain' if r['comm'] == 'auto' else r['comm'].replace('-every', ' E=')}, {r['gpus']} GPU"
                  for r in rows]
        ax.bar(range(len(rows)), [r["time_to_1e-10_s"] * 1e3 for r in rows],
               color=["grey" if r["comm"] == "auto" else "tab:blue" if r["gpus"] == 1 else "tab:red" for r in rows])
        ax.set_xticks(range(len(rows)))
        ax.set_xticklabels(labels, fontsize=7, rotation=40, ha="right")
        ax.set_ylabel("time to 1e-10 (ms)")
        ax.set_title(f"{mat}: async-(5)")
    fig.suptitle(f"Multi-GPU schemes (seed 002 Figure 11), {recs[0]['device']}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results", nargs="+")
    ap.add_argument("--outdir", required=True)
    ap.add_argument("--prefix", default="gpu-sparse")
    a = ap.parse_args()
    sections = {}
    for path in a.results:
        sections.update(json.load(open(path))["sections"])
    plots = {"variation": variation, "convergence": convergence, "time": time_plot, "fault": fault,
             "overhead": overhead, "multi": multi}
    for name, recs in sections.items():
        fn = plots.get(name.split("-")[0])
        if fn and recs:
            out = os.path.join(a.outdir, f"{a.prefix}-{name}.png")
            fn(recs, out)
            print("wrote", out)


if __name__ == "__main__":
    main()
