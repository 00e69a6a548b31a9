#!/usr/bin/env python3
"""GPU benchmarks of hetrelax, through the CLI.

Sections (--sections a,b,...; default all):
  tune      `hetrelax tune` for the kernels and sizes below (cache: $HETRELAX_TUNE_FILE)
  ladder    Venkatasubramanian & Vuduc fig. 12: every --kernel at N = 4096, 16384, single and double
  fig11     Venkatasubramanian & Vuduc fig. 11: tuned GB/s against N = 256..16384 and T = 10, 100, 1000
  transfer  Venkatasubramanian & Vuduc fig. 13: host-to-device / compute / device-to-host at N = 4096, T = 32,
            pinned and pageable, and the cross-over T against cpu-threads (N = 4096, 16384)
  tb        exact temporal blocking against tuned at N = 8192, alpha = 2..16
  async     sweep rates of async0-3 (no accuracy: see bench/experiments/async_fig16.py)

Every configuration is verified (bitwise against cpu-seq with --verify at a short T)
before its speed is recorded; speeds are the median of --repeats runs, each run's rate
taken over all its sweeps after the solver's warm-up launch. The device copy bandwidth
is measured (`hetrelax info`, median of 9) at the start and the end; fractions use the
start value (copy_gbps). Byte model: 8 B (single) / 16 B (double) per point per sweep.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import time

LADDER = ["naive", "padded", "smem", "texture", "smem-padded", "unrolled", "tuned"]
HILO = ["smem-hilo", "smem-padded-hilo", "unrolled-hilo"]


def run(cmd, check=True):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if check and p.returncode != 0:
        raise RuntimeError("%s -> %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout[-2000:], p.stderr[-2000:]))
    return p


class Bench:
    def __init__(self, cli, repeats, quick):
        self.cli = cli
        self.repeats = repeats
        self.quick = quick
        self.records = []
        self.failures = []
        self.copy_gbps = self.copy_bandwidth()
        self.device = self.info["gpus"][0]["name"]

    def copy_bandwidth(self):
        p = run([self.cli, "info", "--json", "-", "--repeats", "9"])
        self.info = json.loads(p.stdout)
        return self.info["gpus"][0]["copy_gbps"]

    def poisson(self, kernel, n, prec, iters, extra=(), backend="gpu"):
        cmd = [self.cli, "poisson2d", "--backend", backend, "--n", str(n), "--precision", prec, "--iters",
               str(iters), "--quiet", "--monitor", "0", "--bandwidth", "%.3f" % self.copy_gbps, "--json", "-"]
        if kernel:
            cmd += ["--kernel", kernel]
        cmd += list(extra)
        return json.loads(run(cmd).stdout)

    def verify(self, kernel, n, prec, iters, extra=()):
        """Bitwise against cpu-seq (the CLI's --verify); False and a failure note if not."""
        cmd = [self.cli, "poisson2d", "--backend", "gpu", "--kernel", kernel, "--n", str(n), "--precision", prec,
               "--iters", str(iters), "--quiet", "--monitor", "0", "--no-bandwidth", "--verify"] + list(extra)
        p = run(cmd, check=False)
        ok = p.returncode == 0 and "bitwise equal" in p.stdout
        if not ok:
            self.failures.append("verify %s n=%d %s T=%d: %s %s" % (kernel, n, prec, iters, p.stdout[-400:],
                                                                      p.stderr[-400:]))
        return ok

    def timed(self, section, kernel, n, prec, iters, extra=(), backend="gpu", **tags):
        runs = [self.poisson(kernel, n, prec, iters, extra, backend) for _ in range(self.repeats)]
        rates = [r["gbps"] for r in runs]
        med = sorted(runs, key=lambda r: r["gbps"])[len(runs) // 2]
        rec = dict(med)
        rec.update(section=section, device=self.device, copy_gbps=self.copy_gbps, repeats=self.repeats,
                   gbps_runs=rates, gbps_median=statistics.median(rates),
                   time_per_sweep_s_median=statistics.median(r["time_per_sweep_s"] for r in runs),
                   time_h2d_s_median=statistics.median(r["time_h2d_s"] for r in runs),
                   time_d2h_s_median=statistics.median(r["time_d2h_s"] for r in runs),
                   fraction_of_copy=statistics.median(rates) / self.copy_gbps)
        rec.update(tags)
        self.records.append(rec)
        return rec


def sec_tune(b, args):
    sizes = "1024,4096" if b.quick else "256,512,1024,2048,4096,8192,16384"
    cmds = [["--kernel", "tuned", "--n", sizes],
            ["--kernel", ",".join(LADDER[:-1] + HILO), "--n", "4096"],
            ["--kernel", "tb", "--n", "8192", "--precision", "single", "--alpha", "4"]]
    if args.tune:
        cmds = [c.split() for c in args.tune.split(";")]
    for c in cmds:
        p = run([b.cli, "tune", "--json", "-"] + c, check=False)
        sys.stdout.write(p.stderr)
        if p.returncode != 0:
            b.failures.append("tune %s: %s" % (" ".join(c), p.stderr[-500:]))
            continue
        for r in json.loads(p.stdout):
            r.update(section="tune", copy_gbps=b.copy_gbps)
            b.records.append(r)


def sec_ladder(b, args):
    sizes = [4096] if b.quick else [4096, 16384]
    print("%-17s %6s %-6s %9s %9s %7s" % ("kernel", "n", "prec", "GFLOP/s", "GB/s", "copy%"))
    for prec in args.precisions.split(","):
        kernels = LADDER + (HILO if prec == "double" else [])
        if args.kernels:
            kernels = [k for k in args.kernels.split(",") if k in kernels]
        for k in kernels:
            if not b.verify(k, 1023, prec, 7):
                continue
            for n in sizes:
                iters = 1000 if n <= 4096 else 100
                r = b.timed("ladder", k, n, prec, iters)
                print("%-17s %6d %-6s %9.1f %9.1f %6.1f%%" % (k, n, prec, r["gflops"], r["gbps_median"],
                                                              100 * r["fraction_of_copy"]))


def sec_fig11(b, args):
    sizes = [256, 1024, 4096] if b.quick else [256, 512, 1024, 2048, 4096, 8192, 16384]
    if args.fig11_sizes:
        sizes = [int(x) for x in args.fig11_sizes.split(",")]
    print("%-6s %6s %6s %9s %7s %12s" % ("prec", "n", "T", "GB/s", "copy%", "GB/s+xfer"))
    for prec in args.precisions.split(","):
        for n in sizes:
            for T in [int(x) for x in args.fig11_T.split(",")]:
                r = b.timed("fig11", "tuned", n, prec, T)
                sweeps = r["time_per_sweep_s_median"] * T
                xfer = r["time_h2d_s_median"] + r["time_d2h_s_median"]
                r["gbps_with_transfers"] = r["bytes_per_point"] * n * n * T / (sweeps + xfer) * 1e-9
                print("%-6s %6d %6d %9.1f %6.1f%% %12.1f" % (prec, n, T, r["gbps_median"], 100 * r["fraction_of_copy"],
                                                          r["gbps_with_transfers"]))


def sec_transfer(b, args):
    print("breakdown (seed fig. 13): n=4096 T=32")
    for hm in ["pinned", "pageable"]:
        for prec in ["single", "double"]:
            r = b.timed("transfer", "tuned", 4096, prec, 32, ["--host-memory", hm], host_memory=hm)
            comp = r["time_per_sweep_s_median"] * 32
            tot = comp + r["time_h2d_s_median"] + r["time_d2h_s_median"]
            nbytes = 4096 * 4096 * (4 if prec == "single" else 8)
            r.update(h2d_share=r["time_h2d_s_median"] / tot, d2h_share=r["time_d2h_s_median"] / tot,
                     compute_share=comp / tot, h2d_gbps=nbytes / r["time_h2d_s_median"] * 1e-9,
                     d2h_gbps=nbytes / r["time_d2h_s_median"] * 1e-9)
            print("  %-8s %-6s h2d %7.2f ms (%4.1f%%, %5.1f GB/s)  compute %7.2f ms (%4.1f%%)  d2h %7.2f ms (%4.1f%%, %5.1f GB/s)"
                  % (hm, prec, 1e3 * r["time_h2d_s_median"], 100 * r["h2d_share"], r["h2d_gbps"], 1e3 * comp,
                     100 * r["compute_share"], 1e3 * r["time_d2h_s_median"], 100 * r["d2h_share"], r["d2h_gbps"]))
    print("cross-over against cpu-threads (all cores), single precision")
    for n in ([4096] if b.quick else [4096, 16384]):
        cpu = b.timed("crossover-cpu", None, n, "single", 20 if n > 8192 else 60, backend="cpu-threads")
        t_cpu = cpu["time_per_sweep_s_median"]
        for hm in ["pinned", "pageable"]:
            g = b.timed("crossover-gpu", "tuned", n, "single", 64, ["--host-memory", hm], host_memory=hm)
            t_gpu, xfer = g["time_per_sweep_s_median"], g["time_h2d_s_median"] + g["time_d2h_s_median"]
            tstar = xfer / (t_cpu - t_gpu) if t_cpu > t_gpu else math.inf
            rows = []
            for T in [1, 2, 4, 8, 16, 32, 64]:
                rows.append({"T": T, "gpu_s": xfer + T * t_gpu, "cpu_s": T * t_cpu})
            b.records.append({"section": "crossover", "device": b.device, "n": n, "precision": "single",
                              "host_memory": hm, "cpu_time_per_sweep_s": t_cpu, "gpu_time_per_sweep_s": t_gpu,
                              "transfer_s": xfer, "crossover_T": tstar, "curve": rows,
                              "cpu_threads": cpu.get("threads"), "copy_gbps": b.copy_gbps})
            print("  n=%-5d %-8s cpu %7.3f ms/sweep, gpu %7.4f ms/sweep + %6.2f ms transfers: GPU wins from T > %.2f"
                  % (n, hm, 1e3 * t_cpu, 1e3 * t_gpu, 1e3 * xfer, tstar))


def sec_tb(b, args):
    n = 4096 if b.quick else 8192
    T = 240
    for prec in args.precisions.split(","):
        base = b.timed("tb", "tuned", n, prec, T, alpha=1)
        t0 = base["time_per_sweep_s_median"]
        print("%s n=%d tuned %.4f ms/sweep (%.1f GB/s)" % (prec, n, 1e3 * t0, base["gbps_median"]))
        for a in [int(x) for x in args.tb_alphas.split(",")]:
            if not b.verify("tb", 2047, prec, 2 * a + 1, ["--alpha", str(a)]):
                continue
            r = b.timed("tb", "tb", n, prec, T, ["--alpha", str(a)], alpha=a)
            r["speedup_vs_tuned"] = t0 / r["time_per_sweep_s_median"]
            print("  tb alpha=%-3d %.4f ms/sweep: %.2fx tuned's sweep rate (%.1f effective GB/s)"
                  % (a, 1e3 * r["time_per_sweep_s_median"], r["speedup_vs_tuned"], r["gbps_median"]))


def sec_async(b, args):
    n, T = 4096, 420
    base = b.timed("async", "tuned", n, "single", T, alpha=1)
    for k in ["async0", "async1", "async2", "async3"]:
        for a in [int(x) for x in args.async_alphas.split(",")]:
            r = b.timed("async", k, n, "single", T, ["--alpha", str(a)], alpha=a)
            r["sweep_rate_vs_tuned"] = base["time_per_sweep_s_median"] / r["time_per_sweep_s_median"]
            print("  %s alpha=%-3d %.4f ms per effective sweep: %.2fx tuned's rate, residual %.3e"
                  % (k, a, 1e3 * r["time_per_sweep_s_median"], r["sweep_rate_vs_tuned"], r["relative_residual"]))


SECTIONS = {"tune": sec_tune, "ladder": sec_ladder, "fig11": sec_fig11, "transfer": sec_transfer, "tb": sec_tb,
            "async": sec_async}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--sections", default="tune,ladder,fig11,transfer,tb,async")
    ap.add_argument("--tune", help="';'-separated `hetrelax tune` argument lists (default: built in)")
    ap.add_argument("--kernels", help="ladder: only these kernels")
    ap.add_argument("--precisions", default="single,double")
    ap.add_argument("--fig11-sizes")
    ap.add_argument("--fig11-T", default="10,100,1000")
    ap.add_argument("--tb-alphas", default="2,3,4,6,8,12,16")
    ap.add_argument("--async-alphas", default="2,4,6,10,20,30")
    args = ap.parse_args()
    b = Bench(args.cli, args.repeats, args.quick)
    commit = os.environ.get("HETRELAX_COMMIT") or run(["git", "rev-parse", "--short=12", "HEAD"],
                                                       check=False).stdout.strip()
    drv = run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], check=False).stdout.strip()
    print("device %s, driver %s, copy %.1f GB/s (median of 9), commit %s" % (b.device, drv, b.copy_gbps, commit))
    t0 = time.time()

    def save(copy_end=None):
        doc = {"device": b.device, "driver": drv, "commit": commit,
               "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
               "copy_gbps": b.copy_gbps, "copy_gbps_end": copy_end, "host": b.info.get("host_bandwidth"),
               "cpu_model": b.info.get("cpu_model"), "cores": b.info.get("cores"),
               "byte_model": "8 B (single) / 16 B (double) per point per sweep: u read once, u' written once",
               "seconds": time.time() - t0, "failures": b.failures, "records": b.records}
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)

    for s in args.sections.split(","):
        print("\n== %s" % s)
        ts = time.time()
        try:
            SECTIONS[s](b, args)
        except Exception as e:  # keep what was measured; the failure is reported
            b.failures.append("%s: %s" % (s, e))
            print("section %s failed: %s" % (s, e))
        print("(%s: %.0f s)" % (s, time.time() - ts))
        save()
    copy_end = b.copy_bandwidth()
    save(copy_end)
    print("\ncopy bandwidth start %.1f GB/s, end %.1f GB/s; %d records; %d failures" %
          (b.copy_gbps, copy_end, len(b.records), len(b.failures)))
    for fl in b.failures:
        print("FAILURE:", fl[:600])
    return 1 if b.failures else 0


if __name__ == "__main__":
    sys.exit(main())
