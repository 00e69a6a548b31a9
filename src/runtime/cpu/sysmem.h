/* Host memory the process can expect to use, for refusing problems that cannot fit. */
#ifndef HR_SYSMEM_H
#define HR_SYSMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MemAvailable from /proc/meminfo, else physical memory; SIZE_MAX if unknown. */
size_t hri_host_available_bytes(void);

/* Memory for a grid or a large vector (free() it), aligned to `align` (a power of two,
 * at least sizeof(void *)); from 8 MiB on aligned to 2 MiB. With `hugepages` (the knob
 * hr_tuning.hugepages) such blocks are also advised for transparent huge pages (madvise
 * MADV_HUGEPAGE; under THP
 * "madvise", the H100 host's and Debian's setting, grids otherwise get 4 KiB pages). Off by
 * default: on the H100 host it changed neither the copy bandwidth nor a cpu-threads sweep
 * beyond their run-to-run spread, and the one hybrid run with it had a CPU part 2x slower
 * than the run without (docs/results/hybrid.md). NULL when out of memory. */
void *hri_alloc_big(size_t align, size_t bytes, int hugepages);

#ifdef __cplusplus
}
#endif
#endif
