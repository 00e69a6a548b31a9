#!/usr/bin/env python3
"""CPU 3-D Jacobi benchmark: cpu-threads `pencil` against the STREAM copy.

Sourouri et al.'s problem (7-point Jacobi, sine initial data, f = 0) at 256^3 by default, single
and double precision, on all cores. Per configuration (bench/drivers/cpu_bench.c does the work):
the STREAM copy with the run's thread count and binding (best of 10 after a warm-up, with
min and median), the kernel checked bitwise against cpu-seq (3 sweeps), one warm-up run,
then REPEATS timed runs of ITERS sweeps on one solver (median, min, max), each followed by a
copy probe under the same load (paired fractions), and the copy again after the runs. Byte model: u read once + u' written once per point per sweep (8 B
single, 16 B double); GFLOP/s at 8 flops per point. Configurations:

  pencil (untuned)   the default choice with no tuning cache (HETRELAX_TUNE_FILE -> empty file)
  pencil plain / nt  the default pencil height with ordinary / streaming stores forced
  pencil (tuned)     after hr_cpu_tune on the same problem (cache in a temporary file)
  seq                cpu-seq on one thread, against a one-thread copy

One command; writes cpu3d.json and cpu3d.md into --out. Build the helper with CMake
(target cpu_bench) or let --cc compile it from the sources where the CLI cannot build.

usage: bench/experiments/cpu3d.py [--bench build/bench/cpu_bench | --cc] [--threads P] [--n 256]
                      [--precisions single,double] [--bind none|core] [--repeats 5] [--out DIR]
"""
import argparse
import datetime
import glob
import json
import os
import platform
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def compile_bench(out_dir):
    """cc the helper from the library sources (no CMake, no json-c); hwloc when pkg-config has it."""
    exe = os.path.join(out_dir, "cpu_bench")
    srcs = []
    # the library's C folders as CMakeLists.txt globs them (without CUDA: runtime/nocuda.c and
    # the NCCL stub), and the command's mapping of the HETRELAX_* variables the driver reads
    for pat in ("core/*.c", "runtime/cpu/*.c", "runtime/nocuda.c", "reference/*.c", "methods/*/*.c",
                "methods/*/cpu/*.c", "parallel/decomp/*.c", "parallel/transport/*.c", "parallel/hybrid/*.c",
                "parallel/transport/cuda/transport_nccl_stub.c"):
        srcs += sorted(glob.glob(os.path.join(ROOT, "src", pat)))
    srcs.append(os.path.join(ROOT, "tools", "tuning_env.c"))
    flags = ["-O3", "-march=native", "-ffp-contract=off", "-std=c11", "-D_GNU_SOURCE",
             "-I" + os.path.join(ROOT, "include"), "-I" + os.path.join(ROOT, "src"),
             "-I" + os.path.join(ROOT, "tools")]
    libs = ["-lpthread", "-lm"]
    if subprocess.run(["pkg-config", "--exists", "hwloc"]).returncode == 0:
        flags.append("-DHR_HAVE_HWLOC")
        libs = subprocess.run(["pkg-config", "--libs", "hwloc"], capture_output=True, text=True).stdout.split() + libs
    cmd = ["cc"] + flags + srcs + [os.path.join(ROOT, "bench", "drivers", "cpu_bench.c"), "-o", exe] + libs
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("bench: cannot compile cpu_bench:\n" + p.stderr[-3000:])
    return exe


def find_bench(a, tmp):
    if a.cc:
        return compile_bench(tmp)
    for cand in ([a.bench] if a.bench else []) + [os.path.join(ROOT, "build", "bench", "cpu_bench")]:
        if cand and os.access(cand, os.X_OK):
            return cand
    return compile_bench(tmp)


