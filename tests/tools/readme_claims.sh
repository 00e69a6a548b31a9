#!/usr/bin/env bash
# The README claims only what runs. Every `hetrelax COMMAND` it shows
# exists, every --flag it shows for a command is in that command's --help, the quick start
# is the two commands `make run` and `make test`, and features that are not written yet are
# named only as such.
set -u
HR=$1
README=$2
python3 - "$HR" "$README" <<'PY'
import re, subprocess, sys
hr, readme = sys.argv[1], open(sys.argv[2]).read()
fails = []
helps = {}
def help_of(cmd):
    if cmd not in helps:
        p = subprocess.run([hr, cmd, "--help"], capture_output=True, text=True)
        helps[cmd] = p.stdout if p.returncode == 0 else None
    return helps[cmd]
# commands and their flags as shown in code (indented blocks, fenced blocks, `inline`)
code = "\n".join(re.findall(r"```.*?\n(.*?)```", readme, re.S)) + "\n" + "\n".join(re.findall(r"`([^`\n]+)`", readme))
code = code.replace("\\\n", " ")
for line in code.splitlines():
    for m in re.finditer(r"hetrelax ([a-z0-9]+)((?: +[^#\n]*)?)", line):
        cmd, rest = m.group(1), m.group(2)
        if cmd.startswith("-"): continue
        h = help_of(cmd)
        if h is None:
            fails.append(f"README shows 'hetrelax {cmd}', which is not a command")
            continue
        for flag in re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", rest):
            if flag not in h:
                fails.append(f"README shows 'hetrelax {cmd} ... {flag}', which {cmd} --help does not list")
# flags in the 'Useful flags' paragraph belong to poisson2d
useful = re.search(r"Useful flags:(.*?)Every bad", readme, re.S)
if useful:
    for flag in re.findall(r"(--[a-z][a-z0-9-]*)", useful.group(1)):
        if flag not in (help_of("poisson2d") or ""):
            fails.append(f"'Useful flags' lists {flag}, which poisson2d does not have")
# the quick start is exactly the two commands
qs = re.search(r"## Quick start.*?```\n(.*?)```", readme, re.S)
if not qs or qs.group(1).split("\n")[:2] != ["make run", "make test"] or qs.group(1).strip().count("\n") != 1:
    fails.append("the quick start is not exactly 'make run' and 'make test'")
# nothing claimed that does not run yet (add a feature's name here while it is a plan)
for word in ():
    for m in re.finditer(word, readme):
        ctx = " ".join(readme[max(0, m.start() - 200):m.end() + 200].split())
        if "not written yet" not in ctx and "not yet" not in ctx:
            fails.append(f"README claims {word}: ...{readme[max(0, m.start() - 60):m.end() + 40]!r}...")
for f in fails: print("FAIL:", f)
print(f"{len(fails)} failures")
sys.exit(1 if fails else 0)
PY
