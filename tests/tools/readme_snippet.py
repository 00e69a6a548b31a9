#!/usr/bin/env python3
"""Writes one of the README's library snippets (the ```c blocks, counted from 0) as a C
program: its #include lines first, the rest as the body of main. The tests readme_snippet*
compile and run each as written.

usage: readme_snippet.py README.md OUT.c [BLOCK]
"""
import re
import sys

readme, out = sys.argv[1], sys.argv[2]
block = int(sys.argv[3]) if len(sys.argv) > 3 else 0
blocks = re.findall(r"```c\n(.*?)```", open(readme).read(), re.S)
if len(blocks) <= block:
    sys.exit("readme_snippet: README.md has no ```c block %d" % block)
lines = blocks[block].splitlines()
includes = [l for l in lines if l.startswith("#include")]
body = [l for l in lines if not l.startswith("#include")]
with open(out, "w") as f:
    f.write("/* generated from README.md by tests/tools/readme_snippet.py */\n")
    f.write("\n".join(includes) + "\n\nint main(void)\n{\n")
    f.write("\n".join("    " + l if l else "" for l in body) + "\n    return 0;\n}\n")
