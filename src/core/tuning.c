#include "core/tuning.h"

#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <unistd.h>

#include "core/error.h"

typedef struct range {
    const char *name;
    long value, lo, hi;
} range;

hr_status hri_tuning_validate(const hr_tuning *t, char *why, size_t ws)
{
    if (!t) return HR_OK;
    const range r[] = {
        {"hugepages", t->hugepages, -1, 1},
        {"cpu_stream", t->cpu_stream, -1, 1},
        {"cpu_block", t->cpu_block, 0, 1 << 20},
        {"cpu_block_stream", t->cpu_block_stream, -1, 1},
        {"rb_tile", t->rb_tile[0], -1, 1 << 30},
        {"rb_tile", t->rb_tile[1], -1, 1 << 30},
        {"gpu_shape", t->gpu_shape[0], 0, 1 << 30},
        {"gpu_shape", t->gpu_shape[1], 0, 1 << 30},
        {"gpu_shape", t->gpu_shape[2], 0, 1 << 30},
        {"gpu_pdl", t->gpu_pdl, -1, 1},
        {"gpu_split", t->gpu_split, 0, 1 << 30},
        {"rb_gpu_shape", t->rb_gpu_shape[0], 0, 1 << 30},
        {"rb_gpu_shape", t->rb_gpu_shape[1], 0, 1 << 30},
        {"rb_gpu_shape", t->rb_gpu_shape[2], 0, 1 << 30},
        {"rb2_v1", t->rb2_v1, -1, 1},
        {"rb2_old", t->rb2_old, -1, 1},
        {"rb2_one", t->rb2_one, -1, 1},
        {"rb2_kcopy", t->rb2_kcopy, -1, 1},
        {"rb2_shape", t->rb2_shape[0], 0, 1 << 30},
        {"rb2_shape", t->rb2_shape[1], 0, 1 << 30},
        {"rb2_shape", t->rb2_shape[2], 0, 1 << 30},
        {"rb2_srows", t->rb2_srows, 0, 1 << 30},
        {"rb2_graph", t->rb2_graph, 0, 1000},
        {"mg_gpu_small", t->mg_gpu_small, 0, 1L << 40},
        {"mg_gpu_nograph", t->mg_gpu_nograph, -1, 1},
        {"mg_gpu_rb", t->mg_gpu_rb, 0, 2},
        {"mg_gpu_march", t->mg_gpu_march, -1, 1L << 40},
        {"mg_gpu_fuse", t->mg_gpu_fuse, -1, 1L << 40},
        {"mg_gpu_async_local", t->mg_gpu_async_local, 0, 1 << 20},
        {"sparse_streams", t->sparse_streams, 0, 32},
        {"sparse_graph", t->sparse_graph, -1, 4096},
        {"sparse_amc_serial", t->sparse_amc_serial, -1, 1},
        {"sparse_amc_every", t->sparse_amc_every, 0, 1024},
        {"sparse_while", t->sparse_while, -1, 1},
        {"sparse_device_checks", t->sparse_device_checks, -1, 1},
        {"sparse_body", t->sparse_body, 0, 256},
        {"sparse_body_switch", t->sparse_body_switch, 0, 1 << 30},
        {"sparse_body_long", t->sparse_body_long, -1, 256},
        {"sparse_multi", t->sparse_multi, -1, 1},
        {"sparse_lean", t->sparse_lean, -1, 1},
        {"sparse_predict", t->sparse_predict, -1, 1},
        {"sparse_batch", t->sparse_batch, -1, 1},
        {"sparse_profile", t->sparse_profile, -1, 1},
        {"crew_pin", t->crew_pin, -1, 1},
        {"crew_steal", t->crew_steal, -1, 1},
        {"crew_pieces", t->crew_pieces, 0, 64},
        {"cpu_pull", t->cpu_pull, -1, 1},
        {"peer", t->peer, -1, 1},
        {"peer_push", t->peer_push, -1, 1},
        {"split_mapped", t->split_mapped, -1, 1},
        {"chain_graph", t->chain_graph, -1, 1},
        {"exchange_trial", t->exchange_trial, -1, 1},
        {"auto_watch_force", t->auto_watch_force, -1, 1},
        {"mpi_mapped", t->mpi_mapped, -1, 1},
        {"mpi_inplace", t->mpi_inplace, -1, 1},
        {"mpi_shm", t->mpi_shm, -1, 1},
        {"mpi_cuda_aware", t->mpi_cuda_aware, -1, 1},
        {"dsolver_pencil", t->dsolver_pencil, -1, 1},
        {"dsolver_queued", t->dsolver_queued, -1, 1},
        {"dsolver_progress", t->dsolver_progress, -1, 1},
        {"dgpu_generic", t->dgpu_generic, -1, 1},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
        if (r[i].value < r[i].lo || r[i].value > r[i].hi)
            return hri_invalid_arg(why, ws, "tuning.%s: %ld is outside %ld..%ld", r[i].name, r[i].value,
                                  r[i].lo, r[i].hi);
    const int gs = (t->gpu_shape[0] > 0) + (t->gpu_shape[1] > 0) + (t->gpu_shape[2] > 0);
    if (gs != 0 && gs != 3) return hri_invalid_arg(why, ws, "tuning.gpu_shape: give BX, BY and H, or none");
    if ((t->rb_gpu_shape[0] > 0) != (t->rb_gpu_shape[1] > 0) ||
        (t->rb_gpu_shape[2] > 0 && t->rb_gpu_shape[0] == 0))
        return hri_invalid_arg(why, ws, "tuning.rb_gpu_shape: give BX and BY (and H), or none");
    if (t->rb2_srows == 1) return hri_invalid_arg(why, ws, "tuning.rb2_srows: a count >= 2 (0: the default)");
    if (t->rb2_graph % 2)
        return hri_invalid_arg(why, ws, "tuning.rb2_graph: %d is not an even count of iterations (0: off)",
                              t->rb2_graph);
    const struct {
        const char *name;
        double v;
    } d[] = {
        {"crew_spin_us", t->crew_spin_us}, {"auto_watch", t->auto_watch}, {"nccl_timeout", t->nccl_timeout}};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
        if (!isfinite(d[i].v)) return hri_invalid_arg(why, ws, "tuning.%s: not a finite number", d[i].name);
    return HR_OK;
}

int hri_tuning_cache_dir(const hr_tuning *t, char *buf, size_t size)
{
    if (t && t->cache_dir && t->cache_dir[0]) return snprintf(buf, size, "%s", t->cache_dir) < (int)size;
    /* the user's home from the password database: the library reads no environment ($HOME
     * is the command's to pass, as cache_dir) */
    struct passwd pw, *found = NULL;
    char scratch[4096];
    if (getpwuid_r(getuid(), &pw, scratch, sizeof scratch, &found) != 0 || !found || !pw.pw_dir ||
        !pw.pw_dir[0])
        return 0;
    return snprintf(buf, size, "%s/.cache/hetrelax", pw.pw_dir) < (int)size;
}
