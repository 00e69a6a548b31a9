/* The non-blocking worker crew of crew.h. */
#include "runtime/cpu/crew.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/timer.h"
#include "runtime/cpu/fpmode.h"
#include "runtime/cpu/team.h"
#include "runtime/cpu/threadstat.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HR_RELAX() _mm_pause()
#else
#define HR_RELAX() ((void)0)
#endif

/* How long a worker or the waiter spins before sleeping: tuning.crew_spin_us microseconds
 * (default 200 unpinned: a sweep's exchange fits; 50 ms pinned: longer than any sweep's
 * wait for the other part, so a running split never sleeps; < 0 sleeps at once, for shared
 * machines). */
static double spin_budget(const hr_tuning *tu, int pinned)
{
    const double knob = tu ? tu->crew_spin_us : 0.0;
    const double us = knob != 0.0 ? knob : pinned ? 50000.0 : 200.0;
    return us > 0.0 ? us * 1e-6 : 0.0;
}

/* The slots: the allowed logical CPUs, the first hardware thread of every core first,
 * then the other siblings (a VM may list both threads of a core). */
static int slot_cpu[CPU_SETSIZE], slot_count;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;

static void find_slots(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return;
    for (int pass = 0; pass < 2; pass++)
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set) && hri_cpu_first_sibling(c) == (pass == 0)) slot_cpu[slot_count++] = c;
}

int hri_crew_slots(void)
{
    pthread_once(&slot_once, find_slots);
    return slot_count;
}

