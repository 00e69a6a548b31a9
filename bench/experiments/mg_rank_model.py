#!/usr/bin/env python3
"""A model of a multigrid V(2,2) cycle on GPU ranks (one slab of the last axis per rank), its
two constants fitted to measured runs, checked against them, and projected to more GPUs.

This is a model, not a measurement. Per cycle on P ranks:

  T(P) = T1 * (unknowns per rank) / (unknowns of the one-GPU run)          compute
       + sum over the levels cut across the ranks of  H * (alpha + 2 row / beta)   halos
       + the first level whole on every rank: gathered to every rank         (W / gather_bw + alpha)

  T1     the measured time of one cycle of the same engine on one GPU (the general-problem
         engine, --kernel general), for the same grid per GPU (weak) or the whole grid (strong);
         the compute is taken as proportional to the unknowns (small levels' inefficiency and
         the slab's extra work are left out)
  levels every axis halved, n -> (n - 1) / 2, while it has more than one point and the level
         more than 64 unknowns (the engine's rule for one spacing on every axis); a level stays
         cut while every rank keeps >= 2 rows of it and it has >= --dist-min unknowns per rank
         (the GPU backend's 2^18; 2048 before it had its own)
  H      halo exchanges per cut level and cycle: 2 red-black sweeps before and 2 after, two
         parity passes each (8), the residual (1), the restriction's rows (1), the prolongation's
         coarse rows (1, on the levels below the finest), plus the convergence check's residual
         on the finest level (1)
  row    a padded plane of the slab's cut axis, 8-byte values: each exchange sends one up and
         one down (2 rows) and receives two
  alpha  the fixed cost of one halo exchange (NCCL group, launch, the wait on the neighbour)
  beta   the bandwidth one exchange sees

alpha and beta are fitted by least squares to the measured overheads T(P) - compute; the
gather's bandwidth is an assumption (--gather-gbps: NCCL device to device). Every measured row is then predicted
with the fitted constants, and the model projects weak and strong scaling to --project GPUs.

  bench/experiments/mg_rank_model.py docs/results/gpu-mg-scaling-h100x4-ea71518.json \\
      --project 4,8,16,32,64 --out mg-rank-model.json
"""
import argparse
import json
import sys



