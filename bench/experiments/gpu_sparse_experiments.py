#!/usr/bin/env python3
"""The experiments of Anzt et al. (section 4) on one GPU, through the many-solves
driver (bench/drivers/gpu_sparse_driver.c, built as build*/tests/methods/sparse/gpu/gpu_sparse_driver).

sections (default: all but multi):
  variation    Tables 2-3: async-(5), block 128, N runs on fv2d:99 and trefethen:2000;
               per checkpoint the mean/max/min residual, variance, standard deviation,
               absolute and relative variation, standard error
  convergence  Figures 6-7: residual against global iterations, gs (CPU), jacobi,
               async-(1), async-(5) (GPU) on every generated matrix
  overhead     Table 4: time of 100..500 global iterations of async-(1..9), fv2d:99
  periter      Table 5: time per global iteration, gs (CPU), jacobi and async-(5) (GPU),
               averaged over runs of 10, 50, 100, 200 iterations
  time         Figure 9: residual against time and time to 1e-6 / 1e-10 for gs, jacobi,
               async-(5) (blocks 128 and 448), cg
  fault        Table 6: 25% of the components fail at iteration 10, recover after 10, 20,
               30 or never
  tune         streams x block for async-(5) (the knobs of the GPU method)
  multi        Figure 11: AMC (overlapped, and serial with HETRELAX_SPARSE_AMC_SERIAL=1), DC,
               DK on 1 and 2 GPUs and the plain method on 1 GPU, time to 1e-10 and time per
               iteration on --multi-matrices; then AMC on 2 GPUs with an exchange round
               every 1, 2, 4 kernels (HETRELAX_SPARSE_AMC_EVERY) on trefethen:20000

Jobs that need environment variables (the AMC variants) go to a second driver process
started with that environment (Driver.run(env=...)); the driver reads its knobs at each
solve's setup, but one process has one environment.

Timing runs do no residual check inside the timed loop (tol 0, a fixed iteration
count); the residual of each timed run is recomputed on the host and must match the
target, else the point is run again with more iterations. Writes one JSON file.

usage: bench/experiments/gpu_sparse_experiments.py --driver PATH --out FILE.json [--sections a,b] [--runs 1000]
"""
import argparse, datetime, json, math, os, platform, statistics, subprocess, sys, time

ALL = ["time", "periter", "variation", "fault", "convergence", "overhead", "tune"]  # most needed first
MATRICES = ["fv2d:98", "fv2d:99", "trefethen:2000", "trefethen:20000", "laplace2d:100",
            "random-spd:5000:0.002:1", "laplace3d:64"]


SMOKE = False  # --smoke: the script's logic on the CPU backend, small sizes (no GPU needed)


class Driver:
    def __init__(self, path, env=None):
        self.path, self.env = path, dict(env or {})
        full = None
        if env:
            full = dict(os.environ)
            full.update({k: str(v) for k, v in env.items()})
        self.p = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
                                  env=full)
        self.solves = 0
        self.subs = {}  # environment -> a driver process started with it

    def run(self, repeat=1, must=True, env=None, **kw):
        """env: variables (name -> value) merged into os.environ for the solves of this
        job; they run in a driver process of their own, kept for later jobs with the same env."""
        if env:
            key = tuple(sorted((k, str(v)) for k, v in env.items()))
            if key not in self.subs:
                self.subs[key] = Driver(self.path, env)
            out = self.subs[key].run(repeat, must, **kw)
            self.solves += len(out)
            return out
        if SMOKE:
            kw = {k: ("cpu-threads" if (k, v) == ("backend", "gpu") else v) for k, v in kw.items()}
            kw["gen"] = {"fv2d:98": "fv2d:20", "fv2d:99": "fv2d:21", "trefethen:20000": "trefethen:300",
                         "trefethen:2000": "trefethen:200", "laplace2d:100": "laplace2d:12",
                         "laplace3d:64": "laplace3d:6", "random-spd:5000:0.002:1": "random-spd:300:0.02:1",
                         "trefethen:200000": "trefethen:400", "trefethen:1000000": "trefethen:500",
                         "trefethen:2000000": "trefethen:500"}.get(kw["gen"], kw["gen"])
            kw.pop("streams", None)
            kw.pop("gpus", None)  # the CPU backend refuses them: smoke runs the logic only
            kw.pop("comm", None)
        line = " ".join(f"{k}={v}" for k, v in kw.items()) + f" repeat={repeat}\n"
        self.p.stdin.write(line)
        self.p.stdin.flush()
        out = []
        for _ in range(repeat):
            text = self.p.stdout.readline()
            if not text:
                sys.exit(f"driver ended on: {line.strip()}")
            rec = json.loads(text)
            out.append(rec)
            self.solves += 1
            if "error" in rec:
                if must:
                    sys.exit(f"driver failed on: {line.strip()}: {rec['error']}")
                print(f"driver failed on: {line.strip()}: {rec['error']}", flush=True)
                break
        return out

    def close_subs(self):
        for sub in self.subs.values():
            sub.close()
        self.subs = {}

    def close(self):
        self.close_subs()
        self.p.stdin.close()
        self.p.wait()


