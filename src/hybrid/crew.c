/* The non-blocking worker crew of crew.h. */
#include "hybrid/crew.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/threadstat.h"
#include "common/timer.h"
#include "cpu/team.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HR_RELAX() _mm_pause()
#else
#define HR_RELAX() ((void)0)
#endif

/* How long a worker or the waiter spins before sleeping: HETRELAX_CREW_SPIN_US
 * microseconds (default 200 unpinned: a sweep's exchange fits; 50 ms pinned: longer than
 * any sweep's wait for the other part, so a running split never sleeps; 0 sleeps at
 * once, for shared machines). */
static double spin_budget(int pinned)
{
    const char *e = getenv("HETRELAX_CREW_SPIN_US");
    const double us = e && *e ? atof(e) : pinned ? 50000.0 : 200.0;
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
            if (CPU_ISSET(c, &set) && hr_cpu_first_sibling(c) == (pass == 0)) slot_cpu[slot_count++] = c;
}

int hr_crew_slots(void)
{
    pthread_once(&slot_once, find_slots);
    return slot_count;
}

int hr_crew_slot_cpu(int slot)
{
    return slot >= 0 && slot < hr_crew_slots() ? slot_cpu[slot] : -1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Spins until cond() holds or the budget is spent; returns whether it holds. */
#define SPIN_UNTIL(c, cond)                                                                                  \
    do {                                                                                                     \
        const double spin_end_ = now_s() + (c)->spin;                                                        \
        for (unsigned spin_i_ = 1; !(cond); spin_i_++) {                                                     \
            HR_RELAX();                                                                                      \
            if ((spin_i_ & 63u) == 0 && now_s() > spin_end_) break;                                          \
        }                                                                                                    \
    } while (0)

/* A worker's trace (HETRELAX_SPLIT_TRACE): written by the worker, read after its job or its exit. */
typedef struct worker_trace {
    double end;             /* when its last job ended */
    double lat_sum, lat_max; /* from hr_crew_start to the job's start on this worker */
    double run_sum, run_max;
    long late;               /* jobs it started more than 0.5 ms late */
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

struct hr_crew {
    int n;
    int pinned;
    atomic_uintptr_t group; /* this crew, or the crew it shares its placement with (hr_crew_share) */
    double spin;            /* seconds to spin before sleeping (read-only after create) */
    atomic_ulong gen;       /* bumped per job */
    atomic_int pending;     /* workers still in the current job */
    atomic_int sleepers;    /* workers blocked on `go` */
    atomic_int quit;
    hr_crew_fn fn;
    void *ctx;
    int tracing;            /* HETRELAX_SPLIT_TRACE set */
    int first_cpu;          /* pinned: the first worker's logical CPU */
    double started;         /* the current job's start (tracing) */
    long jobs, slow_jobs;   /* jobs; jobs that took over 1 ms from start to the last worker's end */
    double job_sum, job_max;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    crew_worker *w;
};

static void trace_job(worker_trace *t, double lat, double t0)
{
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
    for (int i = 0; i < c->n; i++)
        if (c->w[i].tr.end > end) end = c->w[i].tr.end;
    const double d = end - c->started;
    c->jobs++;
    c->job_sum += d;
    if (d > c->job_max) c->job_max = d;
    c->slow_jobs += d > 1e-3;
}

static void *crew_main(void *arg)
{
    crew_worker *w = arg;
    hr_crew *c = w->c;
    unsigned long seen = 0;
    if (c->tracing) hr_thread_stat_now(&w->tr.at_start);
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
                hr_thread_stat_now(&now);
                w->tr.total = hr_thread_stat_diff(&w->tr.at_start, &now);
            }
            return NULL;
        }
        seen = atomic_load(&c->gen);
        if (c->tracing) {
            const double t0 = hr_now();
            c->fn(c->ctx, w->id, c->n);
            trace_job(&w->tr, t0 - c->started, t0);
        } else {
            c->fn(c->ctx, w->id, c->n);
        }
        if (atomic_fetch_sub(&c->pending, 1) == 1) {
            pthread_mutex_lock(&c->lock);
            pthread_cond_broadcast(&c->done);
            pthread_mutex_unlock(&c->lock);
        }
    }
}

