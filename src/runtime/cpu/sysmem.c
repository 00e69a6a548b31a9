#include "runtime/cpu/sysmem.h"

#include "hetrelax/hetrelax.h" /* hr_available_memory: public, so exported */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

/* MemAvailable from /proc/meminfo (physical memory where that is missing). */
static size_t meminfo_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f) {
        char line[256];
        unsigned long long kib;
        while (fgets(line, sizeof line, f))
            if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1) {
                fclose(f);
                return kib > SIZE_MAX / 1024 ? SIZE_MAX : (size_t)kib * 1024;
            }
        fclose(f);
    }
    return SIZE_MAX;
}

size_t hri_host_available_bytes(void)
{
    size_t avail = meminfo_available();
    /* never more than the machine has, whatever /proc said */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && (size_t)pages * (size_t)page < avail) avail = (size_t)pages * (size_t)page;
    /* and no more than the address-space limit (ulimit -v) leaves beside what is mapped */
    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        size_t mapped = 0;
        unsigned long mp = 0;
        FILE *f = fopen("/proc/self/statm", "r");
        if (f && fscanf(f, "%lu", &mp) == 1 && page > 0) mapped = (size_t)mp * (size_t)page;
        if (f) fclose(f);
        size_t room = (size_t)rl.rlim_cur > mapped ? (size_t)rl.rlim_cur - mapped : 0;
        if (room < avail) avail = room;
    }
    return avail;
}

size_t hr_available_memory(void)
{
    return hri_host_available_bytes();
}

#define HR_HUGE_BYTES ((size_t)2 << 20)

void *hri_alloc_big(size_t align, size_t bytes, int hugepages)
{
    if (bytes == 0) bytes = 1;
    const int big = bytes >= 4 * HR_HUGE_BYTES;
    if (big && align < HR_HUGE_BYTES) align = HR_HUGE_BYTES;
    if (bytes > SIZE_MAX - align) return NULL;
    void *p = aligned_alloc(align, (bytes + align - 1) / align * align);
#ifdef MADV_HUGEPAGE
    if (p && big && hugepages)
        (void)madvise(p, (bytes + HR_HUGE_BYTES - 1) / HR_HUGE_BYTES * HR_HUGE_BYTES,
                      MADV_HUGEPAGE); /* advice: failure is harmless */
#else
    (void)hugepages;
#endif
    return p;
}