def med(v):
    return statistics.median(v) if v else None


def method_args(m):
    """label -> driver keys"""
    if m == "gs":
        return dict(method="gs", backend="cpu-seq")
    if m == "jacobi":
        return dict(method="jacobi", backend="gpu")
    if m == "cg":
        return dict(method="cg", backend="gpu")
    if m.startswith("async-("):  # async-(K) or async-(K)/B
        k, _, b = m[len("async-("):].partition(")")
        return dict(method="async", backend="gpu", K=int(k), block=int(b[1:]) if b else 128)
    raise ValueError(m)


def first_below(hist, tol):
    for it, r in hist:
        if r is not None and r < tol:
            return it
    return None


# ----------------------------------------------------------------------- sections

def variation(d, a, streams=1):
    out = []
    for mat, maxit, every in (("fv2d:99", 60, 2), ("trefethen:2000", 40, 2)):
        t0 = time.time()
        recs = d.run(repeat=a.runs, gen=mat, K=5, block=128, tol=0, maxit=maxit, monitor=every, method="async",
                     backend="gpu", streams=streams)
        table = []
        for idx, (it, _) in enumerate(recs[0]["history"]):
            v = [r["history"][idx][1] for r in recs]
            mean = statistics.fmean(v)
            var = statistics.pvariance(v, mean)
            sd = math.sqrt(var)
            table.append({"iterations": it, "mean": mean, "max": max(v), "min": min(v), "variance": var,
                          "std_dev": sd, "abs_variation": max(v) - min(v),
                          "rel_variation": (max(v) - min(v)) / mean if mean > 0 else None,
                          "std_error": sd / math.sqrt(len(v))})
        rec = {"matrix": mat, "method": "async-(5)", "block": 128, "streams": streams, "runs": len(recs),
               "device": recs[0]["device"],
               "checkpoint_every": every, "table": table, "seconds": time.time() - t0}
        out.append(rec)
        last = table[-1]
        print(f"variation {mat}: {len(recs)} runs in {rec['seconds']:.1f} s; at {last['iterations']}: "
              f"mean {last['mean']:.3e} [{last['min']:.3e}, {last['max']:.3e}], rel var {last['rel_variation']}",
              flush=True)
        for row in table[::5]:
            print(f"   {row['iterations']:4d} mean {row['mean']:.4e} rel.var {row['rel_variation']:.3e} "
                  f"std.err {row['std_error']:.3e}", flush=True)
    return out


def convergence(d, a):
    out = []
    for mat in MATRICES:
        every = 5 if mat.startswith("laplace3d") else 1
        for m in ("gs", "jacobi", "async-(1)", "async-(5)"):
            r = d.run(gen=mat, tol=1e-12, maxit=300, monitor=every, check=every, **method_args(m))[0]
            out.append({"matrix": mat, "method": m, "backend": r["backend"], "device": r["device"], "n": r["n"],
                        "nnz": r["nnz"], "block": 128 if m.startswith("async") else None, "history": r["history"]})
            print(f"convergence {mat:24s} {m:10s} residual {r['residual']:.3e} after {r['iterations']}", flush=True)
    return out


def overhead(d, a):
    out = []
    for k in range(1, 10):
        row = {"matrix": "fv2d:99", "method": f"async-({k})", "block": 448, "times_s": {}}
        for iters in (100, 200, 300, 400, 500):
            recs = d.run(repeat=3, gen="fv2d:99", method="async", backend="gpu", K=k, block=448, tol=0, maxit=iters)
            row["times_s"][str(iters)] = med([r["time_iter_s"] for r in recs])
            row["device"] = recs[0]["device"]
        out.append(row)
        print(f"overhead async-({k}) " + " ".join(f"{v:.5f}" for v in row["times_s"].values()), flush=True)
    return out


