#!/usr/bin/env python3
"""Writes the README's library snippet (the ```c block) as a C program: its #include lines
first, the rest as the body of main. The test readme_snippet compiles and runs it as written.

usage: readme_snippet.py README.md OUT.c
"""
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
m = re.search(r"```c\n(.*?)```", open(readme).read(), re.S)
if not m:
    sys.exit("readme_snippet: README.md has no ```c block")
lines = m.group(1).splitlines()
includes = [l for l in lines if l.startswith("#include")]
body = [l for l in lines if not l.startswith("#include")]
with open(out, "w") as f:
    f.write("/* generated from README.md by tests/tools/readme_snippet.py */\n")
    f.write("\n".join(includes) + "\n\nint main(void)\n{\n")
    f.write("\n".join("    " + l if l else "" for l in body) + "\n    return 0;\n}\n")
