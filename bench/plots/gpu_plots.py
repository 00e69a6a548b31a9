#!/usr/bin/env python3
"""Plots and tables of the recorded GPU results (docs/results/gpu-*.json).

  bench/plots/gpu_plots.py [--dir docs/results]

writes gpu-fig12.png (the ladder, Venkatasubramanian & Vuduc fig. 12) and gpu-fig11.png (tuned GB/s
against n and T, fig. 11), and prints the markdown tables of docs/results/gpu-jacobi.md.
The ladder takes run 2 (every kernel) and replaces the rows that run 5 re-measured with
tuned shapes (unrolled and the hi/lo variants in double: their tuning failed in run 2).
"""
import argparse
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ORDER = ["naive", "padded", "smem", "texture", "smem-padded", "unrolled", "tuned",
         "smem-hilo", "smem-padded-hilo", "unrolled-hilo"]


def load(d):
    r2 = json.load(open(os.path.join(d, "gpu-run2.json")))
    r5 = json.load(open(os.path.join(d, "gpu-run5.json")))
    return r2, r5


def ladder(r2, r5):
    rows = {}
    for src, doc in (("run2", r2), ("run5", r5)):
        for r in doc["records"]:
            if r.get("section") == "ladder":
                rows[(r["kernel"], r["n"], r["precision"])] = dict(r, run=src, run_copy=doc["copy_gbps"],
                                                                   run_commit=doc["commit"])
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default="docs/results")
    a = ap.parse_args()
    r2, r5 = load(a.dir)
    rows = ladder(r2, r5)
    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), sharey=True)
    for ax, prec in zip(axes, ["single", "double"]):
        ks = [k for k in ORDER if (k, 4096, prec) in rows]
        x = range(len(ks))
        for off, n in ((-0.2, 4096), (0.2, 16384)):
            ys = [100 * rows[(k, n, prec)]["fraction_of_copy"] for k in ks]
            ax.bar([i + off for i in x], ys, width=0.4, label="n = %d" % n)
        ax.axhline(100, color="k", lw=0.8)
        ax.set_xticks(list(x))
        ax.set_xticklabels(ks, rotation=35, ha="right")
        ax.set_title("%s precision (%d B/point/sweep)" % (prec, 8 if prec == "single" else 16))
        ax.legend()
    axes[0].set_ylabel("% of device copy bandwidth (same run)")
    fig.suptitle("GPU tuning ladder (seed 000 fig. 12) on %s, copy %.0f GB/s" % (r2["device"], r2["copy_gbps"]))
    fig.tight_layout()
    fig.savefig(os.path.join(a.dir, "gpu-fig12.png"), dpi=110)

    f11 = [r for r in r2["records"] if r.get("section") == "fig11"]
    f11 += [r for r in r5["records"] if r.get("section") == "fig11"]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.6), sharey=True)
    for ax, prec in zip(axes, ["single", "double"]):
        for T in [10, 100, 1000]:
            pts = {}
            for r in f11:
                if r["precision"] == prec and r["iterations"] == T:
                    pts[r["n"]] = r["gbps_median"]
            ns = sorted(pts)
            ax.plot(ns, [pts[n] for n in ns], "o-", label="T = %d" % T)
        ax.axhline(r2["copy_gbps"], color="k", ls="--", lw=0.8, label="device copy")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("n (grid (n+2)^2)")
        ax.set_title("tuned, %s precision" % prec)
        ax.legend()
    axes[0].set_ylabel("GB/s (sweeps only)")
    fig.suptitle("tuned GB/s against n and T (seed 000 fig. 11) on %s" % r2["device"])
    fig.tight_layout()
    fig.savefig(os.path.join(a.dir, "gpu-fig11.png"), dpi=110)

    print("| kernel | prec | n | GFLOP/s | GB/s | % of copy | run |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    for prec in ["single", "double"]:
        for k in ORDER:
            for n in [4096, 16384]:
                r = rows.get((k, n, prec))
                if r:
                    print("| %s | %s | %d | %.1f | %.1f | %.1f%% | %s (%s) |" % (k, prec, n, r["gflops"], r["gbps_median"],
                                                                          100 * r["fraction_of_copy"], r["run"],
                                                                          r["run_commit"][:7]))
    print()
    print("| prec | n | T=10 | T=100 | T=1000 | % of copy (T=1000) | GB/s incl. transfers (T=1000) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for prec in ["single", "double"]:
        for n in sorted({r["n"] for r in f11}):
            g = {r["iterations"]: r for r in f11 if r["precision"] == prec and r["n"] == n}
            cell = lambda T: "%.0f" % g[T]["gbps_median"] if T in g else "-"  # noqa: E731
            print("| %s | %d | %s | %s | %s | %s | %s |" % (prec, n, cell(10), cell(100), cell(1000),
                  "%.1f%%" % (100 * g[1000]["fraction_of_copy"]) if 1000 in g else "-",
                  "%.0f" % g[1000]["gbps_with_transfers"] if 1000 in g else "-"))


if __name__ == "__main__":
    main()