def periter(d, a):
    out = []
    for mat in MATRICES:
        for m in ("gs", "jacobi", "async-(5)", "async-(5)/448"):
            per, per_setup = [], []
            for iters in (10, 50, 100, 200):
                r = d.run(gen=mat, tol=0, maxit=iters, **method_args(m))[0]
                per.append(r["time_iter_s"] / iters)
                per_setup.append((r["time_iter_s"] + r["time_setup_s"]) / iters)
            out.append({"matrix": mat, "method": m, "backend": r["backend"], "device": r["device"], "n": r["n"],
                        "nnz": r["nnz"], "time_per_iter_s": statistics.fmean(per),
                        "time_per_iter_with_setup_s": statistics.fmean(per_setup),
                        "per_run_s": per})
            print(f"periter {mat:24s} {m:14s} {statistics.fmean(per):.3e} s/iter", flush=True)
    return out


def timed(d, mat, m, iters, repeat, **extra):
    recs = d.run(repeat=repeat, gen=mat, tol=0, maxit=iters, **method_args(m), **extra)
    return med([r["time_iter_s"] for r in recs]), max(r["residual"] for r in recs), recs[0]


def time_to(d, mat, m, k, tol, repeat, **extra):
    """Runs k iterations unchecked; bumps k until every repeat is below tol."""
    for _ in range(6):
        t, res, r0 = timed(d, mat, m, k, repeat, **extra)
        if res < tol:
            return k, t, res
        k = int(math.ceil(k * 1.05)) + 1
    return None, None, res


def time_section(d, a):
    out = []
    mats = ["fv2d:99", "trefethen:2000", "trefethen:20000", "laplace2d:100"]
    methods = ["gs", "jacobi", "async-(5)", "async-(5)/256", "async-(5)/448", "cg"]
    for mat in mats:
        for m in methods:
            every = 50 if (mat.startswith("laplace2d") and m != "cg") else 1
            maxit = 200000
            chk = d.run(gen=mat, tol=1e-10, maxit=maxit, monitor=every, check=every, **method_args(m))[0]
            k6, k10 = first_below(chk["history"], 1e-6), first_below(chk["history"], 1e-10)
            rep = 1 if m == "gs" else 3
            curve = []
            if k10:
                for f in (0.1, 0.25, 0.5, 0.75):
                    k = max(1, int(k10 * f))
                    t, res, _ = timed(d, mat, m, k, rep)
                    curve.append([k, t, res])
            k6t, t6, _ = time_to(d, mat, m, k6, 1e-6, rep) if k6 else (None, None, None)
            k10t, t10, r10 = time_to(d, mat, m, k10, 1e-10, rep) if k10 else (None, None, None)
            if k6t:
                curve.append([k6t, t6, None])
            if k10t:
                curve.append([k10t, t10, r10])
            curve.sort(key=lambda p: p[0])
            rec = {"matrix": mat, "method": m.split("/")[0], "variant": m, "backend": chk["backend"],
                   "device": chk["device"], "n": chk["n"], "nnz": chk["nnz"],
                   "block": method_args(m).get("block"), "checked_every": every,
                   "iterations_to_1e-6": k6t, "iterations_to_1e-10": k10t,
                   "time_to_1e-6_s": t6, "time_to_1e-10_s": t10, "residual_at_1e-10_point": r10,
                   "history": chk["history"], "curve": curve,
                   "repeats": rep}
            out.append(rec)
            f = lambda v: f"{v:.4e}" if v is not None else "never"
            print(f"time {mat:16s} {m:14s} k6 {k6t} k10 {k10t}  t6 {f(t6)} s  t10 {f(t10)} s", flush=True)
    return out


def fault(d, a):
    out = []
    for mat in ("fv2d:99", "trefethen:2000"):
        base = None
        for rec_after in (None, 10, 20, 30, -1):
            spec = {} if rec_after is None else {"fault": "0.25@10" + (f":recover={rec_after}" if rec_after >= 0 else "")}
            runs = d.run(repeat=5, gen=mat, method="async", backend="gpu", K=5, block=128, tol=1e-10, maxit=400,
                         monitor=1, check=1, **spec)
            its = [r["iterations"] for r in runs if r["reason"] == "converged"]
            k = int(med(its)) if its else None
            kt, t, _ = time_to(d, mat, "async-(5)", k, 1e-10, 3, **spec) if k else (None, None, None)
            row = {"matrix": mat, "method": "async-(5)", "block": 128, "device": runs[0]["device"],
                   "fault": spec.get("fault"), "recover": rec_after, "iterations_median": k,
                   "iterations_timed": kt,
                   "iterations": [r["iterations"] for r in runs], "converged_runs": len(its),
                   "time_s": t, "final_residual_median": med([r["residual"] for r in runs]),
                   "history": runs[0]["history"]}
            if rec_after is None:
                base = row
            elif base and k and t and base["time_s"]:
                row["extra_iterations_pct"] = 100.0 * (k - base["iterations_median"]) / base["iterations_median"]
                row["extra_time_pct"] = 100.0 * (t - base["time_s"]) / base["time_s"]
            out.append(row)
            print(f"fault {mat:16s} recover {rec_after}: iterations {k}, residual {row['final_residual_median']:.3e}, "
                  f"extra {row.get('extra_iterations_pct')}% iters, {row.get('extra_time_pct')}% time", flush=True)
    return out


