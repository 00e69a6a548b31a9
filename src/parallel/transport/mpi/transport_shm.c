/*
 * Halo messages between MPI ranks of one node through shared memory of our own
 * (transport "mpi-shm"); norms and flags still go through MPI collectives.
 *
 * Why: OpenMPI moves a large shared-memory message only inside MPI calls on both sides
 * (copy-in/copy-out fragments, or a single copy the receiver starts when it matches).
 * A rank that sweeps its interior between MPI_Isend and MPI_Waitall therefore receives
 * its halo only after the sweep: at 16 ranks of a 256^3 slab on the 16-core H100 host
 * the wait cost 1.4 ms of a 3.5 ms sweep (docs/results/mpi-cpu.md), while 16 threads
 * of one process sweep in 2.2 ms. Here the sender copies its packed face into a segment
 * the receiver has mapped and publishes a round number; the receiver copies it out as
 * soon as it is there. Nothing waits on the other side's MPI calls.
 *
 * One POSIX shared-memory segment per message (sender, receiver, tag), created by
 * whichever side opens it first (both open with O_CREAT and size it alike; a new
 * segment reads as zeros), under a name unique to the solve that rank 0 chose. Two
 * slots by round parity, so a sender is at most one round ahead:
 *   start (round r): wait until ack >= r - 2, copy into slot r & 1, seq = r (release);
 *   wait  (round r): wait until seq >= r (acquire), copy slot r & 1 out, ack = r.
 * The receiver unlinks the name after its first round (both sides have it mapped then),
 * so a killed job leaves nothing in /dev/shm after the start.
 *
 * In place (hri_shm_slot, the transport's `slot` op): the sender packs straight
 * into the round's slot and start only publishes it, the receiver unpacks straight from
 * it and acks the round at its next call. Of the four copies of a face (pack, into the
 * slot, out of it, unpack) two remain: at 512^3 on the H100 host, 16 ranks sweep in
 * 16.1-16.2 ms instead of 17.8 (docs/results/mpi-cpu.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/error.h"
#include "parallel/transport/mpi/transport_mpi.h"

#define SHM_LINE 64

typedef struct shm_head {
    _Alignas(SHM_LINE) _Atomic long long seq; /* last round the sender published */
    _Alignas(SHM_LINE) _Atomic long long ack; /* last round the receiver copied out */
} shm_head;

typedef struct shm_msg {
    hr_halo_msg m;
    int send;        /* 1: we are the sender */
    long long round; /* rounds started (sender) or completed (receiver) */
    size_t slot;     /* bytes of one slot (rounded up to a line) */
    shm_head *head;  /* the mapping: head, then two slots */
    size_t map_bytes;
    char name[96];
    int named;      /* the name may still exist */
    int in_slot;    /* sender: this round was packed into its slot (hri_shm_slot): no copy in */
    int direct;     /* receiver: this round is read from its slot (hri_shm_slot): no copy out */
    long long held; /* receiver: a round whose slot is still being read (acked at the next call) */
} shm_msg;

typedef struct shm_phase {
    shm_msg *msg;
    int n;
} shm_phase;

struct hr_shm_tr {
    int rank;
    char prefix[48];
    shm_phase ph[HR_MAX_PHASES];
};

