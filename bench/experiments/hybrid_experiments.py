#!/usr/bin/env python3
"""The hybrid CPU+GPU split experiments, one command each (JSON + PNG).

Runs bench/hybrid_split (built with the library: `ninja -C BUILD hybrid_split`), which
checks every split's answer bitwise against cpu-threads before timing it, and plots the
measured and modelled time per sweep against the share of rows (planes) on the CPU,
normalised to the GPU-only time, with the GPU-only line, the auto split and the bound
1 + t_g / t_c.

  bench/experiments/hybrid_experiments.py fig14 --build build          # Venkatasubramanian & Vuduc fig. 14, H100 machine
  bench/experiments/hybrid_experiments.py fig15 --build build          # Venkatasubramanian & Vuduc fig. 15 right, 2 GPUs (mgpu_bench)
  bench/experiments/hybrid_experiments.py fig5d --build build          # Sourouri et al. fig. 5d, H100 machine
  bench/experiments/hybrid_experiments.py fig5d-mpi --build build --ranks 2   # the same per rank, two GPUs
  bench/experiments/hybrid_experiments.py cpu-check --build build      # the scripts' own check, no GPU
  bench/experiments/hybrid_experiments.py refit docs/results/hybrid-fig14-h100.json   # the model offline

fig14: 2-D fp32, n = 4096 and 16384, CPU share 0-10 % in 0.5 % steps plus the coarse grid
10-100 % in 10 % steps; fig15: the fraction on GPU 1 from 0 to 100 % in 5 % steps, n = 16384 and
4096 (the seed's), through bench/mgpu_bench (the --gpus chain, peer copies, each split checked);
fig5d: 3-D 512 x 512 x 1024 fp64, 0-10 % in 0.5 % steps then 11-40 % in 1 % steps, the
naive and nested schedules; fig5d-mpi: the same grid over --ranks MPI ranks (one GPU each,
bench/hybrid_mpi: each rank's slab split; measured curves, f = 0 is GPU-only).
Results go to docs/results/hybrid-*.json and .png.

fig5d (--quick: 0-10 % in 0.5 % steps and 15, 20, 30, 40 %) and fig14 --engine (also
fig14 --quick, over the seed's whole grid) run hybrid_split --engine: one split engine per split,
each checked bitwise against GPU-only; for fig5d the nested boundary crew is tuned and nested and
naive are timed head to head at their best splits. The summary prints per sweep a TARGET line:
how many splits the model predicts within 10 % and the worst error.
"""
import argparse
import json
import os
import subprocess
import sys

FINE = [round(0.005 * i, 4) for i in range(21)]
COARSE14 = [round(0.1 * i, 2) for i in range(2, 11)]
COARSE5D = [round(0.01 * i, 2) for i in range(11, 41)]
# fig5d --quick: the target's sweep (0-10 % in 0.5 % steps) and 10-40 % in four steps
QUICK5D = FINE + [0.15, 0.2, 0.3, 0.4]


def run(build, out, args, env=None):
    exe = os.path.join(build, "bench", "hybrid_split")
    cmd = [exe, out] + [str(a) for a in args]
    print("+", " ".join(("%s=%s " % kv for kv in (env or {}).items())) + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, env=dict(os.environ, **env) if env else None)
    if r.returncode != 0:
        sys.exit("hybrid_split failed (exit %d): see above" % r.returncode)
    with open(out) as f:
        return json.load(f)


