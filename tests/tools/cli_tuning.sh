#!/usr/bin/env bash
# The tuning knobs in the command: a HETRELAX_* variable, its flag and --tuning NAME=VALUE
# give the same knob, the same run and the same "tuning" record; flags win over the
# variable; `hetrelax info` lists the knobs in effect; a bad value is one line, exit 2.
set -u
HR=$1
DOC=$2 # docs/configuration.md
. "$(dirname "$0")/cli_lib.sh"
unset HETRELAX_CPU_BLOCK HETRELAX_TUNE_FILE
export HETRELAX_TUNE_FILE="$T/no-such-cache.txt" # no user cache decides the default here

P="poisson3d --n 20 --iters 12 --backend cpu-threads --threads 2 --kernel pencil --quiet"
run() { # name env... -- args...: the run's JSON and raw solution
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env "${envs[@]}" "$HR" $P --json "$T/$name.json" --output "$T/$name.raw" "$@" >"$T/$name.out" 2>&1 ||
    bad "$name: exit $? '$(cat "$T/$name.out")'"
}
run plain X=1 --
run var HETRELAX_CPU_BLOCK=3,nt --
run flag X=1 -- --cpu-block 3,nt
run knob X=1 -- --tuning cpu_block=3,nt
run wins HETRELAX_CPU_BLOCK=5,plain -- --cpu-block 3,nt

field() { # json expression
  /usr/bin/python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(json.dumps($2, sort_keys=True))" "$1"
}
[ "$(field "$T/plain.json" "j['tuning']['cpu_block']")" = 0 ] && ok || bad "plain run records cpu_block $(field "$T/plain.json" "j['tuning']['cpu_block']")"
[ "$(field "$T/plain.json" "j['shape'][1]")" != 3 ] || bad "the default picks 3 rows: the test cannot tell the knob"
for n in var flag knob wins; do
  [ "$(field "$T/$n.json" "[j['tuning']['cpu_block'], j['tuning']['cpu_block_stream']]")" = "[3, 1]" ] && ok ||
    bad "$n: tuning $(field "$T/$n.json" "j['tuning']")"
  [ "$(field "$T/$n.json" "[j['shape'][1], j['shape_source']]")" = '[3, "env+nt"]' ] && ok ||
    bad "$n: shape $(field "$T/$n.json" "[j['shape'], j['shape_source']]")"
  # the whole record of knobs, however they were given
  [ "$(field "$T/$n.json" "j['tuning']")" = "$(field "$T/var.json" "j['tuning']")" ] && ok ||
    bad "$n: tuning record differs from the variable's"
  cmp -s "$T/$n.raw" "$T/plain.raw" && ok || bad "$n: the solution differs (the knob must not change it)"
done

# info: the knobs in effect, by variable and by flag, in text and JSON
HETRELAX_CPU_BLOCK=3,nt "$HR" info --no-bandwidth >"$T/info.txt" 2>&1
grep -q "^tuning .*cpu_block=3 cpu_block_stream=1" "$T/info.txt" && ok || bad "info: '$(grep tuning "$T/info.txt")'"
"$HR" info --no-bandwidth >"$T/info0.txt" 2>&1
grep -q "^tuning .*cpu_block=" "$T/info0.txt" && bad "info lists cpu_block without it" || ok
for how in var flag; do
  if [ $how = var ]; then
    HETRELAX_CPU_BLOCK=3,nt "$HR" info --no-bandwidth --json "$T/info-$how.json" >/dev/null 2>&1
  else
    "$HR" info --no-bandwidth --tuning cpu_block=3,nt --json "$T/info-$how.json" >/dev/null 2>&1
  fi
  [ "$(field "$T/info-$how.json" "[j['tuning']['cpu_block']['value'], j['tuning']['cpu_block']['set'], j['tuning']['cpu_block']['variable']]")" = '[3, true, "HETRELAX_CPU_BLOCK"]' ] &&
    ok || bad "info --json ($how): $(field "$T/info-$how.json" "j['tuning']['cpu_block']")"
done
"$HR" info --list-tuning >"$T/list.txt" 2>&1
# every knob of the run's record is listed, with its variable where it has one
for k in $(field "$T/var.json" "sorted(j['tuning'])" | tr -d '[],"'); do
  grep -qE "^  $k " "$T/list.txt" && ok || bad "info --list-tuning lacks $k"
done
grep -qE "^  crew_pin .*HETRELAX_CREW_PIN" "$T/list.txt" && ok || bad "info --list-tuning: crew_pin without its variable"
# ... and documented, each with its variable
/usr/bin/python3 - "$T/info-var.json" "$DOC" >"$T/doc.txt" <<'PY'
import json, sys
knobs = json.load(open(sys.argv[1]))["tuning"]
doc = open(sys.argv[2]).read().splitlines()
for name, k in knobs.items():
    rows = [l for l in doc if l.startswith("| `%s` |" % name)]
    if len(rows) != 1:
        print("docs: %d rows for %s" % (len(rows), name))
    elif k["variable"] and "`%s`" % k["variable"] not in rows[0]:
        print("docs: %s without %s" % (name, k["variable"]))
PY
[ -s "$T/doc.txt" ] && bad "$(cat "$T/doc.txt")" || ok

# bad values: one line naming the variable or the flag, exit 2, nothing ran
HETRELAX_RB_TILE=zz "$HR" $P >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "hetrelax poisson3d: HETRELAX_RB_TILE: 'zz'" "$T/err" && ok ||
  bad "bad variable: exit $rc '$(cat "$T/err")'"
expect_usage "hetrelax poisson3d: --tuning: 'no_such': no such knob" $P --tuning no_such=1
expect_usage "hetrelax poisson3d: --cpu-block: " $P --cpu-block 0
expect_usage "hetrelax poisson3d: --tuning: " $P --tuning crew_pieces=65

echo "cli_tuning: $passes passed, $fails failed"
[ $fails -eq 0 ]
