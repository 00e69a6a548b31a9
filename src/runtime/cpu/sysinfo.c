/* What the machine has: cores (hwloc when available), NUMA nodes, GPUs, CPU model. */
#include <stdio.h>
#include <string.h>

#include "runtime/cpu/team.h"
#include "runtime/cuda/cuda_api.h"
#include "hetrelax/hetrelax.h"

#ifdef HR_HAVE_HWLOC
#include <hwloc.h>
#endif

static void read_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            char *colon = strchr(line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                colon[strcspn(colon, "\n")] = '\0';
                snprintf(buf, size, "%s", colon);
            }
            break;
        }
    }
    fclose(f);
}

hr_status hr_sysinfo_get(hr_sysinfo *out)
{
    if (!out) return HR_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    out->pus = hri_cpu_count();
    out->cores = out->pus;
    out->numa_nodes = 1;
#ifdef HR_HAVE_HWLOC
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) == 0 && hwloc_topology_load(topo) == 0) {
        int c = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        int p = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        int m = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        if (c > 0) out->cores = c;
        if (p > 0) out->pus = p;
        if (m > 0) out->numa_nodes = m;
        hwloc_topology_destroy(topo);
    }
    out->have_hwloc = 1;
#endif
#ifdef HR_HAVE_CUDA
    out->have_cuda = 1;
#endif
#ifdef HR_HAVE_PNG
    out->have_png = 1;
#endif
    out->gpus = hri_cuda_device_count();
    read_cpu_model(out->cpu_model, sizeof out->cpu_model);
    return HR_OK;
}
