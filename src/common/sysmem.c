#include "common/sysmem.h"

#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

size_t hr_host_available_bytes(void)
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
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || size <= 0) return SIZE_MAX;
    return (size_t)pages * (size_t)size;
}
