#include "runtime/cpu/team.h"

#include "runtime/cpu/fpmode.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#ifdef HR_HAVE_HWLOC
#include <hwloc.h>
#endif

typedef struct hr_worker {
    hr_team *team;
    pthread_t thread;
    int id;
} hr_worker;

struct hr_team {
    int n;
    hr_bind bind;
    pthread_mutex_t lock;
    pthread_cond_t go, done;
    unsigned long generation; /* bumped for every job */
    int pending;              /* workers still running the current job */
    int quit;
    hr_team_fn fn;
    void *ctx;
    unsigned fpmode; /* the subnormal mode of the thread that started the job (fpmode.h) */
    pthread_barrier_t barrier;
    hr_worker *workers;
    int *cpus, ncpus; /* without hwloc: one allowed logical CPU per core, in order */
#ifdef HR_HAVE_HWLOC
    hwloc_topology_t topo;
#endif
};

int hri_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int hri_cpu_bound(void)
{
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 && hri_cpu_count() < online;
}

/* Is logical CPU c the first of its core's hardware threads (or is that unknown)? */
int hri_cpu_first_sibling(int c)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
    FILE *f = fopen(path, "r");
    if (!f) return 1;
    int first = c;
    if (fscanf(f, "%d", &first) != 1) first = c;
    fclose(f);
    return first == c;
}

#ifndef HR_HAVE_HWLOC

/* The CPUs a team binds to without hwloc: the process's allowed CPUs, one per core. */
static int allowed_cores(hr_team *t)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) return 0;
    t->cpus = malloc(sizeof(int) * CPU_SETSIZE);
    if (!t->cpus) return 0;
    t->ncpus = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set) && hri_cpu_first_sibling(c)) t->cpus[t->ncpus++] = c;
    if (t->ncpus == 0) /* siblings outside the allowed set: take every allowed CPU */
        for (int c = 0; c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set)) t->cpus[t->ncpus++] = c;
    return t->ncpus > 0;
}
#endif

static size_t cache_from_sysfs(int level)
{
    /* cpu0's caches: index2 is usually L2, index3 L3; match on "level" */
    for (int idx = 0; idx < 8; idx++) {
        char path[128];
        int lv = 0;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", idx);
        FILE *f = fopen(path, "r");
        if (!f) break;
        int ok = fscanf(f, "%d", &lv) == 1;
        fclose(f);
        if (!ok || lv != level) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", idx);
        f = fopen(path, "r");
        if (!f) continue;
        unsigned long v = 0;
        char unit = 0;
        ok = fscanf(f, "%lu%c", &v, &unit) >= 1;
        fclose(f);
        if (!ok) continue;
        return (size_t)v * (unit == 'K' ? 1024u : unit == 'M' ? 1048576u : 1u);
    }
    return 0;
}

size_t hri_cache_llc_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    v = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    if (v > 0) return (size_t)v;
    size_t s = cache_from_sysfs(3);
    return s ? s : cache_from_sysfs(2);
}

size_t hri_cache_l2_bytes(void)
{
    long v = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return v > 0 ? (size_t)v : cache_from_sysfs(2);
}

size_t hri_cache_llc_share(int threads)
{
    size_t llc = hri_cache_llc_bytes(), cap = (size_t)(threads > 0 ? threads : 1) << 22;
    if (llc == 0) llc = (size_t)32 << 20;
    return llc < cap ? llc : cap;
}