int hri_crew_slot_cpu(int slot)
{
    return slot >= 0 && slot < hri_crew_slots() ? slot_cpu[slot] : -1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Spins until cond() holds or the budget is spent; returns whether it holds. Every 1024 pauses
 * (tens of microseconds) it yields: a thread the OS put on this CPU next to a spinning worker
 * (the host thread that drives the GPU: 53 ms of run delay in one traced engine) runs at
 * once instead of after the spinner's time slice. */
#define SPIN_UNTIL(c, cond)                                                                                  \
    do {                                                                                                     \
        const double spin_end_ = now_s() + (c)->spin;                                                        \
        for (unsigned spin_i_ = 1; !(cond); spin_i_++) {                                                     \
            HR_RELAX();                                                                                      \
            if ((spin_i_ & 63u) == 0 && now_s() > spin_end_) break;                                          \
            if ((spin_i_ & 1023u) == 0) sched_yield();                                                       \
        }                                                                                                    \
    } while (0)

/* A worker's trace (tuning.split_trace): written by the worker, read after its job or its exit. */
typedef struct worker_trace {
    double end;              /* when its last job ended */
    double lat_sum, lat_max; /* from hri_crew_start to the job's start on this worker */
    double run_sum, run_max;
    double cpu_sum; /* its thread CPU time in jobs (wall time less CPU time: the vCPU was taken) */
    long late;      /* jobs it started more than 0.5 ms late */
    long last;      /* jobs it ended last (written by the starting thread) */
    hr_thread_stat at_start, total;
} worker_trace;

typedef struct crew_worker {
    hr_crew *c;
    pthread_t th;
    int id;
    worker_trace tr;
} crew_worker;

/* The group of the pinned crew that started a job last: a pinned crew of another group stops
 * spinning at once (two engines alive at once, e.g. a benchmark's head to head, would
 * otherwise spin on the same cores for 50 ms after each of their jobs). */
static atomic_uintptr_t last_group;

/* A worker's counter of its own pieces in the current job: the job's tag (its generation) in
 * the high 32 bits, the next piece in the low; one cache line each. */
typedef struct piece_counter {
    _Alignas(64) atomic_uint_fast64_t next;
} piece_counter;

struct hr_crew {
    int n;
    int pinned;
    int steal;              /* idle workers take the pieces of late ones (tuning.crew_steal off: not) */
    atomic_uintptr_t group; /* this crew, or the crew it shares its placement with (hri_crew_share) */
    double spin;            /* seconds to spin before sleeping (read-only after create) */
    atomic_ulong gen;       /* bumped per job */
    atomic_int sleepers;    /* workers blocked on `go` */
    atomic_int quit;
    _Atomic(hr_crew_fn) fn; /* the job: read by a worker before it claims a piece, which */
    _Atomic(void *) ctx;    /* succeeds only while the job is not done (these stay put) */
    atomic_int per;         /* pieces per worker */
    atomic_uint fpmode;     /* the subnormal mode of the thread that started the job (fpmode.h) */
    atomic_long total;      /* pieces in the job (n * per) */
    atomic_long done;       /* pieces done */
    piece_counter *own;     /* per worker */
    int tracing;            /* tuning.split_trace given (and opened) */
    FILE *trace;            /* that file */
    int first_cpu;          /* pinned: the first worker's logical CPU */
    double started;         /* the current job's start (tracing) */
    long jobs, slow_jobs;   /* jobs; jobs that took over 1 ms from start to the last worker's end */
    double job_sum, job_max;
    pthread_mutex_t lock;
    pthread_cond_t go, done_cv;
    crew_worker *w;
};

static void trace_job(worker_trace *t, double lat, double t0, double c0)
{
    t->cpu_sum += hri_thread_cpu_s() - c0;
    t->end = hr_now();
    const double run = t->end - t0;
    t->lat_sum += lat;
    t->run_sum += run;
    if (lat > t->lat_max) t->lat_max = lat;
    if (run > t->run_max) t->run_max = run;
    t->late += lat > 5e-4;
}

/* The job just waited for: from its start to the last worker's end. */
static void trace_done_job(hr_crew *c)
{
    double end = c->started;
    int last = 0;
    for (int i = 0; i < c->n; i++)
        if (c->w[i].tr.end > end) {
            end = c->w[i].tr.end;
            last = i;
        }
    c->w[last].tr.last++;
    const double d = end - c->started;
    c->jobs++;
    c->job_sum += d;
    if (d > c->job_max) c->job_max = d;
    c->slow_jobs += d > 1e-3;
}

/* Claims the next piece of worker `owner`'s share of the job tagged `tag`; -1 when none is left
 * (or the job is no longer that one). */
static long claim(hr_crew *c, int owner, uint32_t tag, int per)
{
    atomic_uint_fast64_t *a = &c->own[owner].next;
    uint_fast64_t v = atomic_load_explicit(a, memory_order_acquire);
    while ((uint32_t)(v >> 32) == tag && (long)(v & 0xffffffffu) < per)
        if (atomic_compare_exchange_weak_explicit(a, &v, v + 1, memory_order_acq_rel, memory_order_acquire))
            return (long)owner * per + (long)(v & 0xffffffffu);
    return -1;
}

/* Worker `id`'s part of the job tagged `tag`: its own pieces in order, then (stealing) those its
 * neighbours have not started. The worker that finishes the job's last piece wakes a sleeping
 * waiter. */
static void work(hr_crew *c, int id, uint32_t tag)
{
    const hr_crew_fn fn = atomic_load_explicit(&c->fn, memory_order_relaxed);
    void *ctx = atomic_load_explicit(&c->ctx, memory_order_relaxed);
    const int per = atomic_load_explicit(&c->per, memory_order_relaxed);
    const int pieces = c->n * per;
    hr_fp_follow(atomic_load_explicit(&c->fpmode, memory_order_relaxed));
    /* read before any claim: once this job's last piece is done the starter may set the next */
    const long total = atomic_load_explicit(&c->total, memory_order_relaxed);
    for (int k = 0; k < c->n && (k == 0 || c->steal); k++) {
        const int owner = (id + k) % c->n;
        for (long piece; (piece = claim(c, owner, tag, per)) >= 0;) {
            fn(ctx, (int)piece, pieces);
            if (atomic_fetch_add_explicit(&c->done, 1, memory_order_acq_rel) + 1 == total) {
                pthread_mutex_lock(&c->lock);
                pthread_cond_broadcast(&c->done_cv);
                pthread_mutex_unlock(&c->lock);
            }
        }
    }
}

static void *crew_main(void *arg)
{
    crew_worker *w = arg;
    hr_crew *c = w->c;
    unsigned long seen = 0;
    if (c->tracing) hri_thread_stat_now(&w->tr.at_start);
    for (;;) {
        SPIN_UNTIL(c, atomic_load(&c->gen) != seen || atomic_load(&c->quit) ||
                          (c->pinned && atomic_load(&last_group) != atomic_load(&c->group)));
        if (atomic_load(&c->gen) == seen && !atomic_load(&c->quit)) {
            pthread_mutex_lock(&c->lock);
            atomic_fetch_add(&c->sleepers, 1);
            while (atomic_load(&c->gen) == seen && !atomic_load(&c->quit))
                pthread_cond_wait(&c->go, &c->lock);
            atomic_fetch_sub(&c->sleepers, 1);
            pthread_mutex_unlock(&c->lock);
        }
        if (atomic_load(&c->quit)) {
            if (c->tracing) {
                hr_thread_stat now;
                hri_thread_stat_now(&now);
                w->tr.total = hri_thread_stat_diff(&w->tr.at_start, &now);
            }
            return NULL;
        }
        seen = atomic_load(&c->gen);
        if (c->tracing) {
            const double t0 = hr_now(), c0 = hri_thread_cpu_s();
            work(c, w->id, (uint32_t)seen);
            trace_job(&w->tr, t0 - c->started, t0, c0);
        } else {
            work(c, w->id, (uint32_t)seen);
        }
    }
}

hr_status hri_crew_create(int nthreads, int first_slot, const hr_tuning *tu, hr_crew **out)
{
    *out = NULL;
    if (nthreads < 1 || nthreads > 4096) return HR_ERR_INVALID_ARG;
    hr_crew *c = calloc(1, sizeof *c);
    if (!c) return HR_ERR_NO_MEMORY;
    c->pinned = first_slot >= 0 && first_slot + nthreads <= hri_crew_slots() && !(tu && tu->crew_pin < 0);
    c->spin = spin_budget(tu, c->pinned);
    c->trace = hri_trace_file(tu ? tu->split_trace : NULL);
    c->tracing = c->trace != NULL;
    c->first_cpu = c->pinned ? slot_cpu[first_slot] : -1;
    atomic_init(&c->group, (uintptr_t)c);
    c->steal = !(tu && tu->crew_steal < 0);
    c->w = calloc((size_t)nthreads, sizeof *c->w);
    c->own = aligned_alloc(64, (size_t)nthreads * sizeof *c->own);
    if (!c->w || !c->own) {
        free(c->w);
        free(c->own);
        free(c);
        return HR_ERR_NO_MEMORY;
    }
    for (int i = 0; i < nthreads; i++)
        atomic_init(&c->own[i].next, 0);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->go, NULL);
    pthread_cond_init(&c->done_cv, NULL);
    for (int i = 0; i < nthreads; i++) {
        c->w[i] = (crew_worker){.c = c, .id = i};
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        if (c->pinned) { /* started on its CPU: its pages and caches are there from the first sweep */
            cpu_set_t set;
            CPU_ZERO(&set);
            CPU_SET(slot_cpu[first_slot + i], &set);
            pthread_attr_setaffinity_np(&attr, sizeof set, &set);
        }
        const int rc = pthread_create(&c->w[i].th, &attr, crew_main, &c->w[i]);
        pthread_attr_destroy(&attr);
        if (rc != 0) {
            c->n = i;
            hri_crew_free(c);
            return HR_ERR_NO_MEMORY;
        }
        c->n = i + 1;
    }
    *out = c;
    return HR_OK;
}