def run_bench(exe, args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.run([exe] + [str(x) for x in args], capture_output=True, text=True, env=e)
    if p.returncode != 0:
        sys.exit(f"bench: {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)


def out_paths(out, base):
    """--out DIR writes DIR/BASE.json and DIR/BASE.md; --out FILE.json writes FILE.json and FILE.md."""
    if out.endswith(".json"):
        d = os.path.dirname(out)
        if d:
            os.makedirs(d, exist_ok=True)
        return out, out[:-5] + ".md"
    os.makedirs(out, exist_ok=True)
    return os.path.join(out, base + ".json"), os.path.join(out, base + ".md")


def git_commit():
    p = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True)
    if p.returncode != 0:
        return "unknown"
    dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return p.stdout.strip() + ("+dirty" if dirty else "")


def line(r):
    return (f"{r['label']:16s} {r['precision']:6s} P={r['threads']:2d} {r['bind']:4s} "
            f"shape {r['shape'][1]:4d}{'+nt' if r['shape_source'].endswith('+nt') else '   '} "
            f"{1e3 * r['time_per_sweep_s_median']:8.2f} ms/sweep {r['gbps_median']:7.2f} GB/s "
            f"({r['gbps_min']:.1f}-{r['gbps_max']:.1f})  copy {r['stream']['copy_gbps']:.1f} "
            f"[{r['stream']['copy_gbps_min']:.1f}-{r['stream']['copy_gbps_median']:.1f}]  "
            f"{100 * r['fraction_of_copy']:5.1f}% of copy ({100 * r['fraction_of_copy_end']:.1f}% of the copy after)"
            + (f"; paired {100 * r['fraction_paired_median']:.1f}% ({100 * r['fraction_paired_min']:.1f}-"
               f"{100 * r['fraction_paired_max']:.1f}), best/best {100 * r['fraction_best_over_best_copy']:.1f}%"
               if "fraction_paired_median" in r else ""))


def markdown(d, title, extra):
    out = [f"# {title}\n",
           f"- machine: {d['cpu']}, {d['cores']} cores (host {d['host']}); commit {d['commit']}; date {d['date']}",
           f"- problem: {d['problem']}",
           f"- load average (1, 5, 15 min) at the start {d.get('load_average_start')}, at the end "
           f"{d.get('load_average_now')} on {d['cores']} cores",
           f"- byte model: {d['byte_model']}",
           f"- reference: {d['reference']}",
           "- every configuration checked bitwise against cpu-seq first; median of the timed runs (min-max); "
           "`% of copy`: median run over the copy measured just before the configuration (`after`: just after); "
           "`paired`: each timed run over a copy probe (best of 3) taken right after it, under the same load; "
           "`best / best`: the fastest run over the fastest copy seen in the configuration\n",
           "| configuration | precision | threads | bind | thread grid | pencil (x, y, z) | source | ms/sweep | "
           "GFLOP/s | GB/s (min-max) | copy GB/s best [min, median] | % of copy | % of copy after | "
           "paired % median (min-max) | best / best copy |",
           "| --- | --- | ---: | --- | --- | --- | --- | ---: | ---: | --- | --- | ---: | ---: | --- | ---: |"]
    for r in d["records"]:
        s = r["stream"]
        out.append(f"| {r['label']} | {r['precision']} | {r['threads']} | {r['bind']} | "
                   f"{r['thread_grid'][0]}x{r['thread_grid'][1]} | {r['shape'][0]}x{r['shape'][1]}x{r['shape'][2]} | "
                   f"{r['shape_source']} | {1e3 * r['time_per_sweep_s_median']:.2f} | {r['gflops_median']:.2f} | "
                   f"{r['gbps_median']:.2f} ({r['gbps_min']:.2f}-{r['gbps_max']:.2f}) | "
                   f"{s['copy_gbps']:.2f} [{s['copy_gbps_min']:.2f}, {s['copy_gbps_median']:.2f}] | "
                   f"{100 * r['fraction_of_copy']:.1f}% | {100 * r['fraction_of_copy_end']:.1f}% | "
                   + (f"{100 * r['fraction_paired_median']:.1f}% ({100 * r['fraction_paired_min']:.1f}-"
                      f"{100 * r['fraction_paired_max']:.1f}) | {100 * r['fraction_best_over_best_copy']:.1f}% |"
                      if "fraction_paired_median" in r else "- | - |"))
    out.append("")
    out += extra
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bench", help="the cpu_bench helper (default build/bench/cpu_bench, else --cc)")
    ap.add_argument("--cc", action="store_true", help="compile the helper from the sources with cc")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--n", type=int, default=256)
    ap.add_argument("--precisions", default="single,double")
    ap.add_argument("--bind", default="none", choices=("none", "core"))
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--iters", type=int, default=0, help="sweeps per timed run (0: 10 per thread, at least 20)")
    ap.add_argument("--no-seq", action="store_true", help="skip the one-thread cpu-seq rows")
    ap.add_argument("--no-tune", action="store_true")
    ap.add_argument("--out", default="results", help="a folder, or FILE.json (Markdown beside it)")
    a = ap.parse_args()
    json_path, md_path = out_paths(a.out, "cpu3d")
    tmp = tempfile.mkdtemp(prefix="hr-cpu3d-")
    exe = find_bench(a, tmp)
    empty = os.path.join(tmp, "empty-tune.txt")
    open(empty, "w").close()
    iters = a.iters or max(20, 10 * a.threads)
    n, P = a.n, a.threads
    records = []
    load0 = list(os.getloadavg())  # the machine may be shared: say how busy it was

    def save():
        doc = {"benchmark": "cpu3d", "cpu": records[0]["cpu"], "cores": records[0]["cores"], "host": platform.node(),
               "commit": git_commit(), "hwloc": records[0]["hwloc"],
               "load_average_start": load0, "load_average_now": list(os.getloadavg()),
               "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
               "problem": f"7-point Jacobi, {n}^3 interior points, sine initial data, f = 0 (seed 003); {iters} sweeps per "
                          f"timed run, {a.repeats} timed runs after one warm-up",
               "byte_model": "u read once + u' written once per point per sweep (8 B single, 16 B double); "
                             "8 flops per point",
               "reference": "STREAM-style copy (2 words per element, plain stores so write-allocate is paid), same "
                            "thread count and binding as the run, arrays 2x the LLC each (64 MiB to 1 GiB), "
                            "best of 10 after a warm-up, measured before and after each configuration",
               "records": records}
        with open(json_path, "w") as f:
            json.dump(doc, f, indent=1)
        extra = ["Streaming stores write u' around the caches: 2 words of traffic per point against the copy's 3 "
                 "(read, write-allocate, write-back), so `nt` can pass 100% of copy when the grids stream from memory. "
                 "The untuned default uses them when the grids exceed the threads' share of the last-level cache "
             "(at most 4 MiB per thread)."]
        with open(md_path, "w") as f:
            f.write(markdown(doc, f"CPU 3-D Jacobi (7-point): cpu-threads `pencil` at {n}^3", extra))

    def go(label, backend, kernel, prec, threads, env, tune=False, it=iters):
        args = [3, n, n, n, prec, backend, kernel, threads, a.bind, it, a.repeats, 0] + (["tune"] if tune else [])
        r = run_bench(exe, args, env)
        r["label"] = label
        records.append(r)
        print(line(r), flush=True)
        save()  # after every record, so a run cut short keeps what it measured

    for prec in a.precisions.split(","):
        go("pencil (untuned)", "cpu-threads", "pencil", prec, P, {"HETRELAX_TUNE_FILE": empty})
        go("pencil plain", "cpu-threads", "pencil", prec, P, {"HETRELAX_TUNE_FILE": empty, "HETRELAX_CPU_STREAM": "0"})
        go("pencil nt", "cpu-threads", "pencil", prec, P, {"HETRELAX_TUNE_FILE": empty, "HETRELAX_CPU_STREAM": "1"})
        if not a.no_tune:
            cache = os.path.join(tmp, f"tune-{prec}.txt")
            go("pencil (tuned)", "cpu-threads", "pencil", prec, P, {"HETRELAX_TUNE_FILE": cache}, tune=True)
        if not a.no_seq:
            go("seq", "cpu-seq", "seq", prec, 1, {}, it=max(5, iters // max(1, P)))

    save()
    print(f"wrote {json_path} and {md_path}")


if __name__ == "__main__":
    main()