def summary(d, label):
    """The targets for one run, as lines."""
    lines = []
    base = d["gpu_only_s"]
    for s in d["schedules"]:
        pts = s["points"]
        best = min(pts, key=lambda p: p["measured_s"])
        errs = [abs(p["predicted_s"] - p["measured_s"]) / p["measured_s"] for p in pts if p["measured_s"] > 0]
        a = s["auto"]
        lines.append(
            "%s %s: best measured %.4g s at %.2f %% (gain %.4f over GPU-only %.4g s; bound 1 + t_g/t_c = %.4f); "
            "auto %.2f %%: %.4g s (%.2f %% from the best, %.2f %% vs GPU-only); model error max %.1f %%, median %.1f %%"
            % (label, s["schedule"], best["measured_s"], 100 * best["fraction"], base / best["measured_s"], base,
               s["bound"], 100 * a["fraction"], a["measured_s"], 100 * (a["measured_s"] / best["measured_s"] - 1),
               100 * (a["measured_s"] / base - 1), 100 * max(errs), 100 * sorted(errs)[len(errs) // 2]))
        worst = max(pts, key=lambda p: abs(p["predicted_s"] / p["measured_s"] - 1))
        lines.append("  %s model error per split (%%): %s; worst %.1f %% at %.2f %%; within 10 %%: %d of %d"
                     % (s["schedule"], " ".join("%.1f:%+.1f" % (100 * p["fraction"], 100 * (p["predicted_s"] / p["measured_s"] - 1))
                                                for p in sorted(pts, key=lambda p: p["fraction"])),
                        100 * abs(worst["predicted_s"] / worst["measured_s"] - 1), 100 * worst["fraction"],
                        sum(1 for e in errs if e <= 0.10), len(errs)))
        lines.append("TARGET model within 10 %% of measured, %s %s: %d of %d splits (worst %.1f %% at %.2f %%): %s"
                     % (label, s["schedule"], sum(1 for e in errs if e <= 0.10), len(errs),
                        100 * abs(worst["predicted_s"] / worst["measured_s"] - 1), 100 * worst["fraction"],
                        "met" if all(e <= 0.10 for e in errs) else "NOT met"))
        # the measurement's own reproducibility, which bounds what any model can meet: the passes
        # over the splits, and the CPU alone on the whole grid (the calibration's last rung is the
        # model there: the same configuration, measured minutes apart in one process)
        spread = [p for p in pts if len(p.get("passes_s", [])) > 1]
        if spread:
            agree = sum(1 for p in spread if all(abs(t / p["measured_s"] - 1) <= 0.10 for t in p["passes_s"]))
            lines.append("  %s the measurement's passes all within 10 %% of their median at %d of %d splits"
                         % (s["schedule"], agree, len(spread)))
        alone = [p for p in pts if p["rows_cpu"] == d["rows"]]
        rung = [r["s"] for r in s.get("ladder", []) if r["rows"] == d["rows"]]
        if alone and rung:
            lines.append("  %s the CPU alone (f = 1): calibration %.4g s, sweep %.4g s (%+.1f %%; passes %s)"
                         % (s["schedule"], rung[0], alone[0]["measured_s"], 100 * (rung[0] / alone[0]["measured_s"] - 1),
                            ", ".join("%.4g" % t for t in alone[0].get("passes_s", [])) or "one"))
        rc = s.get("recheck")
        if rc and rc.get("again_s") and min(rc["again_s"]) > 0:
            lines.append("  %s worst split re-measured in 2 fresh engines: %d rows %.4g s, again %s (model %.4g s)"
                         % (s["schedule"], rc["rows_cpu"], rc["measured_s"],
                            ", ".join("%.4g" % t for t in rc["again_s"]),
                            next((p["predicted_s"] for p in pts if p["rows_cpu"] == rc["rows_cpu"]), float("nan"))))
        pinned = s.get("pinned")
        if pinned is not None:
            lines.append("  %s CPU crews pinned: %s" % (s["schedule"], "yes" if pinned else "NO (see docs/hybrid.md)"))
        if s.get("tune"):
            lines.append("  %s boundary crew tuned: %s -> %d threads (+ %d interior)"
                         % (s["schedule"], ", ".join("%d: %.4g s" % (t["boundary_threads"], t["s"]) for t in s["tune"]),
                            s["boundary_threads"], s["threads"]))
    for h in d.get("head_to_head", []):
        lines.append("%s head to head (blocks interleaved) at %.2f %% (%s's best split): naive %.4g s / nested %.4g s = %.4f"
                     % (label, 100 * h["fraction"], h["best_of"], h["naive_s"], h["nested_s"],
                        h["naive_s"] / h["nested_s"]))
    best = {s["schedule"]: min(s["points"], key=lambda p: p["measured_s"]) for s in d["schedules"]}
    if "nested" in best and "naive" in best:
        lines.append("%s nested vs naive at their best splits: naive %.4g s (%.2f %%) / nested %.4g s (%.2f %%) = %.4f"
                     % (label, best["naive"]["measured_s"], 100 * best["naive"]["fraction"], best["nested"]["measured_s"],
                        100 * best["nested"]["fraction"], best["naive"]["measured_s"] / best["nested"]["measured_s"]))
    return lines


def plot(png, runs, xlabel, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs), 4.6), squeeze=False)
    for ax, (label, d) in zip(axes[0], runs):
        base = d["gpu_only_s"]
        for s in d["schedules"]:
            pts = sorted(s["points"], key=lambda p: p["fraction"])
            x = [100 * p["fraction"] for p in pts]
            ax.plot(x, [p["measured_s"] / base for p in pts], "o-", ms=3, label="measured (%s)" % s["schedule"])
            ax.plot(x, [p["predicted_s"] / base for p in pts], "--", label="model (%s)" % s["schedule"])
            a = s["auto"]
            ax.plot([100 * a["fraction"]], [a["measured_s"] / base], "k*", ms=10,
                    label="auto (%s)" % s["schedule"])
            share = s.get("stream_share")
            if isinstance(share, (int, float)) and share >= 0 and s is d["schedules"][0]:  # -1: not measured
                ax.axvline(100 * share, color="tab:green", ls=":", lw=1, label="STREAM rule %.1f %%" % (100 * share))
        ax.axhline(1.0, color="gray", lw=1, label="GPU-only")
        ax.set_xlabel(xlabel)
        ax.set_ylabel("time per sweep / GPU-only")
        ax.set_title(label)
        top = max(1.6, min(4.0, max(p["measured_s"] / base for s in d["schedules"] for p in s["points"])))
        ax.set_ylim(0, top)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    return None


def finish(name, runs, xlabel, title, outdir):
    out = os.path.join(outdir, "hybrid-%s.json" % name)
    png = os.path.join(outdir, "hybrid-%s.png" % name)
    lines = []
    for label, d in runs:
        lines += summary(d, label)
    with open(out, "w") as f:
        json.dump({"experiment": name, "runs": [{"label": l, "result": d} for l, d in runs], "summary": lines}, f,
                  indent=1)
    why = plot(png, runs, xlabel, title)
    print("\n".join(lines))
    print("wrote", out, "and", png if not why else "(%s)" % why)


def run_mpi(a, out, args):
    exe = os.path.join(a.build, "bench", "hybrid_mpi")
    # every rank bound to its own share of the CPUs (Open MPI binds each of 2 ranks to one core
    # by default; unbound ranks would pin their crews to the same CPUs): PE logical CPUs each
    per = len(os.sched_getaffinity(0)) // a.ranks
    bind = ["--map-by", "slot:PE=%d" % per, "--use-hwthread-cpus"] if per >= 2 else ["--bind-to", "none"]
    cmd = [a.mpiexec, "-n", str(a.ranks)] + bind + [exe, out] + [str(x) for x in args]
    print("+", " ".join(cmd), flush=True)
    env = dict(os.environ)
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # containers: Open MPI refuses root otherwise
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(cmd, env=env)
    if r.returncode != 0:
        sys.exit("hybrid_mpi failed (exit %d): see above" % r.returncode)
    with open(out) as f:
        d = json.load(f)
    for s in d["schedules"]:
        s["points"] = [p for p in s["points"] if p]
    return d


def finish_mpi(name, d, outdir):
    """Per-rank split: measured curves, the per-rank model's curve and split auto's choice where
    the run had --model (f = 0 is GPU-only through the ranks)."""
    out = os.path.join(outdir, "hybrid-%s.json" % name)
    png = os.path.join(outdir, "hybrid-%s.png" % name)
    lines = []
    best = {}
    for s in d["schedules"]:
        autos = [p for p in s["points"] if p.get("auto")]
        s["auto"] = autos[0] if autos else None
        s["points"] = pts = [p for p in s["points"] if not p.get("auto")]
        base = [p for p in pts if p["fraction"] == 0]
        b = min(pts, key=lambda p: p["measured_s"])
        best[s["schedule"]] = b
        lines.append("%d ranks %s: best %.4g s/sweep at %.2f %% of each slab on the CPU%s"
                     % (d["ranks"], s["schedule"], b["measured_s"], 100 * b["fraction"],
                        " (gain %.4f over GPU-only %.4g s)" % (base[0]["measured_s"] / b["measured_s"], base[0]["measured_s"])
                        if base else ""))
        pred = [p for p in pts if p.get("predicted_s") is not None]
        if pred:
            errs = [p["predicted_s"] / p["measured_s"] - 1 for p in pred]
            within = sum(abs(e) <= 0.10 for e in errs)
            worst = max(pred, key=lambda p: abs(p["predicted_s"] / p["measured_s"] - 1))
            s["model_within_10pct"] = within
            lines.append("  model within 10 %% of measured at %d of %d splits (worst %+.1f %% at %.2f %%)"
                         % (within, len(pred), 100 * (worst["predicted_s"] / worst["measured_s"] - 1),
                            100 * worst["fraction"]))
        a = s["auto"]
        if a:
            ref = base[0]["measured_s"] if base else a["gpu_only_s"]
            lines.append("  split auto: %.2f %% -> %.4g s/sweep measured (predicted %.4g): %+.2f %% against the "
                         "best split, %+.2f %% against GPU-only (targets: within 3 %%, at most +1 %%); x_ranks %.3g s, "
                         "CPU term x %.3f%s, calibration %.1f s, choice %.1f s"
                         % (100 * a["fraction"], a["measured_s"], a["predicted_s"],
                            100 * (a["measured_s"] / b["measured_s"] - 1), 100 * (a["measured_s"] / ref - 1),
                            a["x_ranks_s"], a.get("cpu_scale", 1.0),
                            "".join(", x %.3f at %.1f %%" % (q["scale"], 100 * q["fraction"])
                                    for q in a.get("ladder", [])),
                            a["calibration_s"], a["choice_s"]))
            if a["fraction"] == 0:
                lines.append("  (auto chose GPU-only, the split of the f = 0 point: what separates the two is "
                             "run-to-run spread)")
            h = a.get("head_to_head")
            if h:
                lines.append("  split auto head to head with GPU-only, blocks interleaved: %+.2f %% (target: at most "
                             "+1 %%)" % (100 * (h["auto_s"] / h["gpu_only_s"] - 1)))
    if "nested" in best and "naive" in best:
        lines.append("nested vs naive at their best splits: %.4f" % (best["naive"]["measured_s"] / best["nested"]["measured_s"]))
    with open(out, "w") as f:
        json.dump({"experiment": name, "result": d, "summary": lines}, f, indent=1)
    why = None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(6.5, 4.6))
        for i, s in enumerate(d["schedules"]):
            pts = sorted(s["points"], key=lambda p: p["fraction"])
            col = "C%d" % i
            ax.plot([100 * p["fraction"] for p in pts], [p["measured_s"] for p in pts], "o-", ms=3, color=col,
                    label=s["schedule"])
            pr = [p for p in pts if p.get("predicted_s") is not None]
            if pr:
                ax.plot([100 * p["fraction"] for p in pr], [p["predicted_s"] for p in pr], "--", color=col,
                        label="%s model" % s["schedule"])
            if s.get("auto"):
                ax.plot([100 * s["auto"]["fraction"]], [s["auto"]["measured_s"]], "*", ms=11, color=col,
                        label="%s split auto" % s["schedule"])
            if pts and pts[0]["fraction"] == 0:
                ax.axhline(pts[0]["measured_s"], color="gray", lw=1, label="GPU-only" if i == 0 else None)
        ax.set_xlabel("planes of each rank's slab on the CPU (%)")
        ax.set_ylabel("seconds per sweep")
        ax.set_title("seed 003 fig. 5d, %d ranks" % d["ranks"])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(png, dpi=110)
    except ImportError:
        why = "matplotlib is not installed: no plot"
    print("\n".join(lines))
    print("wrote", out, "and", png if not why else "(%s)" % why)


