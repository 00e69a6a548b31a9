#!/usr/bin/env python3
"""A halo-cost model for the decomposed solve: a MODEL, not a measurement.

Per sweep and rank:  t = t_comp + t_halo                (exchange first, then sweep)
                     t = max(t_inner, t_halo) + t_shell  (ghost 1, overlapped)
  t_comp  = points per rank * seconds per point (measured: the 1-rank runs)
  t_halo  = alpha * messages + bytes * beta             per transport
            alpha (latency per message) and beta (seconds per byte: the copy, plus packing
            and unpacking) per transport: "shm" (ranks of one host) from the ping-pong that
            mpi_scaling.py records and the pack/unpack rate of the runs (or, without a
            ping-pong, a least-squares fit of the exchange-first runs); "net" (between
            nodes) from --net-latency-us / --net-gbps: assumed, not measured here.

It reads the JSON of bench/experiments/mpi_scaling.py, prints the fit and how well it reproduces each
measured run (the check), and projects Sourouri et al.'s experiments to 8..64 nodes for each
decomposition (slab, pencil = 2-D, cube = 3-D): strong scaling of 512 x 512 x 1024 and weak
scaling with 512^3 per node, one rank per node, double precision, ghost 1.

  bench/experiments/mpi_model.py docs/results/mpi-cpu-dev-2d.json [more.json] --out docs/results/mpi-model.json
  bench/experiments/mpi_model.py runs.json --rank-gpts 40   # a rank that sweeps 40 Gpoints/s (a GPU, say)
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mpi_scaling import balanced  # noqa: E402  (one copy of MPI_Dims_create's rule)


def lstsq2(rows):
    """Least squares y = a*x0 + b*x1 with a, b >= 0 (clipped), rows of (x0, x1, y)."""
    s00 = sum(r[0] * r[0] for r in rows)
    s01 = sum(r[0] * r[1] for r in rows)
    s11 = sum(r[1] * r[1] for r in rows)
    t0 = sum(r[0] * r[2] for r in rows)
    t1 = sum(r[1] * r[2] for r in rows)
    det = s00 * s11 - s01 * s01
    if abs(det) < 1e-300:
        a, b = (t0 / s00 if s00 else 0.0), 0.0
    else:
        a = (t0 * s11 - t1 * s01) / det
        b = (s00 * t1 - s01 * t0) / det
    if a < 0:
        a, b = 0.0, (t1 / s11 if s11 else 0.0)
    if b < 0:
        a, b = (t0 / s00 if s00 else 0.0), 0.0
    return a, b


def decomp(kind, n):
    """x, y, z parts of n ranks in 3-D; the slowest axis gets the most."""
    if kind == "slab":
        return [1, 1, n]
    if kind == "pencil":
        f = balanced(n, 2)
        return [1, f[1], f[0]]
    f = balanced(n, 3)
    return [f[2], f[1], f[0]]


def halo_of(ext, parts, esize, ghost=1):
    """Largest subdomain, and the messages and bytes per round of its busiest rank."""
    sub = [math.ceil(e / p) for e, p in zip(ext, parts)]
    msgs, nbytes = 0, 0
    for a in range(3):
        if parts[a] == 1:
            continue
        nb = 2 if parts[a] > 2 else 1
        face = 1
        for b in range(3):
            if b != a:
                face *= sub[b]
        msgs += nb
        nbytes += nb * face * ghost * esize
    return sub, msgs, nbytes


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", help="JSON files of bench/experiments/mpi_scaling.py")
    ap.add_argument("--net-latency-us", type=float, default=2.0, help="assumed: per message between nodes")
    ap.add_argument("--net-gbps", type=float, default=12.5, help="assumed: bandwidth between nodes (100 Gb/s)")
    ap.add_argument("--rank-gpts", type=float, default=0.0,
                    help="points per second per rank, in G (default: the measured CPU rate of one rank)")
    ap.add_argument("--esize", type=int, default=8, help="bytes per value in the projection (Sourouri et al.: double)")
    ap.add_argument("--nodes", default="8,16,32,64")
    ap.add_argument("--out")
    a = ap.parse_args()

    runs = []
    for path in a.runs:
        with open(path) as f:
            d = json.load(f)
        for r in d["runs"]:
            r["_src"] = path
            runs.append(r)
    if not runs:
        sys.exit("mpi_model: no runs")

    # compute: seconds per point per sweep of one rank (median of the 1-rank runs)
    one = sorted(r["time_per_sweep_s"] / (r["nx"] * r["ny"] * r["nz"]) for r in runs if r["ranks"] == 1)
    if not one:
        sys.exit("mpi_model: need 1-rank runs for the compute rate")
    t_pt = one[len(one) // 2]
    if a.rank_gpts > 0:
        t_pt_proj = 1.0 / (a.rank_gpts * 1e9)
    else:
        t_pt_proj = t_pt

    # halo: latency and bandwidth per transport. shm: the ping-pong of mpi_scaling.py when
    # present, else a fit of the exchange-first runs' time per round to messages and bytes.
    # Packing and unpacking (host copies) scale with the bytes: their rate from the runs.
    pps = [d for d in (json.load(open(p)).get("transports", {}).get("shm") for p in a.runs) if d]
    rows = []
    for r in runs:
        if r["ranks"] < 2 or (r.get("overlap", 1) and r.get("ghost", 1) == 1):
            continue  # overlapped rounds hide part of the exchange
        per_round = r["exchange_per_sweep_s"] / max(r["exchanges_per_sweep"], 1e-9)
        rows.append((r["messages_per_round"], r["max_halo_bytes_per_round"], per_round, r))
    copy = sorted((r["pack_per_sweep_s"] + r["unpack_per_sweep_s"]) / max(r["exchanges_per_sweep"], 1e-9) /
                  r["max_halo_bytes_per_round"] for r in runs if r["ranks"] > 1 and r["max_halo_bytes_per_round"] > 0)
    pack_beta = copy[len(copy) // 2] if copy else 0.0
    if pps:
        alpha = sorted(p["alpha_s"] for p in pps)[len(pps) // 2]
        gb = sorted(p.get("gbps_median_64k_up", p["gbps"]) for p in pps)[len(pps) // 2]
        beta = 1.0 / (gb * 1e9) + pack_beta
        how = "ping-pong (latency, bandwidth) + measured pack/unpack rate"
    elif rows:
        alpha, beta = lstsq2([(m, b, t) for m, b, t, _ in rows])
        how = "least-squares fit of %d exchange-first runs" % len(rows)
    else:
        sys.exit("mpi_model: need a ping-pong or multi-rank runs without overlap")
    print("# halo-cost MODEL (bench/experiments/mpi_model.py) from %s" % ", ".join(sorted(set(r["_src"] for r in runs))))
    print(f"# compute: {t_pt * 1e9:.3f} ns per point per sweep (1 rank, measured)")
    print(f"# transport shm ({how}): alpha = {alpha * 1e6:.2f} us per message, "
          f"bytes at {(1 / beta / 1e9) if beta > 0 else float('inf'):.3f} GB/s (pack/unpack included)")
    print(f"# transport net (assumed): alpha = {a.net_latency_us:.2f} us, {a.net_gbps:.2f} GB/s, "
          f"plus the measured pack/unpack rate")
    print("# check against the measured runs (shm; the model assumes each rank owns its cores):")
    print(f"{'ranks':>5} {'decomp':>9} {'g':>2} {'ov':>2} {'meas ms':>8} {'model ms':>8} {'err %':>6}")
    checks = []
    for r in runs:
        if r["ranks"] < 2:
            continue
        pts = r["nx"] * r["ny"] * r["nz"]
        p = r["ranks"]
        # more ranks (x threads) than cores: they take turns
        over = max(1.0, p * r.get("threads_per_rank", 1) / r.get("host_cpus", p * r.get("threads_per_rank", 1)))
        t_comp = pts / p * t_pt * over
        t_h = (alpha * r["messages_per_round"] + beta * r["max_halo_bytes_per_round"]) * r["exchanges_per_sweep"]
        model = t_comp + t_h
        if r.get("overlap", 1) and r.get("ghost", 1) == 1:
            model = max(t_comp, t_h)
        err = (model - r["time_per_sweep_s"]) / r["time_per_sweep_s"] * 100
        checks.append({"ranks": p, "decomp": r["decomp"], "ghost": r.get("ghost", 1), "overlap": r.get("overlap", 1),
                       "measured_s": r["time_per_sweep_s"], "model_s": model, "error_pct": err})
        print(f"{p:>5} {'x'.join(map(str, r['decomp'])):>9} {r.get('ghost', 1):>2} {r.get('overlap', 1):>2} "
              f"{r['time_per_sweep_s'] * 1e3:8.3f} {model * 1e3:8.3f} {err:6.1f}")

    net_a, net_b = a.net_latency_us * 1e-6, 1.0 / (a.net_gbps * 1e9)
    nodes = [int(x) for x in a.nodes.split(",")]
    proj = []
    print("# MODEL projection, one rank per node, ghost 1, %d-byte values, rank rate %.3g Gpoints/s" %
          (a.esize, 1e-9 / t_pt_proj))
    print(f"{'case':>7} {'kind':>6} {'nodes':>5} {'decomp':>9} {'msgs':>4} {'halo MB':>8} {'comp ms':>8} "
          f"{'halo ms':>8} {'ms/sweep':>8} {'ov ms':>8} {'eff':>5} {'ov eff':>6}")
    for case in ("strong", "weak"):
        for kind in ("slab", "pencil", "cube"):
            base = None
            for n in nodes:
                parts = decomp(kind, n)
                ext = [512, 512, 1024] if case == "strong" else [512 * p for p in parts]
                sub, msgs, nbytes = halo_of(ext, parts, a.esize)
                if any(s < 1 for s in sub):
                    continue
                pts = sub[0] * sub[1] * sub[2]
                t_comp = pts * t_pt_proj
                # packing and unpacking on the host at the measured shm rate, the wire at the network's
                t_halo = net_a * msgs + nbytes * (net_b + pack_beta)
                inner = 1.0
                for x, p in zip(sub, parts):
                    if p > 1:
                        inner *= max(x - 2, 0) / x
                t_plain = t_comp + t_halo
                t_ov = max(t_comp * inner, t_halo) + t_comp * (1 - inner)
                if base is None:
                    base = (n, t_plain, t_ov)
                scale = (base[0] / n if case == "strong" else 1.0)
                eff = base[1] * scale / t_plain if case == "strong" else base[1] / t_plain
                eff_ov = base[2] * scale / t_ov if case == "strong" else base[2] / t_ov
                # strong: efficiency against the smallest node count; weak: time ratio
                proj.append({"case": case, "kind": kind, "nodes": n, "decomp": parts, "sub": sub, "messages": msgs,
                             "halo_bytes": nbytes, "t_comp_s": t_comp, "t_halo_s": t_halo, "t_sweep_s": t_plain,
                             "t_sweep_overlap_s": t_ov, "efficiency": eff, "efficiency_overlap": eff_ov})
                print(f"{case:>7} {kind:>6} {n:>5} {'x'.join(map(str, parts)):>9} {msgs:>4} {nbytes / 1e6:8.3f} "
                      f"{t_comp * 1e3:8.3f} {t_halo * 1e3:8.3f} {t_plain * 1e3:8.3f} {t_ov * 1e3:8.3f} "
                      f"{eff:5.2f} {eff_ov:6.2f}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"bench": "mpi_model", "label": "MODEL (latency + bytes / bandwidth), not measured",
                       "inputs": sorted(set(r["_src"] for r in runs)),
                       "compute_s_per_point": t_pt, "projection_s_per_point": t_pt_proj,
                       "shm": {"alpha_s": alpha, "beta_s_per_byte": beta, "pack_unpack_s_per_byte": pack_beta, "how": how},
                       "net_assumed": {"alpha_s": net_a, "gbps": a.net_gbps},
                       "check": checks, "projection": proj}, f, indent=1)
        print(f"# wrote {a.out}")


if __name__ == "__main__":
    main()
