#!/usr/bin/env python3
"""GPU ranks: 3-D weak and strong scaling of the decomposed solve over MPI (issue 11).

One rank per GPU (device = local rank modulo the GPUs present). Each run is
tests/mpi/mpi_solve --backend gpu under mpiexec: first its bitwise check against cpu-seq
(the same decomposition and ghost on the extents divided by --verify-div), then a discarded
warm-up and --repeats timed runs of --iters sweeps; the median time per sweep is reported
with GB/s under the byte model (u read + u written per point; the spike right-hand side
costs no traffic), the fraction of the device copy bandwidth measured in the same run
(CuPy, when importable), the exchange time per sweep that the interior did not hide
(exposed), and the hidden fraction of the boundary chain (shell sweep, pack, copies, MPI,
unpack) that the interior covered.

  weak:    512^3 per GPU: 1 GPU 512^3, P GPUs 512*px x 512*py x 512*pz
  strong:  512 x 512 x 1024 on 1 and P GPUs
  kinds:   slab (parts along z), yslab (along y), xslab (along x: strided faces), pencil
           (y and z), cube (MPI_Dims_create's balanced split), where the GPU count allows

  bench/mpi_gpu_scaling.py --build build-gpu --quick --out docs/results/mpi-gpu-h200x2.json
  bench/mpi_gpu_scaling.py --build build-gpu --gpus 1,2 --kinds slab,yslab,xslab --ghosts 1,2 --no-overlap
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_scaling import balanced, git_commit  # noqa: E402  (one copy of each)


def decomp_for(kind, p):
    """x, y, z parts of kind on p GPUs."""
    if kind == "slab":
        return [1, 1, p]
    if kind == "yslab":
        return [1, p, 1]
    if kind == "xslab":
        return [p, 1, 1]
    if kind == "pencil":
        f = balanced(p, 2)
        return [1, f[1], f[0]]
    f = balanced(p, 3)
    return [f[2], f[1], f[0]]


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        return sum(1 for l in out.splitlines() if l.startswith("GPU "))
    except (OSError, subprocess.SubprocessError):
        return 0


def copy_gbps(gib=2.0):
    """Device-to-device copy (read + write bytes per second) of GPU 0 with CuPy, or None."""
    try:
        import cupy as cp
    except ImportError:
        return None
    n = int(gib * (1 << 30)) // 8
    a = cp.ones(n, dtype=cp.float64)
    b = cp.empty_like(a)
    best = None
    for _ in range(6):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        b[...] = a
        e.record()
        e.synchronize()
        t = cp.cuda.get_elapsed_time(s, e) * 1e-3
        best = t if best is None or t < best else best
    del a, b
    return 2 * n * 8 / best * 1e-9


def mpi_env():
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("OMPI_MCA_btl", "self,vader")
    env.setdefault("OMPI_MCA_pml", "ob1")
    return env


def run(a, p, dec, ext, ghost, overlap):
    exe = os.path.join(a.build, "tests", "mpi", "mpi_solve")
    cmd = [a.mpiexec, "-n", str(p), "--oversubscribe", exe, "--backend", "gpu", "--dim", "3",
           "--nx", str(ext[0]), "--ny", str(ext[1]), "--nz", str(ext[2]), "--iters", str(a.iters),
           "--repeats", str(a.repeats), "--ghost", str(ghost), "--precision", a.precision,
           "--decomp", "x".join(map(str, dec)), "--verify-div", str(a.verify_div)]
    if not overlap:
        cmd.append("--no-overlap")
    t0 = time.time()
    out = subprocess.run(cmd, env=mpi_env(), capture_output=True, text=True, timeout=a.timeout)
    if out.returncode != 0:
        sys.stderr.write(out.stdout + out.stderr)
        raise SystemExit(f"mpi_gpu_scaling: {' '.join(cmd)} failed ({out.returncode})")
    r = json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])
    if not r.get("verified_bitwise"):
        raise SystemExit("mpi_gpu_scaling: the run was not checked against cpu-seq")
    r["wall_s"] = time.time() - t0
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build-gpu")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--gpus", help="GPU counts (default: 1 and every power of 2 up to the GPUs present)")
    ap.add_argument("--n", type=int, default=512, help="weak scaling: n^3 per GPU")
    ap.add_argument("--strong", default="512x512x1024", help="strong scaling grid XxYxZ")
    ap.add_argument("--kinds", default="slab,yslab,xslab,pencil,cube")
    ap.add_argument("--ghosts", default="1")
    ap.add_argument("--no-overlap", action="store_true", help="also run ghost 1 with the exchange first")
    ap.add_argument("--precision", default="double")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--verify-div", type=int, default=8)
    ap.add_argument("--quick", action="store_true",
                    help="slab and yslab, ghost 1, 100 sweeps x 3 repeats (about a minute on 2 H200s)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--label", default=os.uname().nodename)
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.quick:
        a.kinds, a.ghosts, a.iters, a.repeats, a.no_overlap = "slab,yslab", "1", 100, 3, False
    have = gpu_count()
    if a.gpus:
        counts = [int(x) for x in a.gpus.split(",")]
    else:
        counts = [c for c in (1, 2, 4, 8) if c <= max(have, 1)]
    if have and max(counts) > have:
        raise SystemExit(f"mpi_gpu_scaling: {max(counts)} GPUs asked, {have} present")
    strong = [int(x) for x in a.strong.split("x")]
    ghosts = [int(x) for x in a.ghosts.split(",")]
    bw = copy_gbps()
    es = 8 if a.precision == "double" else 4
    print(f"# GPU ranks ({have} GPUs present), 3-D, {a.precision}, {a.iters} sweeps x {a.repeats} repeats (median), "
          f"device copy {bw:.0f} GB/s" if bw else f"# GPU ranks ({have} GPUs present), 3-D, {a.precision}, "
          f"{a.iters} sweeps x {a.repeats} repeats (median), device copy not measured (no CuPy)")
    print(f"{'mode':>6} {'gpus':>4} {'kind':>6} {'decomp':>7} {'g':>1} {'ov':>2} {'grid':>15} {'ms/sweep':>9} "
          f"{'speedup':>7} {'eff':>5} {'GB/s/gpu':>8} {'bw':>5} {'exp ms':>7} {'hidden':>6}")
    runs, base, seen = [], {}, set()
    for mode in ("weak", "strong"):
        for ghost in ghosts:
            for overlap in ([1, 0] if a.no_overlap and ghost == 1 else [1]):
                for kind in a.kinds.split(","):
                    for p in counts:
                        dec = decomp_for(kind, p)
                        ext = [a.n * d for d in dec] if mode == "weak" else list(strong)
                        key = (mode, tuple(dec), tuple(ext), ghost, overlap)
                        if key in seen or any(d > e for d, e in zip(dec, ext)):
                            continue
                        seen.add(key)
                        r = run(a, p, dec, ext, ghost, overlap)
                        r.update(mode=mode, kind=kind if p > 1 else "one", gpus=p)
                        t = r["time_per_sweep_s"]
                        if p == 1:
                            base[(mode, ghost, overlap)] = t
                        t1 = base.get((mode, ghost, overlap))
                        if t1:
                            # strong: t1 / tp; weak: the same work per GPU, so t1 / tp is the efficiency
                            r["speedup"] = t1 / t * (p if mode == "weak" else 1)
                            r["efficiency"] = r["speedup"] / p
                        pts = ext[0] * ext[1] * ext[2]
                        r["gbps_per_gpu"] = 2 * es * pts / t / p * 1e-9
                        r["device_copy_gbps"] = bw
                        r["bandwidth_fraction_per_gpu"] = r["gbps_per_gpu"] / bw if bw else None
                        runs.append(r)
                        print(f"{mode:>6} {p:>4} {r['kind']:>6} {'x'.join(map(str, dec)):>7} {ghost:>1} {overlap:>2} "
                              f"{'x'.join(map(str, ext)):>15} {t * 1e3:9.3f} {r.get('speedup', float('nan')):7.2f} "
                              f"{r.get('efficiency', float('nan')):5.2f} {r['gbps_per_gpu']:8.0f} "
                              f"{r['bandwidth_fraction_per_gpu'] or float('nan'):5.2f} "
                              f"{r['exchange_per_sweep_s'] * 1e3:7.3f} {r['hidden_fraction']:6.2f}")
                        sys.stdout.flush()
    if a.out:
        commit = git_commit()
        with open(a.out, "w") as f:
            json.dump({"bench": "mpi_gpu_scaling", "label": a.label, "commit": commit,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpus_present": have,
                       "precision": a.precision, "iters": a.iters, "repeats": a.repeats,
                       "byte_model": "u read + u written per point (spike rhs: no f traffic)",
                       "device_copy_gbps": bw, "runs": runs}, f, indent=1)
        print(f"# wrote {a.out}")


if __name__ == "__main__":
    main()
