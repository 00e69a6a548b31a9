#!/usr/bin/env python3
"""Venkatasubramanian & Vuduc figure 16: speed-up and relative effective sweeps of the async variants.

For the 2-D Poisson spike problem (docs/async.md has the definitions):
  1. reference solutions: the synchronous kernel after --ref-sweeps sweeps (the paper's
     4096) in double precision, and the exactly converged discrete solution (a direct
     solve by sine transforms, checked by its residual);
  2. target accuracy: the error of the synchronous kernel after T sweeps, error being
     max|u - ref| / max|ref| against the chosen --reference;
  3. for every variant and alpha: the smallest Teff (a whole number of passes) whose
     error is within the target, searched over Teff, capped at --cap x T. A rough
     bisection gives an estimate; then each of --runs runs scans pass by pass from it
     (a fresh process per probe: the variants are non-deterministic) and keeps the
     first Teff that reaches the target and its time;
  4. speed-up = time of the synchronous kernel for T sweeps, measured just before the
     run's scan, / time of the run (paired, so that load drifting on the machine cancels);
     speed-up, Teff/T and times as mean and sample standard deviation over the runs. A variant that
     misses the target at the cap is recorded with converged = false, never dropped.

Times are the driver's time in sweeps (no process start, setup or file output).
It drives the hetrelax binary: poisson2d --output x.raw --json -.

  bench/experiments/async_fig16.py build/hetrelax --backend cpu-threads --n 256 --threads 2
  bench/experiments/async_fig16.py build/hetrelax --backend gpu --n 4096 --sync-kernel tuned
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ALPHAS = [2, 4, 6, 8, 10, 15, 20, 30]


def pass_sweeps(kernel, alpha):
    """Sweeps per pass, docs/async.md: async0-2 2*floor(alpha/2)+1, async3 alpha+1."""
    return alpha + 1 if kernel == "async3" else 2 * (alpha // 2) + 1


def dst1(x, axis):
    """Unnormalised DST-I along axis: y_k = sum_j x_j sin(pi j k / (m + 1)), via the FFT."""
    x = np.moveaxis(x, axis, -1)
    m = x.shape[-1]
    z = np.zeros(x.shape[:-1] + (2 * (m + 1),))
    z[..., 1:m + 1] = x
    z[..., m + 2:] = -x[..., ::-1]
    y = -np.fft.rfft(z, axis=-1).imag[..., 1:m + 1] / 2.0
    return np.moveaxis(y, -1, axis)


def apply_a(u):
    """A u for A = 4I - neighbours on the interior, zero Dirichlet boundary."""
    p = np.pad(u, 1)
    return 4.0 * u - p[:-2, 1:-1] - p[2:, 1:-1] - p[1:-1, :-2] - p[1:-1, 2:]


def converged_solution(n):
    """The discrete solution for the spike b = 1 at (c, c), c = (n+1)/2 (1-based)."""
    b = np.zeros((n, n))
    c = (n + 1) // 2 - 1
    b[c, c] = 1.0
    lam1 = 2.0 - 2.0 * np.cos(np.pi * np.arange(1, n + 1) / (n + 1))
    bh = dst1(dst1(b, 0), 1)
    u = dst1(dst1(bh / (lam1[:, None] + lam1[None, :]), 0), 1) * (2.0 / (n + 1)) ** 2
    res = np.linalg.norm(b - apply_a(u)) / np.linalg.norm(b)
    if not res < 1e-9:
        sys.exit(f"async_fig16: the direct solve is wrong (relative residual {res:.3e})")
    return u, res


class Rejected(Exception):
    """The binary refused the options (exit 2), e.g. alpha larger than a block allows."""


class Runner:
    def __init__(self, args, tmp):
        self.a = args
        self.tmp = tmp
        self.calls = 0
        self.refs = {}        # name -> reference array (process mode)
        self.ref_names = []   # order of the references loaded into the server
        self.server = None
        if args.server:
            cmd = [args.server, "--backend", args.backend, "--n", str(args.n)]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            self.server = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def ask(self, line):
        """One request to the in-process server (bench/drivers/fig16_server.c), one JSON answer."""
        self.server.stdin.write(line + "\n")
        self.server.stdin.flush()
        self.calls += 1
        ans = json.loads(self.server.stdout.readline())
        if "error" in ans:
            if "invalid argument" in ans["error"]:
                raise Rejected(ans["error"])
            sys.exit(f"async_fig16: server: {line}: {ans['error']}")
        return ans

    def set_refs(self, refs):
        self.refs = refs
        if self.server:
            for name, r in refs.items():
                path = os.path.join(self.tmp, f"ref-{name}.raw")
                np.ascontiguousarray(r, dtype=np.float64).tofile(path)
                self.ask(f"ref {path}")
                self.ref_names.append(name)

    def reference_run(self, kernel, iters):
        """The double-precision reference sweeps as an array, and its record."""
        if not self.server:
            return self.run(kernel, 1, iters, precision="double")
        path = os.path.join(self.tmp, "ref-run.raw")
        rec = self.ask(f"save {kernel} 1 {iters} double {path}")
        return np.fromfile(path, dtype=np.float64).reshape(self.a.n, self.a.n), rec

    def measure(self, kernel, alpha, iters, verify=False):
        """Errors against every reference after iters sweeps from zero, and the run's record."""
        if self.server and not verify:
            rec = self.ask(f"run {kernel} {alpha} {iters} {self.a.precision}")
            self.check_counts(kernel, alpha, iters, rec)
            return dict(zip(self.ref_names, rec["errors"])), rec
        u, rec = self.run(kernel, alpha, iters, verify=verify)
        return {k: rel_err(u, r) for k, r in self.refs.items()}, rec

    def close(self):
        if self.server:
            self.server.stdin.write("quit\n")
            self.server.stdin.close()
            self.server.wait()

    def check_counts(self, kernel, alpha, iters, rec):
        if rec.get("teff", rec["iterations"]) != iters or rec["iterations"] != iters:
            sys.exit(f"async_fig16: asked for {iters} sweeps, {kernel} reports {rec['iterations']}")
        syncs = rec.get("global_syncs")
        if kernel in ("async0", "async1", "async2") and syncs is not None and \
                syncs != -(-iters // pass_sweeps(kernel, alpha)):
            sys.exit(f"async_fig16: {kernel} alpha {alpha} did {syncs} global syncs for {iters} sweeps; "
                     f"docs/async.md says {-(-iters // pass_sweeps(kernel, alpha))}")

    def run(self, kernel, alpha, iters, precision=None, verify=False):
        """One process: returns (solution as float64 n x n, the JSON record)."""
        a = self.a
        precision = precision or a.precision
        out = os.path.join(self.tmp, "u.raw")
        cmd = [a.hetrelax, "poisson2d", "--backend", a.backend, "--kernel", kernel, "--alpha", str(alpha),
               "--n", str(a.n), "--precision", precision, "--iters", str(iters), "--no-bandwidth", "--quiet",
               "--monitor", "0", "--json", "-", "--output", out]
        if a.threads:
            cmd += ["--threads", str(a.threads)]
        if verify:
            cmd += ["--verify"]
        cmd += a.extra
        p = subprocess.run(cmd, capture_output=True, text=True)
        self.calls += 1
        if p.returncode == 2:
            raise Rejected(p.stderr.strip())
        if p.returncode != 0:
            sys.exit(f"async_fig16: {' '.join(cmd)} failed ({p.returncode}):\n{p.stderr.strip()}")
        rec = json.loads(p.stdout)
        self.check_counts(kernel, alpha, iters, rec)
        u = np.fromfile(out, dtype=np.float64 if precision == "double" else np.float32)
        if u.size != a.n * a.n or not np.all(np.isfinite(u)):
            sys.exit(f"async_fig16: {out}: bad solution from {kernel}")
        return u.reshape(a.n, a.n).astype(np.float64), rec


def rel_err(u, ref):
    return float(np.max(np.abs(u - ref)) / np.max(np.abs(ref)))


def stats(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None
    return float(np.mean(xs)), float(np.std(xs, ddof=1)) if len(xs) > 1 else 0.0


class Point:
    """One variant and alpha: Teff in whole passes of P sweeps, up to the cap."""

    def __init__(self, runner, kernel, alpha, T, target, refs, crit, cap, log):
        self.runner, self.kernel, self.alpha, self.target = runner, kernel, alpha, target
        self.refs, self.crit, self.log = refs, crit, log
        self.P = pass_sweeps(kernel, alpha)
        self.cap_p = max(1, -(-cap * T // self.P))
        self.T = T
        self.est = None      # estimated smallest passes; None: rejected or not converged
        self.rejected = None
        self.error_at_cap = None
        self.results = []    # one per run

    def probe(self, p):
        errs, rec = self.runner.measure(self.kernel, self.alpha, p * self.P)
        if self.runner.a.verbose:
            self.log(f"    probe {self.kernel} alpha {self.alpha} Teff {p * self.P}: error {errs[self.crit]:.6e}, "
                     f"{rec['time_sweeps_s']:.4f} s")
        return errs[self.crit] <= self.target, errs, rec

    def estimate(self):
        """A bracket around Teff ~ T (halving down, doubling up to the cap), then bisection
        (single probes). Every variant needs Teff/T well above 1/2, so the bracket is
        usually [T/2, T] or [T, 2T] and the bisection a handful of probes."""
        p = min(self.cap_p, max(1, -(-self.T // self.P)))
        try:
            ok, errs, _ = self.probe(p)
        except Rejected as e:
            self.rejected = str(e)
            self.log(f"  {self.kernel} alpha {self.alpha}: rejected: {e}")
            return
        if ok:
            hi, lo = p, p // 2  # 0 passes leave u = 0: never on target
            while lo > 0 and self.probe(lo)[0]:
                hi, lo = lo, lo // 2
        else:
            lo = p
            while True:
                if p == self.cap_p:
                    self.error_at_cap = errs[self.crit]
                    self.log(f"  {self.kernel} alpha {self.alpha}: error {errs[self.crit]:.4e} at the cap "
                             f"Teff {p * self.P}: not converged")
                    return
                lo, p = p, min(self.cap_p, 2 * p)
                ok, errs, _ = self.probe(p)
                if ok:
                    hi = p
                    break
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.probe(mid)[0]:
                hi = mid
            else:
                lo = mid
        self.est = hi

    def scan(self, sync_time):
        """One run: from the estimate, pass by pass down (or up) to the first Teff on target.
        sync_time() times the synchronous kernel just before, for a paired speed-up."""
        if self.est is None:
            return
        t_sync = sync_time()
        p = self.est
        ok, errs, rec = self.probe(p)
        if ok:
            while p > 1:
                ok2, errs2, rec2 = self.probe(p - 1)
                if not ok2:
                    break
                p, errs, rec = p - 1, errs2, rec2
        else:
            while p < self.cap_p and not ok:
                p += 1
                ok, errs, rec = self.probe(p)
        self.results.append({"teff": p * self.P if ok else None, "passes": p if ok else None,
                             "time_s": rec["time_sweeps_s"] if ok else None, "sync_time_s": t_sync,
                             "errors": errs})


def device_name(args, sample):
    if args.device_name:
        return args.device_name
    if sample.get("device"):
        return sample["device"]
    try:
        info = json.loads(subprocess.run([args.hetrelax, "info", "--no-bandwidth", "--json", "-"],
                                         capture_output=True, text=True, check=True).stdout)
        if args.backend == "gpu" and info.get("gpus"):
            g = info["gpus"][0]
            return g.get("name", str(g)) if isinstance(g, dict) else str(g)
        return f"{info.get('cpu_model', 'unknown CPU')} ({info.get('cores', '?')} cores)"
    except (OSError, subprocess.CalledProcessError, ValueError):
        return "unknown"


def plot(path, args, sync_rec, records):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for k in args.kernels:
        rs = [r for r in records if r["kernel"] == k]
        ok = [r for r in rs if r["teff_mean"] is not None]
        bad = [r for r in rs if r["teff_mean"] is None]
        if ok:
            x = [r["alpha"] for r in ok]
            ax[0].errorbar(x, [r["speedup_mean"] for r in ok], yerr=[r["speedup_std"] for r in ok],
                           marker="o", capsize=3, label=k)
            ax[1].errorbar(x, [r["teff_over_t_mean"] for r in ok], yerr=[r["teff_over_t_std"] for r in ok],
                           marker="o", capsize=3, label=k)
        if bad:
            ax[1].plot([r["alpha"] for r in bad], [args.cap] * len(bad), "x", color="red",
                       label=f"{k}: not converged by {args.cap} T")
    for a_ in ax:
        a_.axhline(1.0, color="gray", lw=0.8, ls="--")
        a_.set_xlabel("async factor alpha")
        a_.legend(fontsize=8)
        a_.grid(alpha=0.3)
    ax[0].set_ylabel(f"speed-up over {args.sync_kernel}, same accuracy (T={args.T})")
    ax[1].set_ylabel("Teff / T")
    fig.suptitle(f"{records[0]['device'] if records else ''}: n={args.n}, {args.precision}, "
                 f"{args.backend}, reference: {args.reference}, {args.runs} runs (mean, std)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return None


def point_record(base, pt, refs, log):
    """The JSON record of one variant and alpha from its runs."""
    res = pt.results
    good = [x for x in res if x["teff"] is not None]
    log(f"  {pt.kernel} alpha {pt.alpha}: pass {pt.P}, estimate "
        f"{None if pt.est is None else pt.est * pt.P}, runs {[x['teff'] for x in res]}")
    teff_m, teff_s = stats([x["teff"] for x in good])
    time_m, time_s = stats([x["time_s"] for x in good])
    sp_m, sp_s = stats([x["sync_time_s"] / x["time_s"] for x in good if x["time_s"] > 0])
    return dict(
        base, kernel=pt.kernel, alpha=pt.alpha, pass_sweeps=pt.P, runs=len(res), runs_converged=len(good),
        converged=bool(res) and len(good) == len(res), teff_mean=teff_m, teff_std=teff_s,
        teff_min=min((x["teff"] for x in good), default=None),
        teff_max=max((x["teff"] for x in good), default=None),
        teff_over_t_mean=None if teff_m is None else teff_m / pt.T,
        teff_over_t_std=None if teff_s is None else teff_s / pt.T,
        time_s_mean=time_m, time_s_std=time_s,
        time_s_median=None if not good else float(np.median([x["time_s"] for x in good])),
        speedup_mean=sp_m, speedup_std=sp_s, cap_teff=pt.cap_p * pt.P, error_at_cap=pt.error_at_cap,
        rejected=pt.rejected,
        error_at_teff_mean={c: stats([x["errors"][c] for x in good])[0] for c in refs}, per_run=res)


def doc_header(args, device, ref_rec, commit, ref_res, sweeps_vs_conv, target, sync_errs, calls):
    return {
        "experiment": "seed 000 figure 16 (issue 4): async variants vs the synchronous kernel",
        "definitions": "docs/async.md",
        "device": device, "backend": args.backend, "n": args.n, "precision": args.precision,
        "threads": args.threads or None, "sync_kernel": args.sync_kernel, "T": args.T,
        "criterion": f"max|u - ref| / max|ref| <= target, ref = {args.reference}",
        "reference": {"sweeps": args.ref_sweeps, "precision": "double",
                      "converged_residual": ref_res, "sweeps_vs_converged_error": sweeps_vs_conv},
        "target_error": target, "sync_error": sync_errs, "cap_factor": args.cap, "runs": args.runs,
        "binary_commit": ref_rec.get("commit"), "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "processes": calls,
    }


def write_doc(args, doc, sync_record, sync_times, records, skipped, complete, log, final=False):
    """Writes the JSON (and on the final call the plot); returns the document."""
    t_sync, t_sync_std = stats(sync_times)
    sync_record.update(time_s_mean=t_sync, time_s_std=t_sync_std, timing_runs=len(sync_times))
    doc.update(complete=complete, not_measured=skipped, sync=sync_record, records=records)
    if final:
        why = plot(args.png, args, sync_record, records)
        doc["plot"] = args.png if why is None else None
        if why:
            doc["plot_note"] = why
            log(why)
    with open(args.json + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
    os.replace(args.json + ".tmp", args.json)
    return doc


def merge(args, log):
    """--merge: one document from several runs of the same experiment (a grid measured in
    parts, say, when a device call has a time limit). Later files win for a point measured
    twice; everything that defines the target must agree."""
    docs = []
    for path in args.merge:
        with open(path) as f:
            docs.append(json.load(f))
    keys = ("device", "backend", "n", "precision", "sync_kernel", "T", "criterion", "target_error", "cap_factor")
    for d, path in zip(docs[1:], args.merge[1:]):
        for k in keys:
            if d.get(k) != docs[0].get(k):
                sys.exit(f"async_fig16: --merge: {path}: {k} is {d.get(k)!r}, {args.merge[0]} has {docs[0].get(k)!r}")
    by_point = {}
    for d, path in zip(docs, args.merge):
        for r in d["records"]:
            by_point[(r["kernel"], r["alpha"])] = dict(r, source=os.path.basename(path),
                                                       source_commit=d.get("commit"), source_date=d.get("date"))
    order = [(r["kernel"], r["alpha"]) for d in docs for r in d["records"]]
    records = [by_point[p] for p in dict.fromkeys(order)]
    skipped = [x for d in docs for x in d.get("not_measured", []) if (x["kernel"], x["alpha"]) not in by_point]
    skipped = [dict(t) for t in dict.fromkeys(tuple(sorted(x.items())) for x in skipped)]
    sync_times = [t for d in docs for t in [d["sync"].get("time_s_mean")] if t is not None]
    doc = dict(docs[0], records=records, not_measured=skipped, complete=not skipped,
               merged_from=[{"file": os.path.basename(p), "commit": d.get("commit"), "date": d.get("date"),
                             "points": len(d["records"])} for p, d in zip(args.merge, docs)],
               processes=sum(d.get("processes", 0) for d in docs))
    doc["sync"] = dict(docs[0]["sync"], time_s_mean_per_file=sync_times)
    args.kernels = list(dict.fromkeys(r["kernel"] for r in records))
    args.n, args.precision, args.backend = doc["n"], doc["precision"], doc["backend"]
    args.sync_kernel, args.cap, args.runs = doc["sync_kernel"], doc["cap_factor"], doc["runs"]
    args.reference = doc["criterion"].rsplit("= ", 1)[-1]
    why = plot(args.png, args, doc["sync"], records)
    doc["plot"] = args.png if why is None else None
    if why:
        doc["plot_note"] = why
        log(why)
    with open(args.json, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"merged {len(records)} points from {len(docs)} files into {args.json}"
          + ("" if doc["complete"] else f"; not measured: {skipped}"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("hetrelax", help="path to the hetrelax binary")
    ap.add_argument("--backend", default="cpu-threads", choices=["cpu-threads", "gpu"])
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--precision", default="single", choices=["single", "double"])
    ap.add_argument("--kernels", default="async0,async1,async2,async3")
    ap.add_argument("--alphas", default=",".join(map(str, ALPHAS)))
    ap.add_argument("--sync-kernel", default=None, help="default: spmd (cpu-threads), tuned (gpu)")
    ap.add_argument("--T", type=int, default=1000, help="sweeps of the synchronous kernel (the target)")
    ap.add_argument("--ref-sweeps", type=int, default=4096, help="sweeps of the reference run")
    ap.add_argument("--reference", default="sweeps", choices=["sweeps", "converged"],
                    help="criterion: error against the --ref-sweeps run (the paper) or the converged solution")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--cap", type=int, default=20, help="give up at cap x T sweeps")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--device-name", default=None)
    ap.add_argument("--verbose", action="store_true", help="log every probe")
    ap.add_argument("--server", default=None,
                    help="path to bench/fig16_server (built as build/bench/fig16_server): run every probe in "
                         "one process instead of one process per probe (same library, same timings)")
    ap.add_argument("--time-budget", type=float, default=0.0,
                    help="seconds: start no new point after this (those left are listed as not measured)")
    ap.add_argument("--merge", nargs="+", metavar="JSON", default=None,
                    help="instead of measuring: merge the JSON files of earlier runs into --json and --png")
    ap.add_argument("--no-verify", action="store_true", help="skip --verify of the sync run against cpu-seq")
    ap.add_argument("--json", default="async_fig16.json")
    ap.add_argument("--png", default="async_fig16.png")
    ap.add_argument("extra", nargs="*", help="after --: more poisson2d flags (e.g. --device 1)")
    args = ap.parse_args()
    if args.merge:
        return merge(args, lambda msg: print(msg, file=sys.stderr, flush=True))
    args.kernels = [k for k in args.kernels.split(",") if k]
    args.alphas = [int(x) for x in args.alphas.split(",") if x]
    args.sync_kernel = args.sync_kernel or ("tuned" if args.backend == "gpu" else "spmd")
    if args.runs < 1 or args.T < 1 or args.n < 1 or args.cap < 1:
        ap.error("--runs, --T, --n and --cap must be >= 1")
    if not (shutil.which(args.hetrelax) or os.access(args.hetrelax, os.X_OK)):
        ap.error(f"{args.hetrelax}: not an executable")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    tmp = tempfile.mkdtemp(prefix="hr_fig16_")
    runner = None
    try:
        runner = Runner(args, tmp)
        log(f"references: {args.sync_kernel} x {args.ref_sweeps} sweeps (double), direct solve")
        ref_sweeps, ref_rec = runner.reference_run(args.sync_kernel, args.ref_sweeps)
        ref_conv, ref_res = converged_solution(args.n)
        refs = {"sweeps": ref_sweeps, "converged": ref_conv}
        runner.set_refs(refs)
        device = device_name(args, ref_rec)

        log(f"target: {args.sync_kernel} x T={args.T}, {args.runs} runs")
        sync_times, sync_errs = [], None
        for r in range(args.runs):
            errs, rec = runner.measure(args.sync_kernel, 1, args.T, verify=(r == 0 and not args.no_verify))
            if sync_errs is not None and errs != sync_errs:
                sys.exit(f"async_fig16: {args.sync_kernel} is not reproducible: {errs} vs {sync_errs}")
            sync_errs = errs
            sync_times.append(rec["time_sweeps_s"])
        target = sync_errs[args.reference]
        t_sync, t_sync_std = stats(sync_times)
        log(f"target error {target:.6e} ({args.reference}); sync time {t_sync:.4f} s")
        base = {"n": args.n, "precision": args.precision, "device": device, "backend": args.backend}
        sync_record = dict(base, kernel=args.sync_kernel, alpha=1, runs=args.runs, teff_mean=float(args.T),
                           teff_std=0.0, teff_over_t_mean=1.0, teff_over_t_std=0.0, time_s_mean=t_sync,
                           time_s_std=t_sync_std, speedup_mean=1.0, speedup_std=0.0, converged=True,
                           error=sync_errs)

        points = [Point(runner, k, alpha, args.T, target, refs, args.reference, args.cap, log)
                  for k in args.kernels for alpha in args.alphas]

        def sync_time():
            t = runner.measure(args.sync_kernel, 1, args.T)[1]["time_sweeps_s"]
            sync_times.append(t)
            return t

        commit = ref_rec.get("commit", "")
        try:
            commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                                    cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip() or commit
        except OSError:
            pass
        records, skipped = [], []
        t_start = time.monotonic()
        # point by point, each saved as soon as its runs are done, so that a run cut short
        # (a time limit) keeps every finished point; the speed-up of each run is paired with
        # a timing of the synchronous kernel just before it, so load drifting cancels
        for pt in points:
            if args.time_budget and time.monotonic() - t_start > args.time_budget:
                skipped.append({"kernel": pt.kernel, "alpha": pt.alpha})
                log(f"  {pt.kernel} alpha {pt.alpha}: not measured (--time-budget {args.time_budget} s spent)")
                continue
            t_pt = time.monotonic()
            pt.estimate()
            for r in range(args.runs):
                pt.scan(sync_time)
            records.append(point_record(base, pt, refs, log))
            log(f"  {pt.kernel} alpha {pt.alpha}: {time.monotonic() - t_pt:.1f} s, {runner.calls} probes so far")
            write_doc(args, doc_header(args, device, ref_rec, commit, ref_res, rel_err(ref_sweeps, ref_conv),
                                       target, sync_errs, runner.calls),
                      sync_record, sync_times, records, skipped, complete=False, log=log)
        doc = write_doc(args, doc_header(args, device, ref_rec, commit, ref_res, rel_err(ref_sweeps, ref_conv),
                                         target, sync_errs, runner.calls),
                        sync_record, sync_times, records, skipped, complete=not skipped, log=log, final=True)
        print(f"{'kernel':8} {'alpha':>5} {'Teff/T':>14} {'speed-up':>14} {'runs':>5}")
        for r in [sync_record] + records:
            if r.get("rejected"):
                print(f"{r['kernel']:8} {r['alpha']:5d}   rejected: {r['rejected']}")
                continue
            if r["teff_mean"] is None:
                print(f"{r['kernel']:8} {r['alpha']:5d}   not converged by {args.cap} T "
                      f"(error {r['error_at_cap']:.3e} > {target:.3e})")
                continue
            print(f"{r['kernel']:8} {r['alpha']:5d} {r['teff_over_t_mean']:8.3f}+-{r['teff_over_t_std']:.3f} "
                  f"{r['speedup_mean']:8.3f}+-{r['speedup_std']:.3f} {r['runs']:5d}"
                  + ("" if r["converged"] else f"  ({r['runs_converged']} converged)"))
        for r in skipped:
            print(f"{r['kernel']:8} {r['alpha']:5d}   not measured (time budget)")
        print(f"wrote {args.json}" + (f", {args.png}" if doc.get("plot") else ""))
    finally:
        if runner is not None:
            runner.close()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
