/*
 * What the scheduler did to the calling thread, for the split engine's trace
 * (tuning.split_trace): its CPU time, its time runnable but waiting for a CPU (run delay,
 * /proc/thread-self/schedstat), its context switches (getrusage RUSAGE_THREAD) and the CPU it
 * is on; and the whole machine's steal time (/proc/stat: a VM's vCPUs not running).
 */
#ifndef HR_THREADSTAT_H
#define HR_THREADSTAT_H

#include <stdio.h>

typedef struct hr_thread_stat {
    double run_s, delay_s;     /* on a CPU; runnable, waiting for one (-1: unknown) */
    long voluntary, preempted; /* context switches: blocked; taken off the CPU while runnable */
    int cpu;                   /* the logical CPU it is on now */
} hr_thread_stat;

/* The calling thread's CPU seconds so far (CLOCK_THREAD_CPUTIME_ID). */
double hri_thread_cpu_s(void);
/* The calling thread's involuntary context switches so far (the process's where the system
 * has no per-thread count). */
long hri_thread_preempted(void);
/* The calling thread's counters now. */
void hri_thread_stat_now(hr_thread_stat *s);
/* b - a, counters only (cpu: b's). */
hr_thread_stat hri_thread_stat_diff(const hr_thread_stat *a, const hr_thread_stat *b);
/* The machine's steal time so far (a VM's vCPUs not running), in seconds: *total summed over
 * CPUs (-1: unknown), per_cpu[c] for the first `max` logical CPUs; returns how many were read.
 * One read of /proc/stat. */
int hri_steal(double *total, double *per_cpu, int max);

/* The trace file at `path` (hr_tuning.split_trace; opened for append once per path and kept
 * open; NULL for a NULL or empty path, or one that cannot be opened). Writers hold
 * hri_trace_lock while they write a line. */
FILE *hri_trace_file(const char *path);
void hri_trace_lock(void);
void hri_trace_unlock(void);

#endif
