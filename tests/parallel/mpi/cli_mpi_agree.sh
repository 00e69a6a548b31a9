#!/usr/bin/env bash
# Ranks that disagree before they agree. Every rank of `mpiexec hetrelax ...` must reach the
# same agreements whatever it parsed: a rank that fails to parse, runs another command or
# --help, another method, another HETRELAX_* setting, or misses an input file in its own
# working directory ends every rank with status 2 within seconds, with one message on rank 0
# naming the rank, no banner before it, and nothing left in /dev/shm. Also: the commands
# that do not split over ranks refuse several ranks.
#   cli_mpi_agree.sh MPIEXEC HETRELAX
set -u
mpiexec=$1 HR=$2
. "$(dirname "$0")/cli_mpi_lib.sh"

# each rank runs through $W, which records its status in $T/rc.RANK and exits 0, so that
# mpiexec does not kill the other ranks (a status other than 0 aborts the job) before they
# record theirs; also its process id (our halos' names start hetrelax-PID-, PID rank 0's)
# and OpenMPI's job id (its shared-memory names hold it in hex)
W=$T/w.sh
cat >"$W" <<EOF
#!/bin/sh
"\$@" &
pid=\$!
echo \$pid >"$T/pid.\$OMPI_COMM_WORLD_RANK"
[ -n "\${OMPI_MCA_ess_base_jobid:-}" ] && printf '%x\n' "\$OMPI_MCA_ess_base_jobid" >"$T/job"
wait \$pid
echo \$? >"$T/rc.\$OMPI_COMM_WORLD_RANK"
EOF
chmod +x "$W"

# shared-memory names of this run (our halos, OpenMPI's own; other tests may run MPI jobs
# meanwhile) that no live process maps: what the run left behind
shm_ours() { ls /dev/shm 2>/dev/null | grep -E '^(hetrelax-|vader_segment)' | sort; }
shm_left() {
  local pid0 job
  pid0=$(cat "$T/pid.0" 2>/dev/null || echo none)
  job=$(cat "$T/job" 2>/dev/null || echo '[0-9a-f]*')
  comm -13 "$1" <(shm_ours) | grep -E "^(hetrelax-$pid0-|vader_segment\..*\.$job\.)" |
    while read -r f; do grep -qs "/dev/shm/$f" /proc/[0-9]*/maps || echo "$f"; done
}

# expect STATUS RANKS PATTERN MPIEXEC-ARGS... : every rank ends with STATUS within 30 s;
# for STATUS 2 stderr holds one hetrelax line, which matches PATTERN, and stdout no banner
expect() {
  local want=$1 np=$2 pat=$3; shift 3
  rm -f "$T"/rc.* "$T"/pid.* "$T/job"
  shm_ours >"$T/shm.before"
  local t0=$SECONDS
  # -k: mpiexec may not end on SIGTERM while its ranks hang
  timeout -k 10 "${MRUN_TIMEOUT:-30}" "$mpiexec" --oversubscribe "$@" >"$T/out" 2>"$T/err"
  local took=$((SECONDS - t0)) statuses left why=""
  statuses=$(cat "$T"/rc.* 2>/dev/null | sort -u | tr '\n' ' ')
  left=$(shm_left "$T/shm.before" | tr '\n' ' ')
  [ "$statuses" = "$want " ] && [ "$(ls "$T"/rc.* 2>/dev/null | wc -l)" -eq "$np" ] || why="statuses '$statuses' of $(ls "$T"/rc.* 2>/dev/null | wc -l) ranks;"
  [ $took -lt "${MRUN_TIMEOUT:-30}" ] || why="$why hung (${took}s);"
  [ -z "$left" ] || why="$why left in /dev/shm: $left;"
  if [ "$want" != 0 ]; then
    [ "$(grep -c '^hetrelax' "$T/err")" -eq 1 ] || why="$why $(grep -c '^hetrelax' "$T/err") hetrelax lines;"
    grep -q -- "$pat" "$T/err" || why="$why no '$pat';"
    ! grep -qE '^(hetrelax |MPI: |sweeps: )' "$T/out" || why="$why banner before the error: $(head -c 300 "$T/out");"
  fi
  [ -z "$why" ] && ok || bad "$*: $why stderr: $(grep '^hetrelax' "$T/err" | head -3)"
}

B="--no-bandwidth --iters 10"
# --- a rank that fails to parse (the issue's case; then one rank above 1, then rank 0 alone)
expect 2 2 "poisson2d: rank 1: --n: -5 is out of range" \
  -n 1 "$W" "$HR" poisson2d --n 64 --iters 10 --quiet : -n 1 "$W" "$HR" poisson2d --n -5 --iters 10 --quiet
expect 2 3 "poisson2d: rank 2: --iters: expected an integer" \
  -n 2 "$W" "$HR" poisson3d $B --n 12 : -n 1 "$W" "$HR" poisson2d $B --n 12 --iters x
expect 2 3 "^hetrelax poisson2d: --n: -5 is out of range" \
  -n 1 "$W" "$HR" poisson2d $B --n -5 : -n 2 "$W" "$HR" poisson2d $B --n 20

# --- a rank that parses something else: another command, --help, another method or size
expect 2 2 "rank 1 was started with another command line than rank 0 ('poisson3d" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" poisson3d $B --n 20
expect 2 2 "rank 1 was started with another command line than rank 0 ('poisson2d --help'" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" poisson2d --help
expect 2 3 "rank 2 was started with another command line" \
  -n 2 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" poisson2d $B --n 20 --method mg
