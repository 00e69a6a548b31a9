#!/usr/bin/env bash
# Multigrid on the GPU (label gpu; exit 77 without a device): poisson2d/poisson3d --method
# mg|cg --backend gpu converge and say so in the JSON; after a fixed number of cycles the
# --output solution is bitwise the CPU's.
set -u
HR=$1
. "$(dirname "$0")/../../tools/cli_lib.sh"
if "$HR" poisson2d --no-bandwidth --quiet --method mg --backend gpu --n 7 2>&1 | grep -q "no CUDA device"; then
  echo "no CUDA device: skipped"
  exit 77
fi
run_ok() { # label args...
  local label=$1; shift
  "$HR" "$@" --backend gpu --no-bandwidth --quiet --json "$T/r.json" >"$T/out" 2>"$T/err"
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['reason']=='converged' and d['relative_residual']<float(sys.argv[2]) and d['backend']=='gpu', d" \
    "$T/r.json" "$TOL" && ok || bad "$label: $(cat "$T/err") $(cat "$T/r.json" 2>/dev/null | tr -d '\n' | head -c 400)"
}
TOL=1e-8 run_ok "2-D v" poisson2d --method mg --n 255 --tol 1e-8
TOL=1e-8 run_ok "3-D fmg" poisson3d --method mg --cycle fmg --n 31 --tol 1e-8
TOL=1e-8 run_ok "w jacobi" poisson2d --method mg --cycle w --smoother jacobi --pre 3 --post 3 --n 127 --tol 1e-8
TOL=1e-8 run_ok "cheby levels 3" poisson2d --method mg --smoother cheby --levels 3 --n 63 --tol 1e-8
TOL=1e-8 run_ok "cg" poisson2d --method cg --n 50 --tol 1e-8 --iters 2000
TOL=1e-8 run_ok "cg + mg" poisson3d --method cg --pc mg --n 31 --tol 1e-8
TOL=1e-10 run_ok "mixed" poisson2d --method mg --precision mixed --n 127 --tol 1e-10
# the asynchronous smoother converges; the coarse levels on the CPU too
TOL=1e-8 run_ok "async3" poisson2d --method mg --smoother async3 --n 255 --tol 1e-8
TOL=1e-8 run_ok "async3 3-D mixed" poisson3d --method mg --smoother async3 --precision mixed --n 31 --tol 1e-8
TOL=1e-8 run_ok "coarse-on cpu" poisson3d --method mg --coarse-on cpu --n 31 --tol 1e-8
TOL=1e-8 run_ok "coarse-on cpu w level 2" poisson2d --method mg --cycle w --coarse-on cpu --coarse-level 2 --n 127 --tol 1e-8
# ... and after four cycles the coarse-on-cpu solution is the all-GPU one, bitwise
for P in poisson2d poisson3d; do
  for C in gpu cpu; do
    "$HR" $P --no-bandwidth --quiet --method mg --n 31 --rhs manufactured --tol 1e-30 --iters 4 --backend gpu \
      --coarse-on $C --output "$T/$C.raw" >/dev/null 2>"$T/err$C"
  done
  cmp -s "$T/gpu.raw" "$T/cpu.raw" && [ -s "$T/cpu.raw" ] && ok || bad "$P --coarse-on cpu vs gpu: $(cat "$T/errcpu")"
done
# four cycles exactly (the tolerance is out of reach): the GPU solution is the CPU's, bitwise
for P in poisson2d poisson3d; do
  "$HR" $P --no-bandwidth --quiet --method mg --n 31 --rhs manufactured --tol 1e-30 --iters 4 --backend cpu-seq \
    --output "$T/c.raw" >/dev/null 2>&1
  "$HR" $P --no-bandwidth --quiet --method mg --n 31 --rhs manufactured --tol 1e-30 --iters 4 --backend gpu \
    --output "$T/g.raw" >/dev/null 2>"$T/err"
  cmp -s "$T/c.raw" "$T/g.raw" && [ -s "$T/g.raw" ] && ok || bad "$P --output gpu vs cpu-seq: $(cat "$T/err")"
done
echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
