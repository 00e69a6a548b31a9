#!/usr/bin/env python3
"""The CPU+GPU split model of src/parallel/hybrid/model.c, offline: re-evaluates a recorded fig14/fig5d run
(bench/experiments/hybrid_experiments.py refit JSON) with the current model and prints its error per split
next to the error of the model the run recorded.

The current calibration (hybrid_kernel.c) measures the split itself at a ladder of CPU shares,
n/64, n/32, ... and n, and builds the CPU term from the rungs where the CPU part is the later
one. A run recorded before that has no ladder: the stand-in for each rung is the run's own
measured split nearest to it (within a factor 1.42 of its rows; rungs without one are left
out), which is what the calibration would have measured up to the run-to-run noise. Points
used as rungs are marked * (their error is the noise of the other points' fit, not a test)."""
import json
import math


def part_a(knots, ws_per_row, rows):
    """A's part of `rows` rows from knots [(ws, s per row)]: the knots' times (r_k = ws_k /
    ws_per_row rows, r_k s_k seconds) linear in rows between them, proportional beyond the ends
    (model.c part_a_knots)."""
    kr = [(w / ws_per_row, w / ws_per_row * v) for w, v in knots]
    if rows <= kr[0][0]:
        return rows * knots[0][1]
    for (r0, t0), (r1, t1) in zip(kr, kr[1:]):
        if rows <= r1:
            return t0 + (rows - r0) / (r1 - r0) * (t1 - t0) if r1 > r0 else t1
    return rows * knots[-1][1]


def row_s(knots, ws, ws_per_row=1.0):
    """Seconds per row for a part of working set ws (part_a over its rows)."""
    r = ws / ws_per_row
    return part_a(knots, ws_per_row, r) / r if r > 0 else knots[0][1]


def clark_max(a, b, sigma):
    """E max of two normal times of means a, b, deviation sigma each (hr_split_model_max)."""
    if sigma <= 0:
        return max(a, b)
    th = sigma * math.sqrt(2)
    al = (a - b) / th
    big_phi = 0.5 * math.erfc(-al / math.sqrt(2))
    return a * big_phi + b * (1 - big_phi) + th * math.exp(-0.5 * al * al) / math.sqrt(2 * math.pi)


def model_time(m, rows):
    n = m["rows"]
    if rows <= 0:
        return m["b_alone"]
    a = part_a(m["knots"], m["ws_per_row"], rows)
    if rows >= n:
        return a
    return clark_max(a, max((1 - rows / n) * m["t_b"], m["b_floor"]), m["sigma"]) + m["x0"]