expect 2 2 "rank 1 was started with another command line" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" poisson2d $B --n 20 --method sor
expect 2 2 "rank 1 was started with another command line" \
  -n 1 "$W" "$HR" poisson3d $B --n 12 --method cg : -n 1 "$W" "$HR" poisson3d $B --n 12
expect 2 2 "rank 1 was started with another command line" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" poisson2d $B --n 21
expect 2 2 "sparse: rank 1: runs in one process" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" sparse --gen laplace2d:20
expect 2 2 "rank 1: unknown command 'nonsense'" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 1 "$W" "$HR" nonsense

# --- a rank-local setting: these made one rank share grids the other never mapped (a hang,
# names left in /dev/shm), or queue its exchanges another way
expect 2 2 "rank 1 runs with other HETRELAX_\* settings than rank 0 (HETRELAX_MPI_MAPPED=0 against none)" \
  -n 1 "$W" "$HR" poisson3d $B --n 16 : -n 1 -x HETRELAX_MPI_MAPPED=0 "$W" "$HR" poisson3d $B --n 16
expect 2 3 "rank 1 runs with other HETRELAX_\* settings" \
  -n 1 "$W" "$HR" poisson2d $B --n 20 : -n 2 -x HETRELAX_DSOLVER_QUEUED=1 "$W" "$HR" poisson2d $B --n 20
# the same setting everywhere is fine, and so is one that only keeps a rank's output
HETRELAX_MPI_SHM=0 expect 0 2 "" -n 2 "$W" "$HR" poisson2d $B --n 20 --quiet
expect 0 2 "" -n 1 "$W" "$HR" poisson2d $B --n 20 --quiet : -n 1 -x HETRELAX_MPI_ALL_OUTPUT=1 "$W" "$HR" poisson2d $B --n 20 --quiet

# --- an input file missing (or short) in one rank's working directory only; no banner first
mkdir -p "$T/a" "$T/b" "$T/c"
python3 -c "import sys; sys.stdout.buffer.write(bytes(20 * 20 * 4))" >"$T/a/f.raw"
python3 -c "import sys; sys.stdout.buffer.write(bytes(20 * 20 * 4 - 4))" >"$T/c/f.raw"
R="--rhs f.raw --n 20"
expect 2 3 "poisson2d: rank 1: --rhs: cannot read 'f.raw': No such file or directory" \
  -n 1 -wdir "$T/a" "$W" "$HR" poisson2d $B $R : -n 2 -wdir "$T/b" "$W" "$HR" poisson2d $B $R
expect 2 4 "poisson2d: rank 2: --rhs: cannot read 'f.raw'" \
  -n 2 -wdir "$T/a" "$W" "$HR" poisson2d $B $R : -n 1 -wdir "$T/b" "$W" "$HR" poisson2d $B $R : \
  -n 1 -wdir "$T/a" "$W" "$HR" poisson2d $B $R
expect 2 2 "poisson3d: rank 1: --rhs: 'f.raw': too short" \
  -n 1 -wdir "$T/a" "$W" "$HR" poisson3d $B --rhs f.raw --n 20 --nz 1 : \
  -n 1 -wdir "$T/c" "$W" "$HR" poisson3d $B --rhs f.raw --n 20 --nz 1
expect 2 2 "^hetrelax poisson2d: --rhs: cannot read 'f.raw'" \
  -n 1 -wdir "$T/b" "$W" "$HR" poisson2d $B $R : -n 1 -wdir "$T/a" "$W" "$HR" poisson2d $B $R
expect 0 3 "" -n 3 -wdir "$T/a" "$W" "$HR" poisson2d $B $R --quiet

# --- input errors the library finds in create: the message alone, no banner or sweeps line
expect 2 4 "--decomp: 3 subdomains but 4 ranks" -n 4 "$W" "$HR" poisson2d $B --n 20 --decomp 3x1
expect 2 2 "--transport: nccl" -n 2 "$W" "$HR" poisson3d $B --n 10 --transport nccl
# and a good run still prints its banner once, before the summary
expect 0 2 "" -n 2 "$W" "$HR" poisson2d $B --n 20
[ "$(grep -c '^sweeps: ' "$T/out")" -eq 1 ] && grep -A100 '^sweeps: ' "$T/out" | grep -q '^summary' && ok ||
  bad "banner of a good run: $(cat "$T/out")"

# --- commands that run whole in one process refuse several ranks (they ran on every rank:
# the same measurements at once, the same files written); one rank under mpiexec runs as
# without it
for c in "sparse --gen laplace2d:20" "info" "model --n 64" "tune --backend cpu-threads --n 16"; do
  # shellcheck disable=SC2086
  expect 2 2 "hetrelax ${c%% *}: runs in one process" -n 2 "$W" "$HR" $c
done
# multigrid and CG of the model problem on several ranks: the general engine, slabs
expect 0 2 "" -n 2 "$W" "$HR" poisson2d --n 31 --method mg --quiet
expect 0 2 "" -n 2 "$W" "$HR" poisson3d --n 15 --method cg --quiet
expect 2 2 "--precision: mixed" -n 2 "$W" "$HR" poisson2d --n 31 --method mg --precision mixed
expect 0 1 "" -n 1 "$W" "$HR" sparse --gen laplace2d:20 --quiet
expect 0 1 "" -n 1 "$W" "$HR" poisson2d --n 31 --method mg --quiet
expect 0 1 "" -n 1 "$W" "$HR" poisson3d --n 15 --method cg --quiet

echo "$passes passed, $fails failed"
[ $fails -eq 0 ]
