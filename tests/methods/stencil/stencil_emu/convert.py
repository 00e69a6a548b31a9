#!/usr/bin/env python3
"""Turns the general-problem engine's CUDA sources (src/methods/stencil/cuda) into plain C++
for the host emulation (tests/methods/stencil/stencil_emu/cuda_runtime.h, test_gpu_general_emulated):
every `kernel<<<grid, block, smem, stream>>>(args);` becomes a block statement that hands
the emulator the launch site, the configuration and `[=]() { kernel(args); }`.

usage: convert.py OUTDIR FILE.cu|FILE.cuh...  (.cu -> OUTDIR/NAME_emu.cpp,
.cuh -> OUTDIR/methods/stencil/cuda/NAME, where the sources include them)
"""
import os
import re
import sys

LAUNCH = re.compile(r'([A-Za-z_]\w*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\((.*?)\);', re.S)


def split_top(s):
    """Splits at the commas outside parentheses."""
    out, depth, cur = [], 0, ''
    for c in s:
        if c == ',' and depth == 0:
            out.append(cur.strip())
            cur = ''
            continue
        depth += c == '('
        depth -= c == ')'
        cur += c
    out.append(cur.strip())
    return out


def launch(m):
    name, cfg, args = m.group(1), split_top(m.group(2)), m.group(3)
    # one static site per launch (per template instance): whether its kernel synchronises
    return ('{ static emu_site emu_site_; emu_launch(emu_site_, dim3(%s), dim3(%s), [=]() { %s(%s); }); }'
            % (cfg[0], cfg[1], name, args))


def main():
    out = sys.argv[1]
    inc = os.path.join(out, 'methods', 'stencil', 'cuda')
    os.makedirs(inc, exist_ok=True)
    for src in sys.argv[2:]:
        text = open(src).read()
        s, n = LAUNCH.subn(launch, text)
        if '<<<' in s:
            sys.exit('convert.py: a launch in %s was not rewritten' % src)
        base = os.path.basename(src)
        dst = os.path.join(out, base[:-3] + '_emu.cpp') if base.endswith('.cu') else os.path.join(inc, base)
        with open(dst, 'w') as f:
            f.write(s)


if __name__ == '__main__':
    main()