def refit_model(d, s, llc, l2, exchange):
    """The new model from a schedule's recorded calibration. Runs that recorded the knots (this
    version) use them. Older runs had one slab: the surrogate takes its rate up to it, and on
    to 0.7 x the LLC (the new calibration's middle slab) when the slab was already beyond the
    cores' L2 (so its rate is the L3's); from 2.5 x the LLC on (the largest slab) the host STREAM
    triad's rate (8/9 of the triad: Jacobi's plain stores move 3 words per 2 counted, the triad
    4 per 3)."""
    n = d["rows"]
    ws_row = s.get("ws_per_row", 2 * s["row_bytes"])
    if s.get("knots"):
        knots = [(k["ws"], k["row_s"]) for k in s["knots"]]
        source = "knots measured in the run"
    else:
        slab = max(64, n // 16) if n >= 64 else n
        knots = [(slab * ws_row, s["t_c"] / n)]
        if l2 < slab * ws_row < 0.7 * llc:
            knots.append((0.7 * llc, s["t_c"] / n))
        if s.get("cpu_stream_gbps", 0) > 0:
            knots.append((2.5 * llc, ws_row / (8 / 9 * s["cpu_stream_gbps"] * 1e9)))
        source = "old run: slab + STREAM surrogate, LLC %.0f MiB, L2 %.0f MiB" % (llc / 2**20, l2 / 2**20)
    m = {"rows": n, "knots": knots, "ws_per_row": ws_row, "t_b": s["t_g"],
         "b_alone": s.get("gpu_alone_s") or d["gpu_only_s"], "b_floor": s.get("gpu_floor_s", 0.0),
         "x0": s["x_exposed"], "sigma": 0.0}
    if "x_sigma" in s:
        m["x0"], m["sigma"] = s["x_off"], s["x_sigma"]
        source += ", X0 and sigma measured"
    elif exchange == "clark" and s.get("x_latency", 0) > 0:
        # no off-balance probe: X0 = one pinned copy's latency, sigma from the balance probe
        a1 = part_a(knots, ws_row, s["probe_rows"])
        b1 = (1 - s["probe_rows"] / n) * s["t_g"]
        m["x0"] = min(s["x_latency"], s["x_exposed"])
        want, lo, hi = s["probe_s"] - m["x0"], 0.0, s["probe_s"]
        for _ in range(60):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if clark_max(a1, b1, mid) < want else (lo, mid)
        m["sigma"] = lo
        source += ", X0 = pinned latency, sigma from the balance probe"
    else:
        source += ", X constant (the balance probe)"
    return m, source


def ladder_rows(n, g=1):
    """hybrid_kernel.c ladder_rows(): n/64 up to n in steps of sqrt 2 (at least g, at most n - g),
    then n (at most 16 rungs)."""
    rows, r0, k = [], max(n // 64, g), 0
    while len(rows) < 15:
        r = int(math.floor(r0 * 2 ** (0.5 * k) + 0.5))
        if r > n - g:
            break
        if not rows or r > rows[-1]:
            rows.append(r)
        k += 1
    return rows + [n]


def ladder_model(d, s):
    """The model hybrid_kernel.c calibrate() builds from a ladder [(rows, s/sweep)]: X0 from the
    split with g rows on the CPU (B the later part there), a knot per rung where the CPU part is clearly the later
    one (its time less X0, capped by every larger rung's, above 1.1 x B's part), and always the
    CPU alone (r = n)."""
    n = d["rows"]
    if s.get("ladder"):
        rungs, standin = [(p["rows"], p["s"]) for p in s["ladder"]], set()
    else:
        pts = [p for p in s["points"] if 0 < p["rows_cpu"]]
        rungs = []
        for r in ladder_rows(n):
            near = min(pts, key=lambda p: abs(math.log(p["rows_cpu"] / r)))
            if abs(math.log(near["rows_cpu"] / r)) < 0.35 and near["rows_cpu"] not in [q for q, _ in rungs]:
                rungs.append((near["rows_cpu"], near["measured_s"]))
        standin = {r for r, _ in rungs}
    floor = min(s.get("gpu_floor_s", 0.0), s["t_g"])
    b = lambda r: max((1 - r / n) * s["t_g"], floor)
    # X0: the split at g rows less B's part (stand-in: the run's smallest split)
    if s.get("ladder"):
        r0, t0 = s["probe_rows"], s["probe_s"]
    else:
        p0 = min((p for p in s["points"] if p["rows_cpu"] > 0), key=lambda p: p["rows_cpu"])
        r0, t0 = p0["rows_cpu"], p0["measured_s"]
        standin.add(r0)
    x0 = max(0.0, t0 - b(r0))
    for r, t in rungs:  # X0 is at most what any rung left above B's part
        if r < n:
            x0 = min(x0, max(0.0, t - b(r)))
    # A's part at a rung, capped by every larger rung's (model.c hr_split_model_set_knots)
    parts, cap = [], float("inf")
    for r, t in reversed(rungs):
        cap = min(cap, t - x0 if r < n else t)
        parts.append((r, cap))
    knots = []
    for r, a in reversed(parts):
        if r >= n or a > 1.1 * b(r):
            knots.append((r * s["ws_per_row"], a / r))
    if not knots:  # no rung with the CPU the later part (a run without r = n): the last rung
        r, t = rungs[-1]
        knots.append((r * s["ws_per_row"], (t - x0) / r))
    m = {"rows": n, "knots": knots, "ws_per_row": s["ws_per_row"], "t_b": s["t_g"],
         "b_alone": s.get("gpu_alone_s") or d["gpu_only_s"], "b_floor": floor,
         "x0": x0, "sigma": 0.0}
    return m, rungs, standin


def auto_choice(d, s, m):
    """--split auto: the model's best r* over [1, n - 1] and 0.8 r*, 1.25 r*, measured (stand-in:
    the recorded split nearest to each); the fastest unless not 1 % faster than GPU-only."""
    n = d["rows"]
    best = min(range(1, n), key=lambda r: model_time(m, r))
    pts = [p for p in s["points"] if 0 < p["rows_cpu"] < n]
    cands = {}
    for r in (best, round(0.8 * best), round(1.25 * best)):
        p = min(pts, key=lambda p: abs(p["rows_cpu"] - r))
        cands[p["rows_cpu"]] = p["measured_s"]
    r, t = min(cands.items(), key=lambda kv: kv[1])
    return (r, t) if t < 0.99 * d["gpu_only_s"] else (0, d["gpu_only_s"]), best, cands


def refit_ladder(path):
    with open(path) as f:
        j = json.load(f)
    runs = [(r["label"], r["result"]) for r in j["runs"]] if "runs" in j else [("", j)]
    for label, d in runs:
        for s in d["schedules"]:
            m, rungs, standin = ladder_model(d, s)
            pts = sorted(s["points"], key=lambda p: p["fraction"])
            errs = [(p, 100 * (model_time(m, p["rows_cpu"]) / p["measured_s"] - 1)) for p in pts]
            print("%s %s: ladder %s%s, X0 %.3g s, knots (rows: s/row) %s" % (
                label, s["schedule"], " ".join("%d: %.4g" % rt for rt in rungs),
                " (stand-ins: the run's own points)" if standin else "", m["x0"],
                " ".join("%d: %.4g" % (w / m["ws_per_row"], v) for w, v in m["knots"])))
            print("  split %:  " + " ".join("%6.1f" % (100 * p["fraction"]) for p, _ in errs))
            print("  old   %:  " + " ".join("%+6.1f" % (100 * (p["predicted_s"] / p["measured_s"] - 1)) for p, _ in errs))
            print("  new   %:  " + " ".join("%+6.1f%s" % (e, "*" if p["rows_cpu"] in standin else " ")
                                           for p, e in errs))
            fit = [(p, e) for p, e in errs if p["rows_cpu"] not in standin]
            print("  new within 10 %%: %d of %d (%d of %d not used as rungs); old: %d of %d" % (
                sum(abs(e) <= 10 for _, e in errs), len(errs), sum(abs(e) <= 10 for _, e in fit), len(fit),
                sum(abs(p["predicted_s"] / p["measured_s"] - 1) <= 0.1 for p, _ in errs), len(errs)))
            (r, t), best, cands = auto_choice(d, s, m)
            top = min((p for p in pts if p["rows_cpu"] < d["rows"]), key=lambda p: p["measured_s"])
            print("  auto: model's best %d rows; measured %s -> %d rows, %.4g s: %+.2f %% from the best "
                  "measured (%d rows), %+.2f %% vs GPU-only" % (
                      best, ", ".join("%d: %.4g" % kv for kv in sorted(cands.items())), r, t,
                      100 * (t / top["measured_s"] - 1), top["rows_cpu"], 100 * (t / d["gpu_only_s"] - 1)))


def refit(path, llc_mib, l2_mib, exchange):
    with open(path) as f:
        j = json.load(f)
    runs = [(r["label"], r["result"]) for r in j["runs"]] if "runs" in j else [("", j)]
    for label, d in runs:
        for s in d["schedules"]:
            m, source = refit_model(d, s, llc_mib * 2**20, l2_mib * 2**20, exchange)
            errs = []
            for p in sorted(s["points"], key=lambda p: p["fraction"]):
                old = p["predicted_s"]
                new = model_time(m, p["rows_cpu"])
                errs.append((p["fraction"], 100 * (old / p["measured_s"] - 1), 100 * (new / p["measured_s"] - 1)))
            print("%s %s (%s)" % (label, s["schedule"], source))
            print("  split %: " + " ".join("%6.1f" % (100 * f) for f, _, _ in errs))
            print("  old  %:  " + " ".join("%+6.1f" % e for _, e, _ in errs))
            print("  new  %:  " + " ".join("%+6.1f" % e for _, _, e in errs))
            print("  max |error|: old %.1f %%, new %.1f %%; new within 10 %%: %d of %d" %
                  (max(abs(e) for _, e, _ in errs), max(abs(e) for _, _, e in errs),
                   sum(1 for _, _, e in errs if abs(e) <= 10), len(errs)))
