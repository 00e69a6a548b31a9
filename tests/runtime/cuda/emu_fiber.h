/*
 * Fibers for the CUDA emulations (emu_warp.h, tests/methods/stencil/stencil_emu/cuda_runtime.h):
 * each GPU thread, or lane of a warp, runs on its own stack in one host thread and gives way
 * to the next at a barrier or a shuffle.
 *
 * A fiber starts through makecontext / setcontext. Every later switch goes through _setjmp /
 * _longjmp, which save and restore only the registers a call must keep: swapcontext also
 * saves and restores the signal mask, two system calls a switch, and the emulations switch
 * tens of millions of times. Where glibc's checked longjmp is in force (_FORTIFY_SOURCE: it
 * refuses a jump onto another stack), under a sanitizer (which follows swapcontext, not a jump
 * between stacks), or without glibc, every switch is a swapcontext: slower, the same runs.
 *
 *   emu_fiber_prepare(f, bytes, entry, arg)  f will run entry(arg) on a stack of its own;
 *                                            entry must end in emu_fiber_exit, never return
 *   emu_fiber_switch(from, to)               the running fiber `from` stops here; `to` runs
 *   emu_fiber_exit(to)                       the running fiber ends; `to` runs
 *
 * The host thread's own context is a fiber too (emu_fiber_host): it only needs to be marked
 * as running before its first switch.
 */
#ifndef HR_EMU_FIBER_H
#define HR_EMU_FIBER_H

#include <setjmp.h>
#include <ucontext.h>

#include <cstdlib>
#include <vector>

#ifndef EMU_FIBER_JUMPS /* -DEMU_FIBER_JUMPS=0: swapcontext everywhere */
#if defined(__GLIBC__) && !(defined(__USE_FORTIFY_LEVEL) && __USE_FORTIFY_LEVEL > 0) &&                      \
    !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define EMU_FIBER_JUMPS 1
#else
#define EMU_FIBER_JUMPS 0
#endif
#endif

struct emu_fiber {
    ucontext_t uc; /* its start (and, without the jumps, every switch) */
    jmp_buf jb;    /* where it stopped, once it has run */
    bool running = false;
    std::vector<char> stack;
};

inline void emu_fiber_host(emu_fiber &f)
{
    f.running = true;
}

inline void emu_fiber_prepare(emu_fiber &f, size_t bytes, void (*entry)(int), int arg)
{
    if (f.stack.size() != bytes) {
        f.stack.assign(bytes, 0);
        getcontext(&f.uc); /* once: makecontext may start from the context it made before */
    }
    f.uc.uc_stack.ss_sp = f.stack.data();
    f.uc.uc_stack.ss_size = f.stack.size();
    f.uc.uc_link = nullptr;
    makecontext(&f.uc, (void (*)())entry, 1, arg);
    f.running = false;
}

[[noreturn]] inline void emu_fiber_resume(emu_fiber &to)
{
#if EMU_FIBER_JUMPS
    if (to.running) _longjmp(to.jb, 1);
#endif
    to.running = true;
    setcontext(&to.uc);
    abort(); /* setcontext returns only on failure */
}

inline void emu_fiber_switch(emu_fiber &from, emu_fiber &to)
{
#if EMU_FIBER_JUMPS
    if (!_setjmp(from.jb)) emu_fiber_resume(to);
#else
    to.running = true;
    swapcontext(&from.uc, &to.uc);
#endif
}

[[noreturn]] inline void emu_fiber_exit(emu_fiber &to)
{
    emu_fiber_resume(to);
}

#endif