void hri_shm_spin_pause(unsigned *i)
{
    /* yield now and then: under oversubscription (CI runs 4 ranks on 2 cores) the rank we
     * wait for may need our core */
    if ((++*i & 255u) == 0) sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static void unmap_msg(shm_msg *s)
{
    if (s->head) munmap(s->head, s->map_bytes);
    if (s->named) shm_unlink(s->name);
    s->head = NULL;
    s->named = 0;
}

static void free_phase(shm_phase *p)
{
    for (int i = 0; i < p->n; i++)
        unmap_msg(&p->msg[i]);
    free(p->msg);
    p->msg = NULL;
    p->n = 0;
}

static hr_status map_msg(struct hr_shm_tr *t, shm_msg *s)
{
    snprintf(s->name, sizeof s->name, "/%s-%d-%d-%d", t->prefix, s->m.from, s->m.to, s->m.tag);
    s->slot = (s->m.bytes + SHM_LINE - 1) / SHM_LINE * SHM_LINE;
    s->map_bytes = sizeof(shm_head) + 2 * s->slot;
    const int fd = shm_open(s->name, O_CREAT | O_RDWR, 0600);
    if (fd < 0) return HR_ERR_IO;
    s->named = 1;
    int ok = ftruncate(fd, (off_t)s->map_bytes) == 0;
    void *p = ok ? mmap(NULL, s->map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (p == MAP_FAILED) return HR_ERR_IO;
    s->head = p;
    return HR_OK;
}

hr_status hri_shm_bind(struct hr_shm_tr *t, int phase, const hr_halo_msg *sends, int nsend,
                      const hr_halo_msg *recvs, int nrecv)
{
    shm_phase *p = &t->ph[phase];
    free_phase(p);
    p->msg = calloc((size_t)(nsend + nrecv) + 1, sizeof *p->msg);
    if (!p->msg) return HR_ERR_NO_MEMORY;
    for (int i = 0; i < nsend + nrecv; i++) {
        shm_msg *s = &p->msg[p->n++];
        s->send = i < nsend;
        s->m = s->send ? sends[i] : recvs[i - nsend];
        HR_TRY(map_msg(t, s));
    }
    return HR_OK;
}

static char *slot_of(const shm_msg *s, long long round)
{
    return (char *)(s->head + 1) + (size_t)(round & 1) * s->slot;
}

/* The receiver is done with the slot of a round it read in place. */
static void release_held(shm_msg *s)
{
    if (s->held) atomic_store_explicit(&s->head->ack, s->held, memory_order_release);
    s->held = 0;
}

void *hri_shm_slot(struct hr_shm_tr *t, int phase, const void *buf)
{
    if (phase < 0 || phase >= HR_MAX_PHASES) return NULL;
    shm_phase *p = &t->ph[phase];
    for (int i = 0; i < p->n; i++) {
        shm_msg *s = &p->msg[i];
        if (s->m.buf != buf) continue;
        const long long r = s->round + 1;
        if (s->send) { /* the slot is free once the receiver is done with round r - 2 */
            unsigned spins = 0;
            while (atomic_load_explicit(&s->head->ack, memory_order_acquire) < r - 2)
                hri_shm_spin_pause(&spins);
            s->in_slot = 1;
        } else {
            release_held(s);
            s->direct = 1;
        }
        return slot_of(s, r);
    }
    return NULL;
}

hr_status hri_shm_start(struct hr_shm_tr *t, int phase)
{
    shm_phase *p = &t->ph[phase];
    for (int i = 0; i < p->n; i++) {
        shm_msg *s = &p->msg[i];
        if (!s->send) continue;
        const long long r = ++s->round;
        if (!s->in_slot) {
            unsigned spins = 0;
            while (atomic_load_explicit(&s->head->ack, memory_order_acquire) < r - 2)
                hri_shm_spin_pause(&spins);
            memcpy(slot_of(s, r), s->m.buf, s->m.bytes);
        }
        s->in_slot = 0;
        atomic_store_explicit(&s->head->seq, r, memory_order_release);
    }
    return HR_OK;
}

hr_status hri_shm_wait(struct hr_shm_tr *t, int phase)
{
    shm_phase *p = &t->ph[phase];
    for (int i = 0; i < p->n; i++) {
        shm_msg *s = &p->msg[i];
        if (s->send) continue;
        const long long r = ++s->round;
        if (!s->direct) release_held(s);
        unsigned spins = 0;
        while (atomic_load_explicit(&s->head->seq, memory_order_acquire) < r)
            hri_shm_spin_pause(&spins);
        if (s->direct) { /* read in place: acked at the next call */
            s->held = r;
            s->direct = 0;
        } else {
            memcpy(s->m.buf, slot_of(s, r), s->m.bytes);
            atomic_store_explicit(&s->head->ack, r, memory_order_release);
        }
        if (s->named) { /* the sender mapped it before its first round */
            shm_unlink(s->name);
            s->named = 0;
        }
    }
    return HR_OK;
}

hr_status hri_shm_create(int rank, const char *prefix, struct hr_shm_tr **out)
{
    *out = NULL;
    struct hr_shm_tr *t = calloc(1, sizeof *t);
    if (!t) return HR_ERR_NO_MEMORY;
    t->rank = rank;
    snprintf(t->prefix, sizeof t->prefix, "%s", prefix);
    *out = t;
    return HR_OK;
}

void hri_shm_free(struct hr_shm_tr *t)
{
    if (!t) return;
    for (int p = 0; p < HR_MAX_PHASES; p++)
        free_phase(&t->ph[p]);
    free(t);
}

int hri_mpi_all_on_node(MPI_Comm comm)
{
    int rank = 0, size = 1, node_size = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm node = MPI_COMM_NULL;
    if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS &&
        node != MPI_COMM_NULL) {
        MPI_Comm_size(node, &node_size);
        MPI_Comm_free(&node);
    }
    int all = node_size == size;
    MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_MIN, comm);
    return all;
}

int hri_mpi_shm_setup(MPI_Comm comm, const hr_tuning *tune, char prefix[48])
{
    prefix[0] = '\0';
    const int want = !(tune && tune->mpi_shm < 0); /* off: MPI point-to-point for the halos */
    int rank = 0, size = 1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    const int all = hri_mpi_all_on_node(comm) && want && size > 1; /* every rank on this node */
    char name[48] = {0};
    if (rank == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        static int solves; /* several solvers in one job get names of their own */
        snprintf(name, sizeof name, "hetrelax-%ld-%ld-%d", (long)getpid(), (long)(ts.tv_nsec ^ ts.tv_sec),
                 solves++);
    }
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, comm);
    if (all) memcpy(prefix, name, 48);
    return all;
}