static void bind_worker(hr_team *t, int id)
{
    if (t->bind != HR_BIND_CORE) return;
#ifdef HR_HAVE_HWLOC
    int ncores = hwloc_get_nbobjs_by_type(t->topo, HWLOC_OBJ_CORE);
    if (ncores <= 0) return;
    hwloc_obj_t core = hwloc_get_obj_by_type(t->topo, HWLOC_OBJ_CORE, id % ncores);
    if (!core || !core->cpuset) return;
    hwloc_bitmap_t set = hwloc_bitmap_dup(core->cpuset);
    hwloc_bitmap_singlify(set); /* one PU of the core, so the thread does not migrate */
    hwloc_set_cpubind(t->topo, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
#else
    /* plain affinity: worker id on the id-th allowed core (wrapping when oversubscribed) */
    if (t->ncpus <= 0) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(t->cpus[id % t->ncpus], &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#endif
}

static void *worker_main(void *arg)
{
    hr_worker *w = arg;
    hr_team *t = w->team;
    bind_worker(t, w->id);
    unsigned long seen = 0;
    for (;;) {
        pthread_mutex_lock(&t->lock);
        while (t->generation == seen && !t->quit)
            pthread_cond_wait(&t->go, &t->lock);
        if (t->quit) {
            pthread_mutex_unlock(&t->lock);
            return NULL;
        }
        seen = t->generation;
        hr_team_fn fn = t->fn;
        void *ctx = t->ctx;
        const unsigned fpmode = t->fpmode;
        pthread_mutex_unlock(&t->lock);

        hr_fp_follow(fpmode);
        fn(ctx, w->id, t->n);

        pthread_mutex_lock(&t->lock);
        if (--t->pending == 0) pthread_cond_signal(&t->done);
        pthread_mutex_unlock(&t->lock);
    }
}

hr_status hri_team_create(int nthreads, hr_bind bind, hr_team **out)
{
    *out = NULL;
    if (nthreads < 1 || nthreads > 4096) return HR_ERR_INVALID_ARG;
    hr_team *t = calloc(1, sizeof *t);
    if (!t) return HR_ERR_NO_MEMORY;
    t->n = nthreads;
    t->bind = bind;
    t->workers = calloc((size_t)nthreads, sizeof *t->workers);
    if (!t->workers) {
        free(t);
        return HR_ERR_NO_MEMORY;
    }
#ifdef HR_HAVE_HWLOC
    if (hwloc_topology_init(&t->topo) != 0 || hwloc_topology_load(t->topo) != 0) {
        free(t->workers);
        free(t);
        return HR_ERR_INTERNAL;
    }
#else
    if (bind == HR_BIND_CORE && !allowed_cores(t)) {
        free(t->cpus);
        free(t->workers);
        free(t);
        return HR_ERR_UNSUPPORTED;
    }
#endif
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_cond_init(&t->done, NULL);
    pthread_barrier_init(&t->barrier, NULL, (unsigned)nthreads);
    for (int i = 0; i < nthreads; i++) {
        t->workers[i].team = t;
        t->workers[i].id = i;
        if (pthread_create(&t->workers[i].thread, NULL, worker_main, &t->workers[i]) != 0) {
            t->n = i; /* join only those started */
            hri_team_free(t);
            return HR_ERR_NO_MEMORY;
        }
    }
    *out = t;
    return HR_OK;
}

void hri_team_free(hr_team *t)
{
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->quit = 1;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->lock);
    for (int i = 0; i < t->n; i++)
        pthread_join(t->workers[i].thread, NULL);
    pthread_barrier_destroy(&t->barrier);
    pthread_cond_destroy(&t->go);
    pthread_cond_destroy(&t->done);
    pthread_mutex_destroy(&t->lock);
#ifdef HR_HAVE_HWLOC
    hwloc_topology_destroy(t->topo);
#endif
    free(t->cpus);
    free(t->workers);
    free(t);
}

int hri_team_size(const hr_team *t)
{
    return t->n;
}

void hri_team_run(hr_team *t, hr_team_fn fn, void *ctx)
{
    pthread_mutex_lock(&t->lock);
    t->fn = fn;
    t->ctx = ctx;
    t->fpmode = hr_fp_mode();
    t->pending = t->n;
    t->generation++;
    pthread_cond_broadcast(&t->go);
    while (t->pending > 0)
        pthread_cond_wait(&t->done, &t->lock);
    pthread_mutex_unlock(&t->lock);
}

void hri_team_barrier(hr_team *t)
{
    pthread_barrier_wait(&t->barrier);
}