def fig15_chain(a):
    """Venkatasubramanian & Vuduc fig. 15 right on two GPUs: time per sweep against the fraction of rows on GPU 1,
    through the chain of two GPU parts (peer copies; bench/mgpu_bench --fractions), each split
    checked bitwise against one GPU. Model: T(f) = max((1 - f) t_0, f t_1) + X, with t_0, t_1
    the one-GPU times (f = 0 and 1) and X the exposed exchange measured at f = 0.5."""
    fr = [round(0.05 * i, 2) for i in range(21)]
    if a.quick:
        fr = [0, 0.2, 0.4, 0.45, 0.5, 0.55, 0.6, 0.8, 1]
    runs = []
    exe = os.path.join(a.build, "bench", "mgpu_bench")
    for n, sweeps in ((16384, 20 if a.quick else 40), (4096, 100 if a.quick else 200)):
        raw = os.path.join(a.out, "hybrid-fig15-%d.raw.json" % n)
        cmd = [exe, raw, "--dim", "2", "--n", str(n), "--precision", "single", "--sweeps", str(sweeps),
               "--repeats", str(3 if a.quick else a.repeats), "--check", "4",
               "--fractions", ",".join(map(str, fr))] + (["--cpu"] if a.cpu else [])
        if a.cpu:
            cmd[cmd.index(str(n))] = str(n // 64)
        print("+", " ".join(cmd), flush=True)
        r = subprocess.run(cmd)
        if r.returncode != 0:
            sys.exit("mgpu_bench failed (exit %d): see above" % r.returncode)
        with open(raw) as f:
            d = json.load(f)
        recs = sorted(d["records"], key=lambda p: p["fraction_gpu1"])
        t0 = [p["sweep_s"] for p in recs if p["fraction_gpu1"] == 0]
        t1 = [p["sweep_s"] for p in recs if p["fraction_gpu1"] == 1]
        half = [p["sweep_s"] for p in recs if p["fraction_gpu1"] == 0.5]
        model = None
        if t0 and t1 and half:
            x = max(0.0, half[0] - 0.5 * max(t0[0], t1[0]))
            model = {"t_0": t0[0], "t_1": t1[0], "x_exposed": x}
            for p in recs:
                f = p["fraction_gpu1"]
                p["predicted_s"] = max((1 - f) * t0[0], f * t1[0]) + (x if 0 < f < 1 else 0.0)
        runs.append({"n": n, "result": d, "model": model,
                     "label": "n = %d fp32, 2 x %s, %s" % (n, d["device"], next(
                         (p["exchange"] for p in recs if p["parts"] == 2), "?"))})
    lines = []
    for r in runs:
        recs = r["result"]["records"]
        base = min(p["sweep_s"] for p in recs if p["parts"] == 1)
        best = min(recs, key=lambda p: p["sweep_s"])
        lines.append("%s: best %.4g ms/sweep at %.0f %% on GPU 1: %.3fx one GPU (%.4g ms; seed 000: about 1.8x at 50 %%)%s"
                     % (r["label"], 1e3 * best["sweep_s"], 100 * best["fraction_gpu1"], base / best["sweep_s"],
                        1e3 * base, "; model X = %.3g us" % (1e6 * r["model"]["x_exposed"]) if r["model"] else ""))
        if any(p["checked"] is False for p in recs):
            lines.append("%s: a split is NOT bitwise equal to one GPU" % r["label"])
    out = os.path.join(a.out, "hybrid-fig15.json")
    png = os.path.join(a.out, "hybrid-fig15.png")
    with open(out, "w") as f:
        json.dump({"experiment": "fig15", "runs": runs, "summary": lines}, f, indent=1)
    why = None
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, axes = plt.subplots(1, len(runs), figsize=(6.2 * len(runs), 4.4), squeeze=False)
        for ax, r in zip(axes[0], runs):
            recs = sorted(r["result"]["records"], key=lambda p: p["fraction_gpu1"])
            base = min(p["sweep_s"] for p in recs if p["parts"] == 1)
            x = [100 * p["fraction_gpu1"] for p in recs]
            ax.plot(x, [p["sweep_s"] / base for p in recs], "o-", ms=3, label="measured")
            if r["model"]:
                ax.plot(x, [p["predicted_s"] / base for p in recs], "--", label="model")
            ax.axhline(1.0, color="gray", lw=1, label="one GPU")
            ax.axhline(0.5, color="gray", lw=1, ls=":", label="ideal two GPUs")
            ax.set_xlabel("rows on GPU 1 (%)")
            ax.set_ylabel("time per sweep / one GPU")
            ax.set_ylim(0, max(1.2, min(3.0, 1.05 * max(p["sweep_s"] / base for p in recs))))
            ax.set_title(r["label"], fontsize=9)
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
        fig.suptitle("seed 000 fig. 15 right: two-GPU row split")
        fig.tight_layout()
        fig.savefig(png, dpi=110)
    except ImportError:
        why = "matplotlib is not installed: no plot"
    print("\n".join(lines))
    print("wrote", out, "and", png if not why else "(%s)" % why)
    if any(p["checked"] is False for r in runs for p in r["result"]["records"]):
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("experiment", choices=["fig14", "fig15", "fig5d", "fig5d-mpi", "cpu-check", "refit"])
    ap.add_argument("json", nargs="?", help="refit: a fig14/fig5d JSON to re-evaluate with the current model")
    ap.add_argument("--llc-mib", type=float, default=300.0, help="refit of old runs: the host's LLC (H100: 300)")
    ap.add_argument("--l2-mib", type=float, default=32.0, help="refit of old runs: the cores' L2 (H100 host: 16 x 2)")
    ap.add_argument("--exchange", choices=["ladder", "clark", "constant"], default="ladder",
                    help="refit: ladder = the current calibration (the split measured at n/64 .. n; runs "
                         "without a ladder use their own points nearest to the rungs); clark/constant: the "
                         "slab calibration of before, for runs without the off-balance probe")
    ap.add_argument("--ranks", type=int, default=2, help="fig5d-mpi: MPI ranks")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--passes", type=int, default=1,
                    help="engine runs: time every split in this many passes over all splits (median)")
    ap.add_argument("--threads", type=int, default=0, help="CPU threads (0: all cores)")
    ap.add_argument("--boundary-threads", type=int, default=0,
                    help="nested boundary crew (0: the library's default; fig5d tunes 1, 2, 4 itself)")
    ap.add_argument("--engine", action="store_true",
                    help="fig14: one split engine per split, checked against GPU-only (fig5d always does)")
    ap.add_argument("--quick", action="store_true", help="fewer points and sweeps (fig14: the engine over the "
                    "seed's whole grid, and n = 4096 again with the crews unpinned)")
    ap.add_argument("--pin-ab", action="store_true", help="fig14: n = 4096 again with the crews unpinned")
    ap.add_argument("--cpu", action="store_true", help="fig15: CPU crews for the GPUs, n / 64 (the script's own check)")
    a = ap.parse_args()
    if a.experiment == "refit":
        if not a.json:
            sys.exit("refit: give the JSON of a run")
        import hybrid_model_offline
        if a.exchange == "ladder":
            hybrid_model_offline.refit_ladder(a.json)
        else:
            hybrid_model_offline.refit(a.json, a.llc_mib, a.l2_mib, a.exchange)
        return
    os.makedirs(a.out, exist_ok=True)
    tmp = lambda tag: os.path.join(a.out, "hybrid-%s.raw.json" % tag)
    common = ["--repeats", a.repeats] + (["--threads", a.threads] if a.threads else []) + \
        (["--boundary-threads", a.boundary_threads] if a.boundary_threads else [])
    passes = ["--passes", a.passes] if a.passes > 1 else []  # engine runs only
    fine = FINE[::4] if a.quick else FINE
    if a.experiment == "fig14":
        runs = []
        for n, sweeps in ((4096, 200), (16384, 40)):
            if a.engine or a.quick:  # one engine per split: the seed's whole grid (the target's sweep)
                fr = FINE + COARSE14
            else:
                fr = fine + (COARSE14[::3] if a.quick else COARSE14)
            d = run(a.build, tmp("fig14-%d" % n), ["--dim", 2, "--n", n, "--precision", "single", "--sweeps",
                                                   sweeps, "--check", 4, "--fractions", ",".join(map(str, fr))]
                    + (["--engine"] + passes if a.engine or a.quick else []) + common)
            runs.append(("n = %d fp32" % n, d))
        if a.quick or a.pin_ab:  # the same n = 4096 sweep with the crews unpinned (about 15 s): pinning's effect
            d = run(a.build, tmp("fig14-4096-unpinned"), ["--dim", 2, "--n", 4096, "--precision", "single", "--sweeps",
                                                         200, "--check", 4, "--engine", "--fractions",
                                                         ",".join(map(str, FINE + COARSE14))] + passes + common,
                    env={"HETRELAX_CREW_PIN": "0"})
            runs.append(("n = 4096 fp32, crews unpinned (HETRELAX_CREW_PIN=0)", d))
        finish("fig14", runs, "rows on the CPU (%)", "seed 000 fig. 14: CPU + GPU row split", a.out)
    elif a.experiment == "fig15":
        fig15_chain(a)
    elif a.experiment == "fig5d":
        # one split engine per split (no solver, no cpu-seq reference of 2 GiB grids): each
        # split checked bitwise against GPU-only after 2 sweeps; the nested boundary crew tuned
        fr = QUICK5D if a.quick else FINE + COARSE5D
        d = run(a.build, tmp("fig5d"), ["--engine", "--dim", 3, "--nx", 512, "--ny", 512, "--nz", 1024,
                                        "--precision", "double", "--schedules", "nested,naive",
                                        "--sweeps", 10 if a.quick else 20, "--check", 2,
                                        "--tune-boundary", "1,2,4", "--tune-at", 0.04,
                                        "--fractions", ",".join(map(str, fr))] + passes + common)
        finish("fig5d", [("512 x 512 x 1024 fp64, 1 rank", d)], "planes on the CPU (%)",
               "seed 003 fig. 5d: CPU share, naive vs nested", a.out)
    elif a.experiment == "fig5d-mpi":
        fr = QUICK5D if a.quick else FINE + COARSE5D
        d = run_mpi(a, tmp("fig5d-mpi"), ["--nx", 512, "--ny", 512, "--nz", 1024, "--precision", "double",
                                          "--schedules", "nested,naive", "--sweeps", 20,
                                          "--fractions", ",".join(map(str, fr)), "--model"] + common)
        finish_mpi("fig5d-mpi", d, a.out)
    else:  # the scripts' own check on a machine without a GPU: two CPU placements
        runs = []
        d = run(a.build, tmp("cpu-check-2d"), ["--dim", 2, "--n", 256, "--second", "cpu", "--schedules",
                                               "nested,naive", "--sweeps", 20, "--check", 3, "--fractions",
                                               "0,0.05,0.1,0.3,0.5,1"] + common)
        runs.append(("2-D n = 256, cpu + cpu", d))
        d = run(a.build, tmp("cpu-check-3d"), ["--dim", 3, "--n", 48, "--precision", "double", "--second", "cpu",
                                               "--schedules", "nested,naive", "--sweeps", 10, "--check", 3,
                                               "--fractions", "0,0.1,0.25,0.5,1"] + common)
        runs.append(("3-D n = 48 fp64, cpu + cpu", d))
        d = run(a.build, tmp("cpu-check-engine"), ["--engine", "--dim", 3, "--nx", 48, "--ny", 48, "--nz", 96,
                                                   "--precision", "double", "--second", "cpu", "--schedules",
                                                   "nested,naive", "--sweeps", 6, "--check", 2, "--tune-boundary",
                                                   "1,2", "--fractions", ",".join(map(str, QUICK5D))] + common)
        runs.append(("3-D 48x48x96 fp64, --engine (fig5d's pipeline), cpu + cpu", d))
        finish("cpu-check", runs, "rows on the first CPU part (%)", "hybrid engine with two CPU placements", a.out)
        if os.path.exists(os.path.join(a.build, "bench", "hybrid_mpi")):
            d = run_mpi(a, tmp("cpu-check-mpi"), ["--n", 24, "--second", "cpu", "--sweeps", 5, "--fractions",
                                                  "0,0.25,0.5,1", "--model"] + common)
            finish_mpi("cpu-check-mpi", d, a.out)


if __name__ == "__main__":
    main()