hr_status hr_crew_create(int nthreads, int first_slot, hr_crew **out)
{
    *out = NULL;
    if (nthreads < 1 || nthreads > 4096) return HR_ERR_INVALID_ARG;
    hr_crew *c = calloc(1, sizeof *c);
    if (!c) return HR_ERR_NO_MEMORY;
    const char *pin = getenv("HETRELAX_CREW_PIN");
    c->pinned =
        first_slot >= 0 && first_slot + nthreads <= hr_crew_slots() && !(pin && strcmp(pin, "0") == 0);
    c->spin = spin_budget(c->pinned);
    c->tracing = hr_trace_file() != NULL;
    c->first_cpu = c->pinned ? slot_cpu[first_slot] : -1;
    atomic_init(&c->group, (uintptr_t)c);
    c->w = calloc((size_t)nthreads, sizeof *c->w);
    if (!c->w) {
        free(c);
        return HR_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->go, NULL);
    pthread_cond_init(&c->done, NULL);
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
            hr_crew_free(c);
            return HR_ERR_NO_MEMORY;
        }
        c->n = i + 1;
    }
    *out = c;
    return HR_OK;
}

int hr_crew_size(const hr_crew *c)
{
    return c->n;
}

int hr_crew_pinned(const hr_crew *c)
{
    return c->pinned;
}

void hr_crew_share(hr_crew *c, const hr_crew *with)
{
    atomic_store(&c->group, atomic_load(&((hr_crew *)with)->group));
}

void hr_crew_wait(hr_crew *c)
{
    SPIN_UNTIL(c, atomic_load(&c->pending) == 0);
    if (atomic_load(&c->pending) == 0) return;
    pthread_mutex_lock(&c->lock);
    while (atomic_load(&c->pending) > 0)
        pthread_cond_wait(&c->done, &c->lock);
    pthread_mutex_unlock(&c->lock);
}

void hr_crew_start(hr_crew *c, hr_crew_fn fn, void *ctx)
{
    hr_crew_wait(c);
    if (c->tracing) {
        if (c->started > 0) trace_done_job(c);
        c->started = hr_now();
    }
    c->fn = fn;
    c->ctx = ctx;
    atomic_store(&c->pending, c->n);
    if (c->pinned) atomic_store(&last_group, atomic_load(&c->group));
    atomic_fetch_add(&c->gen, 1); /* seq_cst: pairs with the sleepers count (no lost wake-up) */
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
    FILE *f = hr_trace_file();
    hr_trace_lock();
    fprintf(f,
            "{\"crew\": \"%p\", \"group\": \"%p\", \"n\": %d, \"pinned\": %d, \"first_cpu\": %d, \"jobs\": %ld, "
            "\"job_mean_us\": %.2f, \"job_max_us\": %.1f, \"jobs_over_1ms\": %ld",
            (const void *)c, (const void *)atomic_load(&((hr_crew *)c)->group), c->n, c->pinned, c->first_cpu,
            c->jobs, c->jobs ? 1e6 * c->job_sum / (double)c->jobs : 0.0, 1e6 * c->job_max, c->slow_jobs);
#define W_ARRAY(name, fmt, expr)                                                                             \
    do {                                                                                                     \
        fprintf(f, ", \"" name "\": [");                                                                      \
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
    W_ARRAY("delay_ms", "%.2f", 1e3 * t->total.delay_s);
    W_ARRAY("cpu_ms", "%.1f", 1e3 * t->total.run_s);
    W_ARRAY("preempted", "%ld", t->total.preempted);
    W_ARRAY("slept", "%ld", t->total.voluntary);
    W_ARRAY("cpu", "%d", t->total.cpu);
#undef W_ARRAY
    fprintf(f, "}\n");
    hr_trace_unlock();
}

void hr_crew_free(hr_crew *c)
{
    if (!c) return;
    hr_crew_wait(c);
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
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->lock);
    free(c->w);
    free(c);
}
