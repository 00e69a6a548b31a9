/* The scheduler counters of threadstat.h. */
#include "runtime/cpu/threadstat.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

double hri_thread_cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

long hri_thread_preempted(void)
{
    struct rusage ru;
#ifdef RUSAGE_THREAD
    if (getrusage(RUSAGE_THREAD, &ru) == 0) return ru.ru_nivcsw;
#else
    if (getrusage(RUSAGE_SELF, &ru) == 0) return ru.ru_nivcsw;
#endif
    return 0;
}

void hri_thread_stat_now(hr_thread_stat *s)
{
    *s = (hr_thread_stat){-1.0, -1.0, 0, 0, sched_getcpu()};
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    unsigned long long run = 0, delay = 0;
    if (f) {
        if (fscanf(f, "%llu %llu", &run, &delay) == 2) {
            s->run_s = 1e-9 * (double)run;
            s->delay_s = 1e-9 * (double)delay;
        }
        fclose(f);
    }
    struct rusage ru;
    if (getrusage(RUSAGE_THREAD, &ru) == 0) s->voluntary = ru.ru_nvcsw;
    s->preempted = hri_thread_preempted();
}

hr_thread_stat hri_thread_stat_diff(const hr_thread_stat *a, const hr_thread_stat *b)
{
    const int known = a->run_s >= 0 && b->run_s >= 0;
    return (hr_thread_stat){known ? b->run_s - a->run_s : -1.0, known ? b->delay_s - a->delay_s : -1.0,
                            b->voluntary - a->voluntary, b->preempted - a->preempted, b->cpu};
}

int hri_steal(double *total, double *per_cpu, int max)
{
    *total = -1.0;
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return 0;
    const long hz = sysconf(_SC_CLK_TCK);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f) && strncmp(line, "cpu", 3) == 0) {
        int cpu = -1; /* the first line ("cpu  ...") sums every CPU */
        unsigned long long v[8];
        const int got = line[3] == ' ' ? sscanf(line + 3, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
                                                &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) +
                                             1
                                       : sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu", &cpu,
                                                &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
        if (got != 9 || hz <= 0) continue;
        const double steal = (double)v[7] / (double)hz;
        if (cpu < 0)
            *total = steal;
        else if (cpu == n && n < max)
            per_cpu[n++] = steal;
    }
    fclose(f);
    return n;
}

/* The trace files opened so far, by path: kept open (engines and crews of a process write
 * to them until it ends), a few at most. */
#define HR_TRACE_FILES 8
static struct {
    char path[512];
    FILE *f;
} traces[HR_TRACE_FILES];
static int ntraces;
static pthread_mutex_t trace_mu = PTHREAD_MUTEX_INITIALIZER;

FILE *hri_trace_file(const char *path)
{
    if (!path || !*path) return NULL;
    FILE *f = NULL;
    pthread_mutex_lock(&trace_mu);
    for (int i = 0; i < ntraces && !f; i++)
        if (strcmp(traces[i].path, path) == 0) f = traces[i].f;
    if (!f && ntraces < HR_TRACE_FILES && strlen(path) < sizeof traces[0].path && (f = fopen(path, "a"))) {
        snprintf(traces[ntraces].path, sizeof traces[ntraces].path, "%s", path);
        traces[ntraces++].f = f;
    }
    pthread_mutex_unlock(&trace_mu);
    return f;
}

void hri_trace_lock(void)
{
    pthread_mutex_lock(&trace_mu);
}

void hri_trace_unlock(void)
{
    for (int i = 0; i < ntraces; i++)
        fflush(traces[i].f);
    pthread_mutex_unlock(&trace_mu);
}
