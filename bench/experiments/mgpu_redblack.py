#!/usr/bin/env python3
"""Red-black on several GPUs: rb-mgpu on N GPUs against rb-tuned on one.

  bench/experiments/mgpu_redblack.py --build BUILD [--out DIR] [--quick] [--gpus 1,2,4] [--sizes 16384,8192]
                         [--iters 200] [--repeats 5] [--old]

--gpus: the GPU counts (default: 1, 2 and the powers of 2 up to the GPUs present, so 1,2,4 on
four). 1 is rb-tuned on GPU 0; N >= 2 is rb-mgpu --gpus N (slabs of rows on GPUs 0..N-1, each
swept by rb-tuned's streaming pass, 2 old rows exchanged per cut and iteration) with direct
launches, and "graph": the same with CUDA graphs of 10 iterations (HETRELAX_RB2_GRAPH=10).
--old adds the two-GPU in-place scheme (HETRELAX_RB2_OLD=1) for comparison.

First every variant is checked bitwise against rb-seq (redblack_driver --verify; 2-D n = 1025
and 1022, --quick: 1025 only; 20 iterations, fp32 and fp64), the largest N also as N slabs on
GPU 0 (HETRELAX_RB2_ONE=1, the code path only). Then the red-black report's run (omega 0.8, zero
right-hand side, boundary 1) at each size, fp32, ITERS iterations per run: the median of R
runs' sweep times after a warm-up run, per iteration. Speed-up: rb-tuned's time on one GPU over
the variant's; efficiency: speed-up / N. Byte model: each point read and written once per
iteration (GB/s: all GPUs together). Target: 4 GPUs >= 3.4x one GPU at 16384^2.
--quick: 3 repeats and the n = 1025 checks (about 2 minutes on 4 H100s).
Writes DIR/mgpu-redblack.json; exit 1 when a check is not bitwise.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

SEED = ["--method", "redblack", "--omega", "0.8", "--rhs", "zero", "--boundary", "1", "--backend", "gpu", "--dim", "2"]
GRAPH_K = "10"


def drive(build, args, env=None, optional=False):
    """The driver's JSON; None for a failed optional variant (the graph form: reported, skipped)."""
    cmd = [os.path.join(build, "bench", "redblack_driver")] + [str(a) for a in args]
    e = dict(os.environ)
    e.update(env or {})
    print("+", " ".join(cmd), " ".join("%s=%s" % kv for kv in (env or {}).items()), flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=e)
    if p.returncode != 0:
        if optional:
            print("FAILED (skipped): %s" % p.stderr.strip(), flush=True)
            return None
        sys.exit("%s failed (%d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return json.loads(p.stdout)


def gpus_present():
    """CUDA devices by nvidia-smi (0 when it is missing)."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    except OSError:
        return 0
    return sum(1 for line in p.stdout.splitlines() if line.startswith("GPU "))


def variants(counts, old):
    """(label, GPUs, driver args, environment, optional) per variant."""
    out = []
    for g in counts:
        if g == 1:
            out.append(("rb-tuned", 1, ["--kernel", "rb-tuned"], {}, False))
            continue
        k = ["--kernel", "rb-mgpu", "--gpus", g]
        out.append(("rb-mgpu %d" % g, g, k, {}, False))
        out.append(("rb-mgpu %d graph" % g, g, k, {"HETRELAX_RB2_GRAPH": GRAPH_K}, True))
        if old and g == 2:
            out.append(("rb-2gpu old", 2, ["--kernel", "rb-2gpu"], {"HETRELAX_RB2_OLD": "1"}, True))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="docs/results")
    ap.add_argument("--sizes", default="16384,8192")
    ap.add_argument("--gpus", default=None, help="GPU counts, e.g. 1,2,4 (1: rb-tuned)")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--old", action="store_true", help="also the two-GPU in-place scheme")
    ap.add_argument("--quick", action="store_true", help="3 repeats, checks at n = 1025 only")
    a = ap.parse_args()
    present = gpus_present()
    if a.gpus:
        try:
            counts = sorted({int(x) for x in a.gpus.split(",")})
        except ValueError:
            ap.error("--gpus %s: want GPU counts such as 1,2,4" % a.gpus)
    else:
        counts = [1] + [g for g in (2, 4, 8, 16) if g <= max(present, 2)]
    if not counts or counts[0] < 1 or counts[-1] > 16:
        ap.error("--gpus %s: counts from 1 to 16" % a.gpus)
    if present and counts[-1] > present:
        ap.error("--gpus %s: %d GPU(s) present" % (a.gpus, present))
    if 1 not in counts:
        counts = [1] + counts  # the baseline of the speed-ups
    repeats = 3 if a.quick else a.repeats
    vs = variants(counts, a.old)
    checks = []
    failed = set()
    top = counts[-1]
    one = [("rb-mgpu %d one device" % top, top, ["--kernel", "rb-mgpu", "--gpus", top], {"HETRELAX_RB2_ONE": "1"}, False)]
    for label, g, args, env, optional in vs + (one if top > 1 else []):
        for prec in ("single", "double"):
            for n in ((1025,) if a.quick else (1025, 1022)):
                if label in failed:
                    continue
                d = drive(a.build, SEED + args + ["--precision", prec, "--n", n, "--iters", 20, "--verify"], env, optional)
                if d is None:
                    failed.add(label)
                    continue
                checks.append({"variant": label, "gpus": g, "precision": prec, "n": n,
                               "bitwise_equal_seq": d["bitwise_equal_seq"]})
                print("check %s %s n = %d: bitwise %s" % (label, prec, n, d["bitwise_equal_seq"]), flush=True)
    rows = []
    for n in [int(x) for x in a.sizes.split(",")]:
        res = {}
        for label, g, args, env, optional in vs:
            if label in failed:
                continue
            d = drive(a.build, SEED + args + ["--precision", "single", "--n", n, "--iters", a.iters,
                                              "--repeats", repeats], env, optional)
            if d is None:
                failed.add(label)
                continue
            t = statistics.median(d["time_sweeps_s"][1:]) / a.iters
            res[label] = {"gpus": g, "ms_per_iteration": 1e3 * t, "gbps": 2 * 4 * n * n / t * 1e-9,
                          "device": d.get("device_name"), "runs_s": d["time_sweeps_s"][1:]}
        base = res["rb-tuned"]["ms_per_iteration"]
        for r in res.values():
            r["speedup"] = base / r["ms_per_iteration"]
            r["efficiency"] = r["speedup"] / r["gpus"]
        rows.append({"n": n, "precision": "single", "iterations": a.iters, "variants": res})
        print("n = %d fp32, %d iterations per run, median of %d runs (against rb-tuned on one GPU):"
              % (n, a.iters, repeats), flush=True)
        for label, r in res.items():
            print("  %-22s %2d GPU(s) %8.4f ms/iteration %7.0f GB/s %6.3fx efficiency %5.1f %%"
                  % (label, r["gpus"], r["ms_per_iteration"], r["gbps"], r["speedup"], 100 * r["efficiency"]),
                  flush=True)
        four = [k for k, r in res.items() if r["gpus"] == 4]
        if four:
            best = max(four, key=lambda k: res[k]["speedup"])
            target = " (target >= 3.4x: %s)" % ("met" if res[best]["speedup"] >= 3.4 else "NOT met") if n == 16384 else ""
            print("  4 GPUs: best %s %.3fx%s" % (best, res[best]["speedup"], target), flush=True)
    os.makedirs(a.out, exist_ok=True)
    out = os.path.join(a.out, "mgpu-redblack.json")
    with open(out, "w") as f:
        json.dump({"experiment": "mgpu-redblack", "seed_run": "omega 0.8, zero rhs, boundary 1",
                   "byte_model": "one read + one write of u per point per iteration (GB/s: all GPUs together)",
                   "gpus": counts, "graph_iterations": int(GRAPH_K), "failed_variants": sorted(failed),
                   "checks": checks, "rows": rows}, f, indent=1)
    print("wrote", out)
    sys.exit(0 if all(c["bitwise_equal_seq"] for c in checks) else 1)


if __name__ == "__main__":
    main()
