#!/usr/bin/env python3
"""Turns the multigrid GPU sources into plain C++ for the sequential CPU emulation
(tests/methods/mg/emu, test_mg_gpu_emulated): every `kernel<<<grid, block, 0, stream>>>(args);`
becomes `emu_launch(grid, block, [=]() { kernel(args); });` (the one-block kernel with a
single thread: it runs its operators in order), and the block reduction becomes a
sequential sum or maximum (the emulator runs a block's threads one after the other, highest first).

usage: convert.py OUTDIR FILE.cu|FILE.cuh...  (.cu -> OUTDIR/NAME_emu.cpp, .cuh -> OUTDIR/methods/mg/cuda/NAME,
where the sources include them)
"""
import os
import re
import sys

LAUNCH = re.compile(r'([A-Za-z_]\w*(?:<[^<>;]*>)?)\s*<<<(.*?)>>>\((.*?)\);', re.S)


def launch(m):
    name, cfg, args = m.group(1), m.group(2), m.group(3)
    parts = [p.strip() for p in cfg.split(',')]
    # one thread: the one-block kernel runs its operators in order, the asynchronous
    # smoother its strided loops (correct with any block size; their barriers are no-ops here)
    block = '1' if any(k in name for k in ('mgg_small_kernel', 'mgg_async_kernel')) else parts[1]
    # the fused red-black march exchanges values between lanes: its lanes run as fibers in lock step
    how = 'emu_launch_warps' if 'rbw2' in name else 'emu_launch'
    return '%s(dim3(%s), dim3(%s), [=]() { %s(%s); });' % (how, parts[0], block, name, args)


def reduce_patch(s):
    i = s.find('template <int NT, bool MAX = false>\n__device__ __forceinline__ void mgg_block_reduce')
    if i < 0:
        return s
    j = s.index('\n}\n', i) + 3
    return s[:i] + '''template <int NT, bool MAX = false> inline void mgg_block_reduce(double v, double *sh, double *out)
{
    (void)sh;
    if (threadIdx.x == blockDim.x - 1) *out = MAX ? v : 0.0;
    *out = MAX ? mgg_nan_max(*out, v) : *out + v;
}
''' + s[j:]


def main():
    out = sys.argv[1]
    inc = os.path.join(out, 'methods', 'mg', 'cuda')
    os.makedirs(inc, exist_ok=True)
    for src in sys.argv[2:]:
        s = reduce_patch(LAUNCH.sub(launch, open(src).read()))
        base = os.path.basename(src)
        dst = os.path.join(out, base[:-3] + '_emu.cpp') if base.endswith('.cu') else os.path.join(inc, base)
        with open(dst, 'w') as f:
            f.write(s)


if __name__ == '__main__':
    main()