def tune(d, a):
    out = []
    for mat in ("fv2d:99", "trefethen:20000", "laplace2d:100"):
        for block in (128, 256, 448, 1024):
            for streams in (1, 2, 4):
                chk = d.run(gen=mat, method="async", backend="gpu", K=5, block=block, streams=streams, tol=1e-10,
                            maxit=200000, check=10)[0]
                k, t, res = time_to(d, mat, f"async-(5)/{block}", chk["iterations"], 1e-10, 3, streams=streams)
                out.append({"matrix": mat, "block": block, "streams": streams, "iterations_checked": chk["iterations"],
                            "iterations_to_1e-10": k, "time_to_1e-10_s": t,
                            "time_per_iter_s": t / k if k else None, "residual_max": res, "device": chk["device"]})
                print(f"tune {mat:16s} block {block:5d} streams {streams}: {k} iterations, {t} s, "
                      f"residual {res:.2e}", flush=True)
    for mat in ("fv2d:99", "laplace2d:100"):  # local iterations K at one stream
        for block in (256, 448):
            for K in (1, 2, 3, 5, 7, 9):
                label = f"async-({K})/{block}"
                chk = d.run(gen=mat, tol=1e-10, maxit=200000, check=10, **method_args(label))[0]
                k, t, res = time_to(d, mat, label, chk["iterations"], 1e-10, 3)
                out.append({"matrix": mat, "block": block, "streams": 1, "K": K, "iterations_checked": chk["iterations"],
                            "iterations_to_1e-10": k, "time_to_1e-10_s": t,
                            "time_per_iter_s": t / k if k else None, "residual_max": res, "device": chk["device"]})
                print(f"tune {mat:16s} block {block:5d} K {K}: {k} iterations, {t} s", flush=True)
    return out


# label -> (driver comm, environment); "auto" on 1 GPU is the plain method
MULTI_COMMS = {"auto": ("auto", None), "amc": ("amc", None),
               "amc-serial": ("amc", {"HETRELAX_SPARSE_AMC_SERIAL": 1}), "dc": ("dc", None), "dk": ("dk", None)}
MULTI_RUNS = [("auto", 1), ("amc", 1), ("amc-serial", 1), ("dc", 1), ("dk", 1),
              ("amc", 2), ("amc-serial", 2), ("dc", 2), ("dk", 2)]


def multi_row(d, mat, label, comm, gpus, env, repeat, block=256):
    """One configuration: `repeat` solves to 1e-10 (checked every 10), medians."""
    recs = d.run(repeat=repeat, must=False, env=env, gen=mat, method="async", backend="gpu", K=5, block=block,
                 gpus=gpus, comm=comm, tol=1e-10, maxit=100000, check=10)
    base = {"matrix": mat, "method": "async-(5)", "block": block, "comm": label, "driver_comm": comm,
            "gpus": gpus, "env": {k: str(v) for k, v in (env or {}).items()}}
    if "error" in recs[-1]:
        return dict(base, error=recs[-1]["error"], **{"time_to_1e-10_s": None})
    ok = [r for r in recs if r["reason"] == "converged" and r["residual"] < 1e-10]
    t = med([r["time_iter_s"] for r in ok])
    its = med([r["iterations"] for r in recs])
    row = dict(base, device=recs[0]["device"], n=recs[0]["n"], nnz=recs[0]["nnz"], converged_runs=len(ok),
               runs=len(recs), iterations_median=its, time_s_median=med([r["time_s"] for r in recs]),
               setup_s_median=med([r["time_setup_s"] for r in recs]), times_iter_s=[r["time_iter_s"] for r in recs],
               **{"time_to_1e-10_s": t})
    row["time_per_iteration_s"] = t / its if t and its else None
    return row