int hri_crew_size(const hr_crew *c)
{
    return c->n;
}

int hri_crew_pinned(const hr_crew *c)
{
    return c->pinned;
}

void hri_crew_share(hr_crew *c, const hr_crew *with)
{
    atomic_store(&c->group, atomic_load(&((hr_crew *)with)->group));
}

static int job_done(hr_crew *c)
{
    return atomic_load_explicit(&c->done, memory_order_acquire) ==
           atomic_load_explicit(&c->total, memory_order_relaxed);
}

void hri_crew_wait(hr_crew *c)
{
    SPIN_UNTIL(c, job_done(c));
    if (job_done(c)) return;
    pthread_mutex_lock(&c->lock);
    while (!job_done(c))
        pthread_cond_wait(&c->done_cv, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

void hri_crew_start(hr_crew *c, hr_crew_fn fn, void *ctx, int per_worker)
{
    hri_crew_wait(c);
    if (c->tracing) {
        if (c->started > 0) trace_done_job(c);
        c->started = hr_now();
    }
    if (per_worker < 1) per_worker = 1;
    const unsigned long gen = atomic_load(&c->gen) + 1;
    atomic_store_explicit(&c->fn, fn, memory_order_relaxed);
    atomic_store_explicit(&c->ctx, ctx, memory_order_relaxed);
    atomic_store_explicit(&c->per, per_worker, memory_order_relaxed);
    atomic_store_explicit(&c->fpmode, hr_fp_mode(), memory_order_relaxed);
    atomic_store_explicit(&c->total, (long)c->n * per_worker, memory_order_relaxed);
    atomic_store_explicit(&c->done, 0, memory_order_relaxed);
    for (int i = 0; i < c->n; i++) /* every counter tagged with the new job, at its first piece */
        atomic_store_explicit(&c->own[i].next, (uint_fast64_t)(uint32_t)gen << 32, memory_order_relaxed);
    if (c->pinned) atomic_store(&last_group, atomic_load(&c->group));
    atomic_store(&c->gen, gen); /* seq_cst: publishes the job; pairs with the sleepers count */
    if (atomic_load(&c->sleepers) > 0) {
        pthread_mutex_lock(&c->lock);
        pthread_cond_broadcast(&c->go);
        pthread_mutex_unlock(&c->lock);
    }
}

/* One JSON line per crew: its jobs, and per worker the start latency, run time and what the
 * scheduler did (run delay, preemptions, the CPU it ended on). */
static void write_trace(const hr_crew *c)
{
    FILE *f = c->trace;
    hri_trace_lock();
    fprintf(
        f,
        "{\"crew\": \"%p\", \"group\": \"%p\", \"n\": %d, \"pinned\": %d, \"first_cpu\": %d, \"jobs\": %ld, "
        "\"job_mean_us\": %.2f, \"job_max_us\": %.1f, \"jobs_over_1ms\": %ld",
        (const void *)c, (const void *)atomic_load(&((hr_crew *)c)->group), c->n, c->pinned, c->first_cpu,
        c->jobs, c->jobs ? 1e6 * c->job_sum / (double)c->jobs : 0.0, 1e6 * c->job_max, c->slow_jobs);
#define W_ARRAY(name, fmt, expr)                                                                             \
    do {                                                                                                     \
        fprintf(f, ", \"" name "\": [");                                                                     \
        for (int i = 0; i < c->n; i++) {                                                                     \
            const worker_trace *t = &c->w[i].tr;                                                             \
            (void)t;                                                                                         \
            fprintf(f, i ? ", " fmt : fmt, expr);                                                            \
        }                                                                                                    \
        fprintf(f, "]");                                                                                     \
    } while (0)
    const double jobs = c->jobs > 0 ? (double)c->jobs : 1.0;
    W_ARRAY("lat_mean_us", "%.1f", 1e6 * t->lat_sum / jobs);
    W_ARRAY("lat_max_us", "%.0f", 1e6 * t->lat_max);
    W_ARRAY("late", "%ld", t->late);
    W_ARRAY("run_mean_us", "%.1f", 1e6 * t->run_sum / jobs);
    W_ARRAY("run_max_us", "%.0f", 1e6 * t->run_max);
    W_ARRAY("run_cpu_mean_us", "%.1f", 1e6 * t->cpu_sum / jobs);
    W_ARRAY("last", "%ld", t->last);
    W_ARRAY("delay_ms", "%.2f", 1e3 * t->total.delay_s);
    W_ARRAY("cpu_ms", "%.1f", 1e3 * t->total.run_s);
    W_ARRAY("preempted", "%ld", t->total.preempted);
    W_ARRAY("slept", "%ld", t->total.voluntary);
    W_ARRAY("cpu", "%d", t->total.cpu);
#undef W_ARRAY
    fprintf(f, "}\n");
    hri_trace_unlock();
}

void hri_crew_free(hr_crew *c)
{
    if (!c) return;
    hri_crew_wait(c);
    pthread_mutex_lock(&c->lock);
    atomic_store(&c->quit, 1);
    pthread_cond_broadcast(&c->go);
    pthread_mutex_unlock(&c->lock);
    for (int i = 0; i < c->n; i++)
        pthread_join(c->w[i].th, NULL);
    if (c->tracing) {
        if (c->started > 0) trace_done_job(c);
        write_trace(c);
    }
    pthread_cond_destroy(&c->go);
    pthread_cond_destroy(&c->done_cv);
    pthread_mutex_destroy(&c->lock);
    free(c->w);
    free(c->own);
    free(c);
}
