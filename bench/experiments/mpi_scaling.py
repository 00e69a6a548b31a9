#!/usr/bin/env python3
"""CPU ranks on one host: strong or weak scaling of the decomposed solve over MPI.

Runs tests/parallel/mpi/mpi_solve (built with the MPI parts) under mpiexec for each rank count and
decomposition kind, after its bitwise check against cpu-seq, and reports the median time
per sweep (warm-up discarded), GFLOP/s, GB/s under the byte model (u read + u written per
point, + f when present), the fraction of the host copy bandwidth measured in the same
run, the exchange time per sweep that compute did not hide, and, with --threads-ref, the
cpu-threads backend on as many threads in one process (16 ranks within
10% of 16 threads).

  bench/experiments/mpi_scaling.py --build build --ranks 1,2,4 --dim 3 --n 128 --kinds slab,cube
  bench/experiments/mpi_scaling.py --build build --ranks 1,2,4,8,16 --dim 3 --n 256 --threads-ref \\
      --out docs/results/mpi-cpu-h100host.json        # on the 16-core machine

Decomposition kinds: slab (all parts along the slowest axis), pencil (3-D: parts along y
and z), cube (MPI_Dims_create's balanced split; in 2-D the same as "grid").
Weak scaling (--weak) grows the slowest axis with the rank count.
"""
import argparse
import json
import os
import subprocess
import sys
import time