def levels(shape):
    """The hierarchy's grids, finest first (one spacing on every axis)."""
    out = [list(shape)]
    while True:
        g = out[-1]
        count = 1
        for v in g:
            count *= v
        if count <= 64:
            break
        c = [(v - 1) // 2 if v > 2 else v for v in g]
        if c == g:
            break
        out.append(c)
    return out


def comm_terms(shape, P, dist_min):
    """(halo exchanges, bytes per cycle, the whole level's bytes) of one cycle on P ranks."""
    if P == 1:
        return 0, 0.0, 0.0
    lv = levels(shape)
    halos, nbytes, whole = 0, 0.0, 0.0
    for i, g in enumerate(lv):
        count = 1
        for v in g:
            count *= v
        rows = g[-1] // P
        cut = rows >= 2 and count >= dist_min * P
        if not cut:
            whole = 8.0 * count
            break
        plane = 1
        for v in g[:-1]:
            plane *= v + 2
        h = 10 if i < len(lv) - 1 else 8
        h += 1 if i > 0 else 1  # the prolongation's rows (coarse levels); the convergence check (finest)
        halos += h
        nbytes += h * 2 * 8.0 * plane
    return halos, nbytes, whole


def fit(rows, host_bw, dist_min):
    """alpha (s) and beta (B/s) from the overheads, least squares on [halos, bytes]."""
    a11 = a12 = a22 = b1 = b2 = 0.0
    for r in rows:
        h, nb, w = r["halos"], r["bytes"], r["whole_bytes"]
        y = r["overhead_s"] - (w / host_bw if w else 0.0)
        a11 += h * h
        a12 += h * nb
        a22 += nb * nb
        b1 += h * y
        b2 += nb * y
    det = a11 * a22 - a12 * a12
    alpha = (b1 * a22 - b2 * a12) / det
    inv_beta = (a11 * b2 - a12 * b1) / det
    return alpha, 1.0 / inv_beta if inv_beta > 0 else float("inf")


def predict(t1_cycle, n1, shape, P, alpha, beta, host_bw, dist_min):
    count = 1
    for v in shape:
        count *= v
    h, nb, w = comm_terms(shape, P, dist_min)
    comp = t1_cycle * (count / P) / n1
    comm = h * alpha + (nb / beta if beta != float("inf") else 0.0) + ((w / host_bw + alpha) if w else 0.0)
    return comp, comm


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("record", help="a record of bench/experiments/gpu_mg_scaling.py (its --out JSON)")
    ap.add_argument("--gather-gbps", type=float, default=100.0,
                    help="an assumed bandwidth of the gather of a whole level to every rank (GB/s)")
    ap.add_argument("--dist-min", type=int, default=1 << 18,
                    help="a level stays cut while it has this many unknowns per rank (the backend's)")
    ap.add_argument("--project", default="4,8,16,32,64")
    ap.add_argument("--out")
    a = ap.parse_args()
    host_bw = a.gather_gbps * 1e9
    runs = []
    with open(a.record) as fh:
        rec = json.load(fh)
    for r in rec["rows"]:  # the general engine's rows (the one-GPU default is not what the ranks run)
        if "time_s" in r and r.get("engine", "general") == "general":
            runs.append({"kind": r["kind"], "dim": r["dim"], "shape": r["shape"], "gpus": r["gpus"],
                         "cycles": r["cycles"], "solve_s": r["time_s"]})
    # one GPU's cycle per (kind, dim): the baseline of each series
    base = {}
    for r in runs:
        if r["gpus"] == 1:
            n = 1
            for v in r["shape"]:
                n *= v
            base[(r["kind"], r["dim"], r["shape"][0])] = (r["solve_s"] / r["cycles"], n)
    fitted = []
    for r in runs:
        key = (r["kind"], r["dim"], r["shape"][0])
        if r["gpus"] == 1 or key not in base:
            continue
        t1, n1 = base[key]
        count = 1
        for v in r["shape"]:
            count *= v
        r["cycle_s"] = r["solve_s"] / r["cycles"]
        r["compute_s"] = t1 * (count / r["gpus"]) / n1
        r["overhead_s"] = r["cycle_s"] - r["compute_s"]
        r["halos"], r["bytes"], r["whole_bytes"] = comm_terms(r["shape"], r["gpus"], a.dist_min)
        fitted.append(r)
    if len(fitted) < 2:
        print("need at least two runs on several GPUs with their one-GPU baseline")
        return 1
    alpha, beta = fit(fitted, host_bw, a.dist_min)
    print("fitted: alpha %.1f us per halo exchange, beta %.0f GB/s (the gather assumed %.0f GB/s)" %
          (alpha * 1e6, beta / 1e9, a.gather_gbps))
    print("%-34s %5s %9s %9s %9s %7s" % ("measured run", "halos", "MB/cycle", "measured", "model", "error"))
    for r in fitted:
        comp, comm = predict(*base[(r["kind"], r["dim"], r["shape"][0])], r["shape"], r["gpus"], alpha, beta,
                             host_bw, a.dist_min)
        r["model_cycle_s"] = comp + comm
        print("%-34s %5d %9.1f %7.2f ms %7.2f ms %+6.1f%%" %
              ("%s %s on %d" % (r["kind"], "x".join(map(str, r["shape"])), r["gpus"]), r["halos"], r["bytes"] / 1e6,
               1e3 * r["cycle_s"], 1e3 * r["model_cycle_s"], 100 * (r["model_cycle_s"] / r["cycle_s"] - 1)))
    proj = []
    print("\nprojection (a model): efficiency per cycle against the same engine on one GPU")
    for label, dim, n, weak in (("weak 511^3 per GPU", 3, 511, True), ("weak 8191^2 per GPU", 2, 8191, True),
                                ("strong 1023^3", 3, 1023, False), ("strong 16383^2", 2, 16383, False),
                                ("strong 2047^3", 3, 2047, False)):
        # the one-GPU cycle: measured where the grid ran on one GPU, else scaled by the unknowns
        # from the nearest measured grid of that dimension
        ref = [(k, v) for k, v in base.items() if k[1] == dim]
        if not ref:
            continue
        (_, _, rn), (t1, n1) = max(ref, key=lambda kv: kv[1][1])
        line = []
        for P in [int(v) for v in a.project.split(",")]:
            shape = [n] * (dim - 1) + [P * (n + 1) - 1 if weak else n]
            count = 1
            for v in shape:
                count *= v
            per = count / P
            comp, comm = predict(t1, n1, shape, P, alpha, beta, host_bw, a.dist_min)
            ideal = t1 * per / n1 if weak else t1 * count / n1 / P
            eff = ideal / (comp + comm)
            line.append("%d: %.0f%%" % (P, 100 * eff))
            proj.append({"case": label, "gpus": P, "shape": shape, "model_cycle_s": comp + comm,
                         "compute_s": comp, "comm_s": comm, "efficiency": eff})
        print("  %-22s %s" % (label, "  ".join(line)))
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"alpha_s": alpha, "beta_Bps": beta, "gather_gbps_assumed": a.gather_gbps, "dist_min": a.dist_min, "fitted": fitted,
                       "projection": proj, "note": "a model, fitted to the measured runs listed"}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
