/*
 * A thread's subnormal handling: flush to zero, of results and of inputs (x86-64: MXCSR's FTZ
 * and DAZ bits; aarch64: FPCR.FZ, which does both). Subnormal operands and results take a slow
 * path on many CPUs (microcode assists), and the spreading front of a relaxation from a point
 * source is full of them in single precision.
 *
 * A solve with options.flush_subnormals sets the mode on the calling thread for its duration
 * and puts the caller's previous mode back afterwards; every thread team (team.c) and crew
 * (crew.c) copies the mode of the thread that starts a job into each worker before the job, so
 * all threads of a solve compute alike: cpu-threads stays bitwise cpu-seq either way.
 */
#ifndef HR_FPMODE_H
#define HR_FPMODE_H

#if defined(__x86_64__)
#include <pmmintrin.h> /* _MM_DENORMALS_ZERO_MASK */
#include <xmmintrin.h> /* _mm_getcsr, _mm_setcsr, _MM_FLUSH_ZERO_MASK */
#define HR_FP_FLUSH_BITS ((unsigned)(_MM_FLUSH_ZERO_MASK | _MM_DENORMALS_ZERO_MASK))

static inline unsigned hr_fp_mode(void)
{
    return _mm_getcsr() & HR_FP_FLUSH_BITS;
}

static inline void hr_fp_set_mode(unsigned m)
{
    /* _MM_SET_FLUSH_ZERO_MODE and _MM_SET_DENORMALS_ZERO_MODE in one write; the other bits
     * (rounding, exception masks and flags) stay as they are */
    _mm_setcsr((_mm_getcsr() & ~HR_FP_FLUSH_BITS) | (m & HR_FP_FLUSH_BITS));
}
#elif defined(__aarch64__)
#define HR_FP_FLUSH_BITS (1u << 24) /* FPCR.FZ */

static inline unsigned hr_fp_mode(void)
{
    unsigned long r;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(r)::"memory");
    return (unsigned)r & HR_FP_FLUSH_BITS;
}

static inline void hr_fp_set_mode(unsigned m)
{
    unsigned long r;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(r)::"memory");
    r = (r & ~(unsigned long)HR_FP_FLUSH_BITS) | (m & HR_FP_FLUSH_BITS);
    __asm__ __volatile__("msr fpcr, %0" ::"r"(r) : "memory");
}
#else
#define HR_FP_FLUSH_BITS 0u /* no switch known here: flush_subnormals is refused */

static inline unsigned hr_fp_mode(void)
{
    return 0u;
}

static inline void hr_fp_set_mode(unsigned m)
{
    (void)m;
}
#endif

/* Whether this build can flush subnormals (else options.flush_subnormals is refused). */
#define HR_FP_CAN_FLUSH (HR_FP_FLUSH_BITS != 0u)

/* Starts a stretch of work: flushes when `on`, and returns the mode to put back. */
static inline unsigned hr_fp_flush_begin(int on)
{
    const unsigned old = hr_fp_mode();
    if (on && old != HR_FP_FLUSH_BITS) hr_fp_set_mode(HR_FP_FLUSH_BITS);
    return old;
}

/* Ends it: the mode hr_fp_flush_begin found. */
static inline void hr_fp_flush_end(int on, unsigned old)
{
    if (on && old != HR_FP_FLUSH_BITS) hr_fp_set_mode(old);
}

/* A worker about to run a job started by a thread in mode m (its own mode changed only when
 * it differs). */
static inline void hr_fp_follow(unsigned m)
{
    if (hr_fp_mode() != m) hr_fp_set_mode(m);
}

#endif
