# Shared by the CLI test scripts (sourced after HR=$1): a scratch folder removed on exit,
# pass/fail counters, and the check every flag test makes.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fails=0 passes=0
ok() { passes=$((passes + 1)); }
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect_usage() { # pattern args...: exit 2, one line naming the flag
  local pat=$1; shift
  "$HR" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q -- "$pat" "$T/err" && ok ||
    bad "'$*' exited $rc, stderr '$(cat "$T/err")', want exit 2 and '$pat'"
}
