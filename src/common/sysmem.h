/* Host memory the process can expect to use, for refusing problems that cannot fit. */
#ifndef HR_SYSMEM_H
#define HR_SYSMEM_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* MemAvailable from /proc/meminfo, else physical memory; SIZE_MAX if unknown. */
size_t hr_host_available_bytes(void);

#ifdef __cplusplus
}
#endif
#endif