def balanced(count, k):
    """Balanced factors of count into k parts, largest first (as MPI_Dims_create)."""
    best, spread = None, None
    def rec(left, k, lo, acc):
        nonlocal best, spread
        if k == 1:
            f = sorted(acc + [left], reverse=True)
            s = f[0] - f[-1]
            if spread is None or s < spread:
                best, spread = f, s
            return
        d = lo
        while d ** k <= left:
            if left % d == 0:
                rec(left // d, k - 1, d, acc + [d])
            d += 1
    rec(count, k, 1, [])
    return best


def decomp_for(kind, dim, p):
    """x, y[, z] factors; the slowest axis gets the most parts."""
    if dim == 2:
        if kind == "slab":
            return [1, p]
        f = balanced(p, 2)
        return [f[1], f[0]]
    if kind == "slab":
        return [1, 1, p]
    if kind == "pencil":
        f = balanced(p, 2)
        return [1, f[1], f[0]]
    f = balanced(p, 3)
    return [f[2], f[1], f[0]]


def git_commit():
    """The checkout's commit (12 digits), or "" outside git."""
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    except OSError:
        return ""


def mpi_env(p):
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.setdefault("OMPI_MCA_btl", "self,vader")
    if p > (os.cpu_count() or 1):
        env.setdefault("OMPI_MCA_mpi_yield_when_idle", "1")  # oversubscribed: waiting ranks yield the core
    return env


def pingpong(args):
    """Latency and bandwidth of the transport between two ranks of this host."""
    exe = os.path.join(args.build, "tests", "parallel", "mpi", "mpi_solve")
    out = subprocess.run([args.mpiexec, "-n", "2", "--oversubscribe", exe, "--pingpong"], env=mpi_env(2),
                         capture_output=True, text=True, timeout=args.timeout)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit("mpi_scaling: ping-pong failed")
    return json.loads([l for l in out.stdout.splitlines() if l.startswith("{")][-1])


def run(args, p, dec, ghost, overlap, extents):
    env = mpi_env(p)
    exe = os.path.join(args.build, "tests", "parallel", "mpi", "mpi_solve")
    cmd = [args.mpiexec, "-n", str(p), "--oversubscribe"]
    if args.bind:
        cmd += ["--bind-to", "core"]
    cmd += [exe, "--dim", str(args.dim), "--nx", str(extents[0]), "--ny", str(extents[1]),
            "--iters", str(args.iters), "--repeats", str(args.repeats), "--ghost", str(ghost),
            "--precision", args.precision, "--decomp", "x".join(map(str, dec)), "--bandwidth"]
    if args.dim == 3:
        cmd += ["--nz", str(extents[2])]
    if not overlap:
        cmd += ["--no-overlap"]
    if args.threads_ref:
        cmd += ["--threads-ref", str(p * args.threads_per_rank)]
    if args.threads_per_rank > 1:
        cmd += ["--threads", str(args.threads_per_rank)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        raise SystemExit(f"mpi_scaling: {' '.join(cmd)} failed ({out.returncode})")
    if os.environ.get("HETRELAX_RANK_TIMES"):  # mpi_solve's rank-by-rank split
        sys.stdout.write("".join(sorted(l + "\n" for l in out.stderr.splitlines() if l.startswith("rank "))))
    line = [l for l in out.stdout.splitlines() if l.startswith("{")][-1]
    r = json.loads(line)
    if not r.get("verified_bitwise"):
        raise SystemExit("mpi_scaling: the run was not checked against cpu-seq")
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--dim", type=int, default=3)
    ap.add_argument("--n", type=int, default=128, help="extent per axis (per rank along the slowest axis with --weak)")
    ap.add_argument("--kinds", default="slab,cube")
    ap.add_argument("--ghosts", default="1")
    ap.add_argument("--no-overlap", action="store_true", help="also run ghost 1 without overlap")
    ap.add_argument("--weak", action="store_true")
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--precision", default="single")
    ap.add_argument("--threads-ref", action="store_true",
                    help="also time cpu-threads in one process with ranks x threads-per-rank threads")
    ap.add_argument("--threads-per-rank", type=int, default=1, help="cpu-threads ranks: a team per rank")
    ap.add_argument("--bind", action="store_true", help="mpiexec --bind-to core")
    ap.add_argument("--timeout", type=int, default=900)
    ap.add_argument("--label", default=os.uname().nodename)
    ap.add_argument("--out", help="JSON file for all runs")
    a = ap.parse_args()
    ranks = [int(x) for x in a.ranks.split(",")]
    kinds = a.kinds.split(",")
    ghosts = [int(x) for x in a.ghosts.split(",")]
    runs = []
    base = {}
    transports = {}
    if max(ranks) >= 2:
        pp = pingpong(a)
        big = sorted(x["bytes"] / x["half_rtt_s"] * 1e-9 for x in pp["pingpong"] if x["bytes"] >= 65536)
        pp["gbps_median_64k_up"] = big[len(big) // 2] if big else pp["gbps"]
        transports["shm"] = pp
        print(f"# ping-pong (shm, 2 ranks): latency {pp['alpha_s'] * 1e6:.2f} us, "
              f"bandwidth {pp['gbps_median_64k_up']:.2f} GB/s (median of 64 KiB .. 16 MiB)")
    print(f"# MPI CPU ranks, {a.dim}-D, {'weak' if a.weak else 'strong'} scaling, n={a.n}, {a.precision}, "
          f"{a.iters} sweeps x {a.repeats} repeats (median), host {a.label}")
    print(f"{'ranks':>5} {'decomp':>9} {'g':>2} {'ov':>2} {'ms/sweep':>9} {'speedup':>7} {'eff':>5} "
          f"{'GB/s':>6} {'bw frac':>7} {'exch ms':>8} {'hidden':>7} {'thr ms':>8}")
    for kind in kinds:
        for ghost in ghosts:
            for overlap in ([1, 0] if a.no_overlap and ghost == 1 else [1]):
                for p in ranks:
                    dec = decomp_for(kind, a.dim, p)
                    ext = [a.n] * a.dim
                    if a.weak:
                        ext[-1] = a.n * p
                    if any(d > e for d, e in zip(dec, ext)):
                        continue
                    r = run(a, p, dec, ghost, overlap, ext)
                    r.update(kind=kind, mode="weak" if a.weak else "strong", label=a.label,
                             host_cpus=os.cpu_count(), loadavg_1min=os.getloadavg()[0])
                    key = (kind, ghost, overlap)
                    if p == 1:
                        base[key] = r["time_per_sweep_s"]
                    t1 = base.get(key)
                    if t1:
                        # strong: t1 / tp; weak: the same work per rank, so t1 / tp is the efficiency
                        r["speedup"] = (t1 / r["time_per_sweep_s"]) * (p if a.weak else 1)
                        r["efficiency"] = r["speedup"] / p
                    runs.append(r)
                    thr = r.get("threads_ref_time_per_sweep_s", 0.0)
                    print(f"{p:>5} {'x'.join(map(str, r['decomp'][:a.dim])):>9} {ghost:>2} {overlap:>2} "
                          f"{r['time_per_sweep_s'] * 1e3:9.3f} {r.get('speedup', float('nan')):7.2f} "
                          f"{r.get('efficiency', float('nan')):5.2f} {r['gbps']:6.2f} {r['bandwidth_fraction']:7.2f} "
                          f"{r['exchange_per_sweep_s'] * 1e3:8.3f} {r['hidden_per_sweep_s'] * 1e3:7.3f} "
                          f"{thr * 1e3 if thr else float('nan'):8.3f}")
                    sys.stdout.flush()
    if a.out:
        commit = git_commit()
        with open(a.out, "w") as f:
            json.dump({"bench": "mpi_scaling", "label": a.label, "commit": commit,
                       "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "dim": a.dim, "n": a.n, "weak": a.weak,
                       "byte_model": "u read + u written per point (+ f read when present)",
                       "transports": transports, "runs": runs}, f, indent=1)
        print(f"# wrote {a.out}")


if __name__ == "__main__":
    main()
