/*
 * Zero-copy ghost planes between MPI ranks of one node (the mpi-shm transport's
 * grid_share, grid_link, grid_free and round; see decomp/transport.h).
 *
 * Why: a rank of a 3-D slab split exchanges two planes a sweep. Even packed in place
 * (transport_shm.c), each plane is read and written twice more (pack, unpack), and the
 * overlapped schedule sweeps the two boundary planes apart from the inner ones, each
 * reading three planes from memory. On a node whose cores share one memory bus that is
 * 10-15 % more traffic than 16 threads of one process move (docs/results/mpi-cpu.md).
 *
 * Here every rank's grids live in POSIX shared-memory objects, one window per plane (the
 * layout's plane stride rounded to whole pages), and each rank maps its neighbours' first
 * and last own windows over its own two ghost windows. A ghost plane is then the
 * neighbour's own plane: nothing is copied, and the sweep is the ordinary streamed sweep
 * over the whole box, so the bits are those of every other schedule. The exchange is only
 * agreement on the round: a rank publishes its round in a shared counter and waits until
 * its neighbours reached it too.
 *
 * Why one counter is enough: between two rounds a rank does at most one sweep (it reads
 * grid c, writes grid 1 - c) or reads only. Once the neighbours reached round r they are
 * done with everything before it, in particular with reading the windows this rank
 * writes next; and they cannot pass round r + 1, and so write what this rank reads,
 * until this rank has published r + 1.
 *
 * Names: /<prefix>-g<which>-<id> (a grid) and /<prefix>-r-<id> (a round counter). Both
 * sides open with O_CREAT and size alike (a new object reads as zeros); a rank unlinks its
 * own names after the first round, when every neighbour has mapped them.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "parallel/transport/mpi/transport_mpi.h"

#define GRID_LINE 64
#define OWN_NAMES 3 /* two grids and the round counter */

struct hr_shm_grids {
    char prefix[48];
    int rank;
    _Atomic long long *mine;   /* this rank's round counter */
    _Atomic long long *nbf[2]; /* the neighbours' (NULL: none) */
    int nbid[2];
    char own[OWN_NAMES][96]; /* names to unlink after the first round */
    int nown;
};

static int open_sized(const char *name, size_t bytes)
{
    const int fd = shm_open(name, O_CREAT | O_RDWR, 0600);
    if (fd < 0) return -1;
    if (ftruncate(fd, (off_t)bytes) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Maps the round counter of process id (NULL on failure). */
static _Atomic long long *map_counter(struct hr_shm_grids *g, int id)
{
    char name[96];
    snprintf(name, sizeof name, "/%s-r-%d", g->prefix, id);
    const int fd = open_sized(name, GRID_LINE);
    if (fd < 0) return NULL;
    void *p = mmap(NULL, GRID_LINE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return NULL;
    if (id == g->rank && g->nown < OWN_NAMES) snprintf(g->own[g->nown++], sizeof g->own[0], "%s", name);
    return p;
}

hr_status hri_shm_grids_create(int rank, const char *prefix, struct hr_shm_grids **out)
{
    *out = NULL;
    struct hr_shm_grids *g = calloc(1, sizeof *g);
    if (!g) return HR_ERR_NO_MEMORY;
    g->rank = rank;
    g->nbid[0] = g->nbid[1] = -1;
    snprintf(g->prefix, sizeof g->prefix, "%s", prefix);
    g->mine = map_counter(g, rank);
    if (!g->mine) {
        free(g);
        return HR_ERR_IO;
    }
    *out = g;
    return HR_OK;
}

static void unlink_own(struct hr_shm_grids *g)
{
    for (int i = 0; i < g->nown; i++)
        shm_unlink(g->own[i]);
    g->nown = 0;
}

void hri_shm_grids_free(struct hr_shm_grids *g)
{
    if (!g) return;
    unlink_own(g);
    munmap((void *)g->mine, GRID_LINE);
    for (int s = 0; s < 2; s++)
        if (g->nbf[s]) munmap((void *)g->nbf[s], GRID_LINE);
    free(g);
}

void *hri_shm_grid_share(struct hr_shm_grids *g, const hr_shared_grid *sg)
{
    char name[96];
    snprintf(name, sizeof name, "/%s-g%d-%d", g->prefix, sg->which, sg->id);
    const size_t bytes = (size_t)sg->planes * sg->window;
    const int fd = open_sized(name, bytes);
    if (fd < 0) return NULL;
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        shm_unlink(name);
        return NULL;
    }
    if (g->nown < OWN_NAMES) snprintf(g->own[g->nown++], sizeof g->own[0], "%s", name);
    return p;
}

hr_status hri_shm_grid_link(struct hr_shm_grids *g, void *base, const hr_shared_grid *sg)
{
    for (int s = 0; s < 2; s++) {
        const int nb = sg->nb[s];
        if (nb < 0) continue;
        char name[96];
        snprintf(name, sizeof name, "/%s-g%d-%d", g->prefix, sg->which, nb);
        const int fd = open_sized(name, (size_t)sg->nb_planes[s] * sg->window);
        if (fd < 0) return HR_ERR_IO;
        /* below: its last own plane over window 0; above: its first over the last window */
        const size_t from = (size_t)(s == 0 ? sg->nb_planes[0] - 2 : 1) * sg->window;
        char *at = (char *)base + (size_t)(s == 0 ? 0 : sg->planes - 1) * sg->window;
        void *p = mmap(at, sg->window, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)from);
        close(fd);
        if (p == MAP_FAILED) return HR_ERR_IO;
        if (g->nbid[s] != nb) { /* its counter, mapped before anyone publishes a round */
            if (g->nbf[s]) munmap((void *)g->nbf[s], GRID_LINE);
            g->nbf[s] = map_counter(g, nb);
            g->nbid[s] = g->nbf[s] ? nb : -1;
            if (!g->nbf[s]) return HR_ERR_IO;
        }
    }
    return HR_OK;
}

void hri_shm_grid_free(void *base, const hr_shared_grid *sg)
{
    if (base) munmap(base, (size_t)sg->planes * sg->window); /* the linked windows too */
}

hr_status hri_shm_round(struct hr_shm_grids *g, long long r, const int nb[2])
{
    atomic_store_explicit(g->mine, r, memory_order_release);
    for (int s = 0; s < 2; s++) {
        if (nb[s] < 0) continue;
        if (nb[s] != g->nbid[s] || !g->nbf[s]) return HR_ERR_INTERNAL; /* not linked */
        unsigned spins = 0;
        while (atomic_load_explicit(g->nbf[s], memory_order_acquire) < r)
            hri_shm_spin_pause(&spins);
    }
    if (g->nown) unlink_own(g); /* the neighbours mapped them before their first round */
    return HR_OK;
}
