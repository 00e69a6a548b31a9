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

typedef struct crew_worker {
    hr_crew *c;
    pthread_t th;
    int id;
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
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    crew_worker *w;
};

static void *crew_main(void *arg)
{
    crew_worker *w = arg;
    hr_crew *c = w->c;
    unsigned long seen = 0;
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
        if (atomic_load(&c->quit)) return NULL;
        seen = atomic_load(&c->gen);
        c->fn(c->ctx, w->id, c->n);
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
        c->w[i] = (crew_worker){c, 0, i};
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
    pthread_cond_destroy(&c->go);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->lock);
    free(c->w);
    free(c);
}
