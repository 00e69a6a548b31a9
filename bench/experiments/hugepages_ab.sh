#!/bin/bash
# Transparent huge pages, A/B: the host copy bandwidth (`hetrelax info`) and a cpu-threads
# sweep (poisson2d, n = 8192 fp32 unless N is set), each run ROUNDS times in fresh
# processes, alternating HETRELAX_HUGEPAGES=0 (the default: 4 KiB pages under THP
# "madvise") and 1 (grids advised MADV_HUGEPAGE). Prints the kernel's THP setting, every
# run's figure and, per setting, the median and the spread (min..max).
#
#   bench/experiments/hugepages_ab.sh BUILD_DIR [ROUNDS]
set -u -o pipefail
BUILD=${1:?usage: bench/experiments/hugepages_ab.sh BUILD_DIR [ROUNDS]}
ROUNDS=${2:-5}
N=${N:-8192}
CLI=$BUILD/hetrelax
[ -x "$CLI" ] || { echo "no $CLI"; exit 2; }
echo "THP enabled: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)"
echo "THP defrag:  $(cat /sys/kernel/mm/transparent_hugepage/defrag 2>/dev/null || echo unknown)"
echo "cores: $(nproc)"
declare -A COPY SWEEP
for ((r = 0; r < ROUNDS; r++)); do
    for hp in 0 1; do
        c=$(HETRELAX_HUGEPAGES=$hp "$CLI" info --json - --repeats 5 2>/dev/null |
            python3 -c "import json,sys; print('%.1f' % json.load(sys.stdin)['host_bandwidth']['copy_gbps'])") || c=nan
        s=$(HETRELAX_HUGEPAGES=$hp "$CLI" poisson2d --n "$N" --backend cpu-threads --iters 100 --quiet --json - 2>/dev/null |
            python3 -c "import json,sys; d=json.load(sys.stdin); print('%.1f' % d['gbps'])") || s=nan
        echo "round $r hugepages=$hp: copy $c GB/s, cpu-threads n=$N fp32 $s GB/s"
        COPY[$hp]="${COPY[$hp]:-} $c"
        SWEEP[$hp]="${SWEEP[$hp]:-} $s"
    done
done
for hp in 0 1; do
    python3 - "$hp" "${COPY[$hp]}" "${SWEEP[$hp]}" <<'PY'
import statistics, sys
hp, copy, sweep = sys.argv[1], [float(x) for x in sys.argv[2].split()], [float(x) for x in sys.argv[3].split()]
f = lambda v: "median %.1f, %.1f..%.1f" % (statistics.median(v), min(v), max(v))
print("hugepages=%s: copy GB/s %s; sweep GB/s %s; sweep / copy (medians) %.3f" % (
    hp, f(copy), f(sweep), statistics.median(sweep) / statistics.median(copy)))
PY
done
