/* Host memory the process can expect to use, for refusing problems that cannot fit. */
#ifndef HR_SYSMEM_H
#define HR_SYSMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MemAvailable from /proc/meminfo, else physical memory; SIZE_MAX if unknown. */
size_t hr_host_available_bytes(void);

/* Memory for a grid or a large vector (free() it), aligned to `align` (a power of two,
 * at least sizeof(void *)). From 8 MiB on it is aligned to 2 MiB and advised for
 * transparent huge pages (madvise MADV_HUGEPAGE, where the kernel has it): with THP in
 * "madvise" mode (Debian's default) large grids otherwise get 4 KiB pages, and streaming
 * sweeps over them meet a TLB miss every 4 KiB. HETRELAX_HUGEPAGES=0 turns the advice off
 * (for measurements). NULL when out of memory. */
void *hr_alloc_big(size_t align, size_t bytes);

#ifdef __cplusplus
}
#endif
#endif
