# Sourced by the MPI command-line tests (cli_mpi.sh, cli_mpi_gpu.sh, cli_mpi_nccl.sh) after
# they set mpiexec and HR: a scratch folder $T removed on exit, pass/fail counters, and
# mrun, which runs the command under mpiexec with a guard against hangs
# (MRUN_TIMEOUT seconds, 60 unless the script sets it; then SIGKILL, as mpiexec may not end
# on SIGTERM while its ranks hang).
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
mrun() { # ranks args...
  local np=$1; shift
  timeout -k 10 "${MRUN_TIMEOUT:-60}" "$mpiexec" -n "$np" --oversubscribe "$HR" "$@"
}
