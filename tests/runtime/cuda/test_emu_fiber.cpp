/*
 * The fibers under the CUDA emulations (emu_fiber.h), in the two ways they switch: built as
 * is (_setjmp/_longjmp where glibc allows) and with -DEMU_FIBER_JUMPS=0 (swapcontext). Checks
 * the two patterns the emulations use:
 *   - a scheduler and its fibers (the block emulation): every fiber gives way to the scheduler
 *     at each step, the scheduler runs them round robin, and the steps come in round order;
 *   - a ring of fibers (the warp emulation): each gives way to the next, the last to the
 *     first, and each ends by handing over to the next (the last to the host);
 * each fiber's locals (on its own stack) intact across the switches, and fibers prepared again
 * for a second run (a second block) starting afresh.
 */
#include <cstdio>
#include <cstring>
#include <vector>

#include "emu_fiber.h"

static int failures = 0;
#define CHECK(c, ...)                                                                                        \
    do {                                                                                                     \
        if (!(c)) {                                                                                          \
            std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                 \
            std::printf(__VA_ARGS__);                                                                        \
            std::printf("\n");                                                                               \
            failures++;                                                                                      \
        }                                                                                                    \
    } while (0)

enum { NF = 40, ROUNDS = 25, STACK = 1 << 16 };

/* ---------------------------------------------------------------- scheduler and fibers */
static emu_fiber host, fib[NF];
static std::vector<int> steps;
static int done[NF], offset;

static void worker(int i)
{
    char mine[2048]; /* on this fiber's stack: must survive every switch */
    std::memset(mine, i + offset, sizeof mine);
    for (int r = 0; r < ROUNDS; r++) {
        steps.push_back(r * NF + i);
        emu_fiber_switch(fib[i], host);
        for (size_t b = 0; b < sizeof mine; b += 97)
            if (mine[b] != (char)(i + offset)) {
                CHECK(0, "fiber %d: its stack changed under it in round %d", i, r);
                break;
            }
    }
    done[i] = 1;
    emu_fiber_exit(host);
}

static void run_block(int off)
{
    offset = off;
    steps.clear();
    std::memset(done, 0, sizeof done);
    emu_fiber_host(host);
    for (int i = 0; i < NF; i++)
        emu_fiber_prepare(fib[i], STACK, worker, i);
    for (bool all = false; !all;) {
        all = true;
        for (int i = 0; i < NF; i++)
            if (!done[i]) {
                all = false;
                emu_fiber_switch(host, fib[i]);
            }
    }
    CHECK(steps.size() == (size_t)NF * ROUNDS, "block %d: %zu steps, not %d", off, steps.size(), NF * ROUNDS);
    for (size_t s = 0; s < steps.size(); s++)
        if (steps[s] != (int)s) {
            CHECK(0, "block %d: step %zu was fiber %d of round %d", off, s, steps[s] % NF, steps[s] / NF);
            break;
        }
}

/* ---------------------------------------------------------------- a ring of lanes */
enum { LANES = 32 };
static emu_fiber lane[LANES];
static int cur, slot[LANES], seen[LANES][LANES];

static void lane_body(int l)
{
    for (int r = 0; r < 3; r++) {
        slot[l] = 100 * r + l; /* every lane writes, then reads its neighbour's: a shuffle */
        cur = (l + 1) % LANES;
        emu_fiber_switch(lane[l], lane[cur]);
        seen[l][(l + 1) % LANES] += slot[(l + 1) % LANES] == 100 * r + (l + 1) % LANES;
        cur = (l + 1) % LANES;
        emu_fiber_switch(lane[l], lane[cur]);
    }
    cur = l + 1;
    emu_fiber_exit(l + 1 < LANES ? lane[l + 1] : host);
}

static void run_ring()
{
    std::memset(seen, 0, sizeof seen);
    for (int l = 0; l < LANES; l++)
        emu_fiber_prepare(lane[l], STACK, lane_body, l);
    emu_fiber_host(host);
    cur = 0;
    emu_fiber_switch(host, lane[0]);
    CHECK(cur == LANES, "the ring ended after lane %d", cur - 1);
    for (int l = 0; l < LANES; l++)
        CHECK(seen[l][(l + 1) % LANES] == 3, "lane %d read its neighbour's value %d times of 3", l,
              seen[l][(l + 1) % LANES]);
}

int main()
{
    run_block(1);
    run_block(2); /* the same fibers prepared again */
    run_ring();
    run_ring();
    std::printf("%s switches: %d failure(s)\n", EMU_FIBER_JUMPS ? "_setjmp/_longjmp" : "swapcontext",
                failures);
    return failures ? 1 : 0;
}