def say_row(row):
    if row.get("error"):
        print(f"multi {row['matrix']:18s} {row['comm']:12s} x{row['gpus']}: failed: {row['error']}", flush=True)
        return
    tpi = row["time_per_iteration_s"]
    print(f"multi {row['matrix']:18s} {row['comm']:12s} x{row['gpus']}: {row['iterations_median']} iterations, "
          f"time to 1e-10 {row['time_to_1e-10_s']} s, "
          f"{tpi * 1e6 if tpi else float('nan'):.2f} us/iteration "
          f"({row['converged_runs']}/{row['runs']} converged)", flush=True)


def multi(d, a):
    out = []
    save = getattr(a, "partial", lambda rows: None)
    for mat in a.multi_matrices.split(","):
        n = int(mat.split(":")[1]) if mat.split(":")[1].isdigit() else 0
        repeat = 5 if n <= 200000 else 3
        rows = []
        for label, gpus in MULTI_RUNS:
            comm, env = MULTI_COMMS[label]
            row = multi_row(d, mat, label, comm, gpus, env, repeat)
            row["repeat"] = repeat
            rows.append(row)
            say_row(row)
        plain = next((r for r in rows if r["comm"] == "auto" and r.get("time_to_1e-10_s")), None)
        for label in ("amc", "amc-serial", "dc", "dk"):
            one = next((r for r in rows if r["comm"] == label and r["gpus"] == 1), None)
            two = next((r for r in rows if r["comm"] == label and r["gpus"] == 2), None)
            if one and two and one["time_to_1e-10_s"] and two["time_to_1e-10_s"]:
                two["speedup_vs_1gpu"] = one["time_to_1e-10_s"] / two["time_to_1e-10_s"]
                print(f"multi {mat} {label}: speed-up of 2 GPUs {two['speedup_vs_1gpu']:.2f}x", flush=True)
        for r in rows:  # against the plain method on one GPU
            if plain and r.get("time_to_1e-10_s"):
                r["speedup_vs_plain_1gpu"] = plain["time_to_1e-10_s"] / r["time_to_1e-10_s"]
        out += rows
        d.close_subs()  # the AMC-serial process holds this matrix: free it
        save(out)
    # AMC (overlapped) on 2 GPUs with an exchange round every E kernels
    mat = "trefethen:20000"
    one = next((r for r in out if r["matrix"] == mat and r["comm"] == "amc" and r["gpus"] == 1
                and r.get("time_to_1e-10_s")), None)
    for every in (1, 2, 4):
        row = multi_row(d, mat, f"amc-every{every}", "amc", 2, {"HETRELAX_SPARSE_AMC_EVERY": every}, 5)
        row["experiment"], row["amc_every"], row["repeat"] = "amc-every", every, 5
        if one and row.get("time_to_1e-10_s"):
            row["speedup_vs_amc_1gpu"] = one["time_to_1e-10_s"] / row["time_to_1e-10_s"]
        out.append(row)
        say_row(row)
        if row.get("speedup_vs_amc_1gpu"):
            print(f"multi {mat} amc every {every}: speed-up of 2 GPUs over AMC on 1 GPU "
                  f"{row['speedup_vs_amc_1gpu']:.2f}x", flush=True)
    d.close_subs()
    save(out)
    return out


SECTIONS = {"variation": variation, "variation-s2": lambda d, a: variation(d, a, streams=2), "convergence": convergence, "overhead": overhead, "periter": periter,
            "time": time_section, "fault": fault, "tune": tune, "multi": multi}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sections", default=",".join(ALL))
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--multi-matrices", default="trefethen:20000,trefethen:200000,trefethen:2000000")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    global SMOKE
    SMOKE = a.smoke
    d = Driver(a.driver)
    res = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "host": platform.node(), "sections": {}}
    t0 = time.time()
    def write():
        with open(a.out, "w") as f:
            json.dump(res, f, indent=1)

    for s in a.sections.split(","):
        ts = time.time()
        a.partial = lambda rows, s=s: (res["sections"].__setitem__(s, list(rows)), write())  # mid-section saves
        res["sections"][s] = SECTIONS[s](d, a)
        print(f"== {s}: {time.time() - ts:.1f} s", flush=True)
        write()  # after every section: a time-out keeps what was done
    d.close()
    print(f"== {d.solves} solves in {time.time() - t0:.1f} s -> {a.out}", flush=True)


if __name__ == "__main__":
    main()
