#!/usr/bin/env python3
"""GPU ranks: 3-D (or 2-D) weak and strong scaling of the decomposed solve over MPI.

One rank per GPU (device = local rank modulo the GPUs present). Each run is
tests/parallel/mpi/mpi_solve --backend gpu under mpiexec: first its bitwise check against cpu-seq
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
  --dim 2: 20480^2 per GPU (weak) and 20480 x 20480 (strong), fp32; slab = yslab (rows),
           xslab (columns), cube = pencil (balanced 2-D split)
  --transports host,nccl: every multi-GPU run once per transport (host: MPI on pinned host
           buffers; device: CUDA-aware MPI; nccl: ncclSend/Recv, builds with NCCL), with the
           time ratio host / other printed at the end; 1-GPU runs (no halos) once

  bench/experiments/mpi_gpu_scaling.py --build build-gpu --dim 2 --modes strong --kinds slab --transports host,nccl \
      --gpus 1,2 --out docs/results/mpi-gpu-nccl-2d-h200x2.json

  bench/experiments/mpi_gpu_scaling.py --build build-gpu --quick --out docs/results/mpi-gpu-h200x2.json
  bench/experiments/mpi_gpu_scaling.py --build build-gpu --gpus 1,2 --kinds slab,yslab,xslab --ghosts 1,2 --no-overlap
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_scaling import balanced, git_commit  # noqa: E402  (one copy of each)


def decomp_for(kind, p, dim=3):
    """x, y, z parts of kind on p GPUs."""
    if dim == 2:
        if kind in ("slab", "yslab"):
            return [1, p, 1]
        if kind == "xslab":
            return [p, 1, 1]
        f = balanced(p, 2)
        return [f[1], f[0], 1]
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


def run(a, p, dec, ext, ghost, overlap, transport="auto"):
    exe = os.path.join(a.build, "tests", "parallel", "mpi", "mpi_solve")
    cmd = [a.mpiexec, "-n", str(p), "--oversubscribe", exe, "--backend", "gpu", "--dim", str(a.dim),
           "--nx", str(ext[0]), "--ny", str(ext[1])] + (["--nz", str(ext[2])] if a.dim == 3 else []) + [
           "--iters", str(a.iters), "--repeats", str(a.repeats), "--ghost", str(ghost), "--precision", a.precision,
           "--decomp", "x".join(map(str, dec[:a.dim])), "--verify-div", str(a.verify_div),
           "--transport", transport]
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
    ap.add_argument("--dim", type=int, default=3, choices=(2, 3))
    ap.add_argument("--n", type=int, help="weak scaling: n^dim per GPU (default 512 in 3-D, 20480 in 2-D)")
    ap.add_argument("--strong", help="strong scaling grid XxYxZ (default 512x512x1024; 2-D: 20480x20480)")
    ap.add_argument("--modes", default="weak,strong")
    ap.add_argument("--transports", default="auto", help="auto, host, device, nccl: comma-separated")
    ap.add_argument("--kinds", default="slab,yslab,xslab,pencil,cube")
    ap.add_argument("--ghosts", default="1")
    ap.add_argument("--no-overlap", action="store_true", help="also run ghost 1 with the exchange first")
    ap.add_argument("--precision", help="default double in 3-D, single in 2-D")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--verify-div", type=int, default=8)
    ap.add_argument("--quick", action="store_true",
                    help="slab and yslab, ghost 1, 100 sweeps x 3 repeats (about a minute on 2 H200s)")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--label", default=os.uname().nodename)
    ap.add_argument("--out")
    a = ap.parse_args()
    a.n = a.n or (512 if a.dim == 3 else 20480)
    a.strong = a.strong or ("512x512x1024" if a.dim == 3 else "20480x20480")
    a.precision = a.precision or ("double" if a.dim == 3 else "single")
    transports = a.transports.split(",")
    if a.quick:
        a.kinds, a.ghosts, a.iters, a.repeats, a.no_overlap = "slab,yslab", "1", 100, 3, False
    have = gpu_count()
    if a.gpus:
        counts = [int(x) for x in a.gpus.split(",")]
    else:
        counts = [c for c in (1, 2, 4, 8) if c <= max(have, 1)]
    if have and max(counts) > have:
        raise SystemExit(f"mpi_gpu_scaling: {max(counts)} GPUs asked, {have} present")
    strong = ([int(x) for x in a.strong.split("x")] + [1])[:3]
    ghosts = [int(x) for x in a.ghosts.split(",")]
    bw = copy_gbps()
    es = 8 if a.precision == "double" else 4
    print(f"# GPU ranks ({have} GPUs present), {a.dim}-D, {a.precision}, {a.iters} sweeps x {a.repeats} repeats "
          f"(median), device copy {bw:.0f} GB/s" if bw else f"# GPU ranks ({have} GPUs present), {a.dim}-D, "
          f"{a.precision}, {a.iters} sweeps x {a.repeats} repeats (median), device copy not measured (no CuPy)")
    print(f"{'mode':>6} {'gpus':>4} {'kind':>6} {'decomp':>7} {'g':>1} {'ov':>2} {'transport':>9} {'grid':>15} "
          f"{'ms/sweep':>9} {'speedup':>7} {'eff':>5} {'GB/s/gpu':>8} {'bw':>5} {'exp ms':>7} {'hidden':>6}")
    runs, base, seen = [], {}, set()
    for mode in a.modes.split(","):
        for ghost in ghosts:
            for overlap in ([1, 0] if a.no_overlap and ghost == 1 else [1]):
                for kind in a.kinds.split(","):
                    for p, tr in [(p, tr) for p in counts for tr in transports]:
                        dec = decomp_for(kind, p, a.dim)
                        ext = [a.n * d for d in dec] if mode == "weak" else list(strong)
                        if a.dim == 2:
                            ext[2] = 1
                        # one GPU has no halos: its run once, whatever the transport
                        key = (mode, tuple(dec), tuple(ext), ghost, overlap, tr if p > 1 else None)
                        if key in seen or any(d > e for d, e in zip(dec, ext)):
                            continue
                        seen.add(key)
                        r = run(a, p, dec, ext, ghost, overlap, tr)
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
                              f"{r.get('transport', tr):>9} {'x'.join(map(str, ext)):>15} {t * 1e3:9.3f} {r.get('speedup', float('nan')):7.2f} "
                              f"{r.get('efficiency', float('nan')):5.2f} {r['gbps_per_gpu']:8.0f} "
                              f"{r['bandwidth_fraction_per_gpu'] or float('nan'):5.2f} "
                              f"{r['exchange_per_sweep_s'] * 1e3:7.3f} {r['hidden_fraction']:6.2f}")
                        sys.stdout.flush()
    if len(transports) > 1:  # the same run on each transport: time ratio against the first
        first = transports[0]
        for r in runs:
            if r["gpus"] < 2 or r["transport"] == first:
                continue
            same = [q for q in runs if q["gpus"] == r["gpus"] and q["decomp"] == r["decomp"] and q["mode"] == r["mode"]
                    and q["ghost"] == r["ghost"] and q["overlap"] == r["overlap"] and q["transport"] == first]
            if same:
                r["time_ratio_vs_" + first] = same[0]["time_per_sweep_s"] / r["time_per_sweep_s"]
                print(f"# {r['mode']} {r['gpus']} GPUs {r['kind']} g{r['ghost']}: {first} "
                      f"{same[0]['time_per_sweep_s'] * 1e3:.3f} ms/sweep, {r['transport']} "
                      f"{r['time_per_sweep_s'] * 1e3:.3f} ms/sweep: {r['transport']} is "
                      f"{r['time_ratio_vs_' + first]:.3f}x as fast (exposed exchange {same[0]['wait_per_sweep_s'] * 1e3:.3f}"
                      f" vs {r['wait_per_sweep_s'] * 1e3:.3f} ms/sweep)")
    if a.out:
        commit = git_commit()
        with open(a.out, "w") as f:
            json.dump({"bench": "mpi_gpu_scaling", "label": a.label, "commit": commit,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "gpus_present": have,
                       "dim": a.dim, "transports": transports, "precision": a.precision, "iters": a.iters, "repeats": a.repeats,
                       "byte_model": "u read + u written per point (spike rhs: no f traffic)",
                       "device_copy_gbps": bw, "runs": runs}, f, indent=1)
        print(f"# wrote {a.out}")


if __name__ == "__main__":
    main()
