#!/usr/bin/env python3
"""Several GPUs through the command, as a user runs it: strong and weak scaling of the Jacobi
sweep on 1..N GPUs, in one process (`--gpus N`) and as MPI ranks (one per GPU).

  bench/experiments/multi_gpu_cli.py --hetrelax BUILD/hetrelax --out OUT.json [--gpus 1,2,4]
                         [--sections check,2d,3d-weak,3d-strong] [--transports auto,host,nccl,peer]
                         [--repeats 3] [--mgpm MGPM.json] [--mpiexec mpiexec]

Every placement is first checked bitwise against cpu-seq on a small grid (2-D 1000^2 for
`--gpus N`, 61 x 43 and 37 x 29 x 41 for ranks, every decomposition and transport used
below). Then each configuration runs `--repeats` times, each a fresh command (cold: what a
user gets), and the median of the JSON's time per sweep is reported with the run's own
bandwidth reference (the sum of the GPUs' device copy, measured by the command), the share
of the halo exchange hidden behind the interior (ranks) and the exposed exchange per sweep.

  2d         20480^2 fp32, 300 sweeps: --gpus 1..N and mpiexec -n 1..N --backend gpu (each
             transport at N ranks); NVIDIA's multi-gpu-programming-models variants beside
             (--mgpm: the JSON of bench/experiments/mgpm_build.sh, same grid, iterations and machine)
  3d-weak    512^3 per GPU fp32, 100 sweeps: z slabs (1x1xP) and 2-D splits (1x2x2 on 4), each
             transport
  3d-strong  512 x 512 x 1024 fp32, 100 sweeps: --gpus N, and ranks as slabs and 2-D splits

Writes OUT.json (every run) and prints the tables; exits non-zero when a check fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def run(cmd, timeout=600, env=None):
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    return p.returncode, p.stdout, p.stderr, time.time() - t0


class Bench:
    def __init__(self, args):
        self.a = args
        self.hr = args.hetrelax
        self.tmp = tempfile.mkdtemp(prefix="hr-mgpu-")
        self.records = []
        self.failures = []

    def mpi(self, np):
        return [self.a.mpiexec, "-n", str(np), "--oversubscribe"]

    def check(self, label, cmd, ref_args):
        """cmd's --output against cpu-seq's on the same problem: bitwise."""
        ref = os.path.join(self.tmp, "ref.raw")
        out = os.path.join(self.tmp, "out.raw")
        for f in (ref, out):
            if os.path.exists(f):
                os.unlink(f)
        rc1, _, e1, _ = run([self.hr] + ref_args + ["--backend", "cpu-seq", "--no-bandwidth", "--quiet",
                                                    "--output", ref])
        rc2, _, e2, _ = run(cmd + ["--no-bandwidth", "--quiet", "--output", out])
        same = rc1 == 0 and rc2 == 0 and open(ref, "rb").read() == open(out, "rb").read()
        print("check %-52s %s" % (label, "bitwise cpu-seq" if same else "FAILED: %s %s" % (e1, e2)), flush=True)
        if not same:
            self.failures.append(label)
        self.records.append({"kind": "check", "label": label, "bitwise": same, "cmd": " ".join(cmd)})

    def time(self, section, label, cmd, gpus):
        js = os.path.join(self.tmp, "run.json")
        per, last = [], None
        for _ in range(self.a.repeats):
            if os.path.exists(js):
                os.unlink(js)
            rc, out, err, wall = run(cmd + ["--quiet", "--json", js])
            if rc != 0 or not os.path.exists(js):
                print("%-10s %-40s FAILED (%d): %s" % (section, label, rc, err.strip()[-300:]), flush=True)
                self.failures.append(label)
                return None
            d = json.load(open(js))
            if not (d.get("relative_residual") is not None and d["relative_residual"] == d["relative_residual"]):
                self.failures.append(label + " (residual)")
            per.append(d["time_per_sweep_s"])
            last = d
        m = last.get("mpi", {})
        sweeps = max(1, last.get("iterations", 1))
        rec = {
            "kind": "time", "section": section, "label": label, "gpus": gpus, "cmd": " ".join(cmd),
            "time_per_sweep_s": statistics.median(per), "runs": per,
            "gbps": last.get("gbps"), "reference_gbps": last.get("reference_gbps"),
            "bandwidth_fraction": last.get("bandwidth_fraction"), "device": last.get("device"),
            "transport": m.get("transport"), "buffers": m.get("buffers"),
            "hidden_fraction": m.get("hidden_fraction"),
            "exposed_per_sweep_s": (m.get("wait_s") or 0.0) / sweeps if m else None,
            "transfer_per_sweep_s": (m.get("transfer_s") or 0.0) / sweeps if m else None,
        }
        rec["gbps_median"] = rec["gbps"] * last["time_per_sweep_s"] / rec["time_per_sweep_s"] if rec["gbps"] else None
        self.records.append(rec)
        json.dump({"records": self.records, "partial": True}, open(self.a.out, "w"), indent=1)  # a cut run keeps these
        frac = rec["bandwidth_fraction"]
        print("%-10s %-40s %8.4f ms/sweep  %5.1f%% of %7.0f GB/s%s" % (
            section, label, 1e3 * rec["time_per_sweep_s"], 100 * (frac or 0), rec["reference_gbps"] or 0,
            "" if rec["hidden_fraction"] is None else "  hidden %.2f  exposed %.4f ms/sweep" % (
                rec["hidden_fraction"], 1e3 * rec["exposed_per_sweep_s"])), flush=True)
        return rec


def counts(s, most):
    return [g for g in (int(x) for x in s.split(",")) if 1 <= g <= most]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hetrelax", required=True)
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--out", required=True)
    ap.add_argument("--gpus", default="1,2,4")
    ap.add_argument("--sections", default="check,2d,3d-weak,3d-strong")
    ap.add_argument("--transports", default="auto,host,nccl,peer")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n2d", type=int, default=20480)
    ap.add_argument("--iters2d", type=int, default=300)
    ap.add_argument("--n3d", type=int, default=512)
    ap.add_argument("--iters3d", type=int, default=100)
    ap.add_argument("--mgpm", help="bench/experiments/mgpm_build.sh's JSON, drawn beside the 2-D table")
    a = ap.parse_args()
    listing = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True).stdout
    present = sum(1 for line in listing.splitlines() if line.startswith("GPU "))
    gl = counts(a.gpus, present)
    top = max(gl)
    secs = a.sections.split(",")
    trs = a.transports.split(",")
    b = Bench(a)
    topo = subprocess.run(["nvidia-smi", "topo", "-m"], capture_output=True, text=True).stdout
    print(topo, flush=True)
    H = [a.hetrelax]

    if "check" in secs:
        p2 = ["poisson2d", "--n", "1000", "--iters", "50"]
        for g in gl:
            if g > 1:
                b.check("2-D --gpus %d" % g, H + p2 + ["--backend", "gpu", "--gpus", str(g)], p2)
        q2 = ["poisson2d", "--n", "61", "--nx", "43", "--iters", "30"]
        q3 = ["poisson3d", "--n", "37", "--nx", "29", "--nz", "41", "--iters", "20"]
        for g in gl:
            if g == 1:
                continue
            for tr in trs:
                b.check("2-D %d ranks %s" % (g, tr), b.mpi(g) + H + q2 + ["--backend", "gpu", "--transport", tr], q2)
                decs = ["1x1x%d" % g] + (["1x2x2", "2x2x1", "4x1x1"] if g == 4 else [])
                for dec in decs:
                    b.check("3-D %d ranks %s %s" % (g, dec, tr),
                            b.mpi(g) + H + q3 + ["--backend", "gpu", "--decomp", dec, "--transport", tr], q3)

    if "2d" in secs:
        p = ["poisson2d", "--n", str(a.n2d), "--iters", str(a.iters2d)]
        for g in gl:
            b.time("2d", "--gpus %d" % g, H + p + ["--backend", "gpu"] + (["--gpus", str(g)] if g > 1 else []), g)
        for g in gl:
            for tr in (["auto"] if g < top else trs):
                b.time("2d", "mpiexec -n %d %s" % (g, tr), b.mpi(g) + H + p + ["--backend", "gpu", "--transport", tr], g)
        if 4 in gl:  # the balanced split against the default slabs
            b.time("2d", "mpiexec -n 4 auto 2x2", b.mpi(4) + H + p + ["--backend", "gpu", "--decomp", "2x2"], 4)

    if "3d-weak" in secs:
        n = a.n3d
        for g in gl:
            p = ["poisson3d", "--nx", str(n), "--ny", str(n), "--nz", str(n * g), "--iters", str(a.iters3d),
                 "--backend", "gpu", "--decomp", "1x1x%d" % g]
            for tr in (["auto"] if g == 1 else trs):
                b.time("3d-weak", "slab %d ranks %s" % (g, tr), b.mpi(g) + H + p + ["--transport", tr], g)
        if 4 in gl:
            p = ["poisson3d", "--nx", str(n), "--ny", str(2 * n), "--nz", str(2 * n), "--iters", str(a.iters3d),
                 "--backend", "gpu", "--decomp", "1x2x2"]
            for tr in trs:
                b.time("3d-weak", "1x2x2 4 ranks %s" % tr, b.mpi(4) + H + p + ["--transport", tr], 4)

    if "3d-strong" in secs:
        n = a.n3d
        p = ["poisson3d", "--nx", str(n), "--ny", str(n), "--nz", str(2 * n), "--iters", str(a.iters3d),
             "--backend", "gpu"]
        for g in gl:
            b.time("3d-strong", "--gpus %d" % g, H + p + (["--gpus", str(g)] if g > 1 else []), g)
        for g in gl:
            b.time("3d-strong", "slab %d ranks auto" % g, b.mpi(g) + H + p + ["--decomp", "1x1x%d" % g], g)
        if 4 in gl:
            b.time("3d-strong", "1x2x2 4 ranks auto", b.mpi(4) + H + p + ["--decomp", "1x2x2"], 4)
            if "host" in trs:
                b.time("3d-strong", "slab 4 ranks host", b.mpi(4) + H + p + ["--decomp", "1x1x4", "--transport", "host"], 4)

    # summaries: speed-up and efficiency against the same section's 1-GPU run
    print("\n== scaling (median of %d cold runs each; speed-up against the section's 1-GPU run)" % a.repeats)
    base = {}
    for r in b.records:
        if r["kind"] == "time" and r["gpus"] == 1 and r["section"] not in base:
            base[r["section"]] = r["time_per_sweep_s"]
    for r in b.records:
        if r["kind"] != "time" or r["section"] not in base:
            continue
        t1 = base[r["section"]]
        weak = r["section"] == "3d-weak"
        r["speedup"] = t1 / r["time_per_sweep_s"]
        r["efficiency"] = t1 / r["time_per_sweep_s"] if weak else t1 / r["time_per_sweep_s"] / r["gpus"]
        print("%-10s %-40s %2d GPU  %8.4f ms  %s %.3f" % (
            r["section"], r["label"], r["gpus"], 1e3 * r["time_per_sweep_s"],
            "efficiency" if weak else "speed-up %.2fx, efficiency" % r["speedup"], r["efficiency"]))
    mg = None
    if a.mgpm and os.path.exists(a.mgpm):
        mg = json.load(open(a.mgpm))
        print("\nNVIDIA multi-gpu-programming-models at the same grid (their n counts the boundary):")
        print(json.dumps(mg, indent=1)[:3000])
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True,
                            cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    json.dump({"gpus_present": present, "gpus": listing, "commit": commit, "topology": topo, "records": b.records, "mgpm": mg,
               "failures": b.failures, "date": time.strftime("%Y-%m-%d %H:%M:%S")},
              open(a.out, "w"), indent=1)
    print("\nwrote %s; %d failure(s): %s" % (a.out, len(b.failures), ", ".join(b.failures)))
    return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
