/*
 * The recording CUDA runtime of emu_cuda/cuda_runtime.h and its ordering check: a
 * happens-before relation over the recorded operations by vector clocks, one clock per
 * stream and one for the host thread.
 *
 * - an operation enqueued on a stream follows the stream's earlier operations and whatever
 *   the host had seen when it enqueued it (host operations, host synchronisations);
 * - the legacy default stream (one per device) follows the blocking streams' earlier work and
 *   precedes their later work; non-blocking streams are not ordered with it at all;
 * - cudaStreamWaitEvent orders the stream after the event's last record (an event never
 *   recorded orders nothing); the host joins a stream at cudaStreamSynchronize, every stream
 *   of the device at cudaDeviceSynchronize, and a copy where the documentation says the call
 *   returns after it (pinned host to device, device to host; pageable host to device: only
 *   the staging read, after a sync of the legacy stream);
 * - a stream capture records the launches and copies instead (the events inside it are the
 *   graph's own edges); a graph launch is one operation with all their accesses.
 *
 * emu_check then looks at every two operations that touch a common byte, one writing: they
 * must be ordered. Between two operations of the iterations (emu_set_phase(1)) only exact
 * footprints count (copies, fills, rb_stream's rows, the copy kernel): a whole-allocation
 * footprint (the in-place kernels, a graph launch) is too coarse for the schemes' kernels
 * that run side by side on disjoint rows or colours (bench/experiments/mgpu_rb2_model.py checks those).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "cuda_runtime.h"

dim3 threadIdx, blockIdx, blockDim, gridDim;
unsigned char rb_smem_raw[1]; /* rb_smem's `extern __shared__` array (never used) */

namespace
{

struct vclock {
    std::vector<unsigned> c;
    unsigned at(size_t t) const { return t < c.size() ? c[t] : 0; }
    void join(const vclock &o)
    {
        if (o.c.size() > c.size()) c.resize(o.c.size(), 0);
        for (size_t t = 0; t < o.c.size(); t++)
            if (o.c[t] > c[t]) c[t] = o.c[t];
    }
    void tick(size_t t)
    {
        if (t >= c.size()) c.resize(t + 1, 0);
        c[t]++;
    }
};

struct access {
    uintptr_t lo, hi; /* bytes [lo, hi) */
    bool write;
    bool exact; /* the bytes really touched (copies, fills, host); else a whole allocation */
};

struct op {
    std::string what;
    size_t thread; /* 0: the host, else a stream's clock */
    vclock vc;
    int iterating;
    std::vector<access> acc;
};

struct alloc {
    uintptr_t lo, hi;
    int dev;
};

} // namespace

struct emu_stream {
    size_t id; /* its clock */
    int dev;
    bool blocking, legacy;
    std::string name;
    vclock vc;
};
struct emu_event {
    vclock vc;
};
struct emu_graph {
    std::vector<access> acc;
};

namespace
{

struct state {
    int devices = 1, cur = 0, iterating = 0;
    size_t clocks = 1; /* 0: the host */
    vclock host;
    std::vector<emu_stream *> streams;
    std::map<int, emu_stream *> legacy;
    std::vector<alloc> allocs;
    std::vector<std::pair<uintptr_t, uintptr_t>> pinned;
    std::vector<op> ops;
    emu_graph *capture = nullptr;
    long misuse = 0;
    std::vector<void *> owned; /* device memory: kept to the reset, so no address repeats */
    std::map<std::pair<int, int>, bool> peer;
    /* the kernel being recorded */
    std::string kwhat;
    cudaStream_t kst = nullptr;
    std::vector<access> kacc;
};
state S;

std::string where(const char *f, int l)
{
    const char *b = std::strrchr(f, '/');
    return std::string(b ? b + 1 : f) + ":" + std::to_string(l);
}

void misuse(const std::string &m)
{
    S.misuse++;
    std::printf("MISUSE: %s\n", m.c_str());
}

emu_stream *legacy_of(int dev)
{
    auto it = S.legacy.find(dev);
    if (it != S.legacy.end()) return it->second;
    emu_stream *s = new emu_stream{
        S.clocks++, dev, true, true, "legacy default stream, device " + std::to_string(dev), {}};
    S.legacy[dev] = s;
    return s;
}

emu_stream *resolve(cudaStream_t s)
{
    return s ? s : legacy_of(S.cur);
}

const alloc *find_alloc(const void *p)
{
    const uintptr_t a = (uintptr_t)p;
    for (const alloc &x : S.allocs)
        if (a >= x.lo && a < x.hi) return &x;
    return nullptr;
}

bool is_pinned(const void *p, size_t n)
{
    const uintptr_t a = (uintptr_t)p;
    for (auto &r : S.pinned)
        if (a >= r.first && a + n <= r.second) return true;
    return false;
}

/* an operation on stream s (nullptr: the current device's legacy stream); its index, or -1
 * when a capture took it */
long enqueue(cudaStream_t st, const std::string &what, std::vector<access> acc)
{
    if (S.capture) {
        for (access &a : acc) {
            a.exact = false;
            S.capture->acc.push_back(a);
        }
        return -1;
    }
    emu_stream *s = resolve(st);
    vclock vc = s->vc;
    vc.join(S.host);
    if (s->legacy) {
        for (emu_stream *b : S.streams)
            if (b->dev == s->dev && b->blocking) vc.join(b->vc);
    } else if (s->blocking) {
        vc.join(legacy_of(s->dev)->vc);
    }
    vc.tick(s->id);
    s->vc = vc;
    S.ops.push_back(op{what + " on the " + s->name, s->id, vc, S.iterating, std::move(acc)});
    return (long)S.ops.size() - 1;
}

void host_op(const std::string &what, std::vector<access> acc)
{
    S.host.tick(0);
    S.ops.push_back(op{what + " (host)", 0, S.host, S.iterating, std::move(acc)});
}

access range(const void *p, size_t n, bool write)
{
    return access{(uintptr_t)p, (uintptr_t)p + n, write, true};
}

bool ordered(const op &a, const op &b)
{
    return b.vc.at(a.thread) >= a.vc.at(a.thread);
}

} // namespace

/* ---- the driver's calls ---- */

void emu_reset(int devices)
{
    for (emu_stream *s : S.streams)
        delete s;
    for (auto &l : S.legacy)
        delete l.second;
    for (void *p : S.owned)
        std::free(p);
    S = state();
    S.devices = devices;
}

void emu_set_phase(int iterating)
{
    S.iterating = iterating;
}

void emu_host_access(const char *what, const void *p, size_t n, bool write)
{
    host_op(what, {range(p, n, write)});
}

long emu_ops(void)
{
    return (long)S.ops.size();
}

long emu_check(const char *scenario)
{
    long races = 0;
    for (size_t j = 0; j < S.ops.size(); j++)
        for (size_t i = 0; i < j; i++) {
            const op &a = S.ops[i], &b = S.ops[j];
            if (ordered(a, b)) continue;
            const bool both = a.iterating && b.iterating;
            for (const access &x : a.acc)
                for (const access &y : b.acc) {
                    if (!(x.write || y.write) || x.hi <= y.lo || y.hi <= x.lo) continue;
                    if (both && !(x.exact && y.exact)) continue; /* the model's, row by row */
                    if (races++ < 4)
                        std::printf("RACE in %s:\n  %s %s\n  %s %s\n  unordered, on bytes [%#lx, %#lx)\n",
                                    scenario, x.write ? "writes:" : "reads: ", a.what.c_str(),
                                    y.write ? "writes:" : "reads: ", b.what.c_str(),
                                    (unsigned long)std::max(x.lo, y.lo), (unsigned long)std::min(x.hi, y.hi));
                    goto next;
                }
        next:;
        }
    if (races > 4) std::printf("  ... %ld unordered pairs in %s\n", races, scenario);
    return races + S.misuse;
}

/* ---- the runtime ---- */

cudaError_t cudaGetDeviceCount(int *n)
{
    *n = S.devices;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int dev)
{
    if (dev < 0 || dev >= S.devices) return cudaErrorInvalidDevice;
    std::memset(p, 0, sizeof *p);
    std::snprintf(p->name, sizeof p->name, "emulated device %d", dev);
    return cudaSuccess;
}

cudaError_t cudaDeviceGetStreamPriorityRange(int *least, int *greatest)
{
    *least = 0;
    *greatest = -5;
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int *can, int, int)
{
    *can = 1;
    return cudaSuccess;
}

cudaError_t cudaGetLastError(void)
{
    return cudaSuccess;
}

const char *cudaGetErrorString(cudaError_t)
{
    return "emulated error";
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned)
{
    *e = new emu_event{};
    return cudaSuccess;
}

cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    delete e;
    return cudaSuccess;
}

cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    delete g;
    return cudaSuccess;
}

cudaError_t cudaGraphExecDestroy(cudaGraphExec_t g)
{
    delete g;
    return cudaSuccess;
}

cudaError_t cudaGraphInstantiate(cudaGraphExec_t *out, cudaGraph_t g, unsigned long long)
{
    *out = new emu_graph(*g);
    return cudaSuccess;
}

cudaError_t emu_cudaSetDevice(const char *f, int l, int dev)
{
    if (dev < 0 || dev >= S.devices) {
        misuse("cudaSetDevice(" + std::to_string(dev) + ") at " + where(f, l));
        return cudaErrorInvalidDevice;
    }
    S.cur = dev;
    return cudaSuccess;
}

cudaError_t emu_cudaStreamCreateWithPriority(const char *f, int l, cudaStream_t *s, unsigned flags, int)
{
    const bool blocking = !(flags & cudaStreamNonBlocking);
    *s = new emu_stream{S.clocks,
                        S.cur,
                        blocking,
                        false,
                        std::string(blocking ? "blocking" : "non-blocking") + " stream #" +
                            std::to_string(S.clocks) + " (" + where(f, l) + "), device " +
                            std::to_string(S.cur),
                        {}};
    S.clocks++;
    S.streams.push_back(*s);
    return cudaSuccess;
}

cudaError_t emu_cudaStreamCreateWithFlags(const char *f, int l, cudaStream_t *s, unsigned flags)
{
    return emu_cudaStreamCreateWithPriority(f, l, s, flags, 0);
}

cudaError_t emu_cudaStreamDestroy(const char *, int, cudaStream_t)
{
    return cudaSuccess; /* kept: its clock stays valid for the check */
}

cudaError_t emu_cudaMalloc(const char *, int, void **p, size_t n)
{
    *p = std::calloc(n ? n : 1, 1);
    if (!*p) return cudaErrorMemoryAllocation;
    S.owned.push_back(*p);
    S.allocs.push_back(alloc{(uintptr_t)*p, (uintptr_t)*p + n, S.cur});
    return cudaSuccess;
}

cudaError_t emu_cudaFree(const char *f, int l, void *p)
{
    if (!p) return cudaSuccess;
    const alloc *a = find_alloc(p);
    if (!a || a->lo != (uintptr_t)p) {
        misuse("cudaFree of a pointer not from cudaMalloc at " + where(f, l));
        return cudaErrorInvalidValue;
    }
    host_op("cudaFree at " + where(f, l), {access{a->lo, a->hi, true, true}});
    return cudaSuccess;
}

cudaError_t emu_cudaHostRegister(const char *, int, void *p, size_t n, unsigned)
{
    S.pinned.push_back({(uintptr_t)p, (uintptr_t)p + n});
    return cudaSuccess;
}

cudaError_t emu_cudaHostUnregister(const char *f, int l, void *p)
{
    for (size_t k = 0; k < S.pinned.size(); k++)
        if (S.pinned[k].first == (uintptr_t)p) {
            /* the pages go back to pageable: no transfer may still use them */
            host_op("cudaHostUnregister at " + where(f, l),
                    {access{S.pinned[k].first, S.pinned[k].second, true, true}});
            S.pinned.erase(S.pinned.begin() + (long)k);
            return cudaSuccess;
        }
    misuse("cudaHostUnregister of memory not registered at " + where(f, l));
    return cudaErrorInvalidValue;
}

static cudaError_t fill(const char *f, int l, void *p, size_t n, cudaStream_t st, const char *name)
{
    const alloc *a = find_alloc(p);
    if (!a || (uintptr_t)p + n > a->hi) {
        misuse(std::string(name) + " outside device memory at " + where(f, l));
        return cudaErrorInvalidValue;
    }
    enqueue(st, std::string(name) + " at " + where(f, l), {range(p, n, true)});
    return cudaSuccess;
}

cudaError_t emu_cudaMemset(const char *f, int l, void *p, int, size_t n)
{
    return fill(f, l, p, n, nullptr, "cudaMemset"); /* the legacy stream; returns at once */
}

cudaError_t emu_cudaMemsetAsync(const char *f, int l, void *p, int, size_t n, cudaStream_t s)
{
    return fill(f, l, p, n, s, "cudaMemsetAsync");
}

/* checks the copy's kind against its pointers: 0 ok */
static int copy_sides(const char *f, int l, void *dst, const void *src, size_t n, cudaMemcpyKind k,
                      bool *hsrc, bool *hdst)
{
    const alloc *ad = find_alloc(dst), *as = find_alloc(src);
    *hdst = !ad;
    *hsrc = !as;
    if ((ad && (uintptr_t)dst + n > ad->hi) || (as && (uintptr_t)src + n > as->hi)) {
        misuse("copy past a device allocation at " + where(f, l));
        return 1;
    }
    const cudaMemcpyKind want = *hsrc ? (*hdst ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice)
                                      : (*hdst ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice);
    if (k != want && k != cudaMemcpyDefault) {
        misuse("copy kind does not match its pointers at " + where(f, l));
        return 1;
    }
    return 0;
}

cudaError_t emu_cudaMemcpy(const char *f, int l, void *dst, const void *src, size_t n, cudaMemcpyKind k)
{
    bool hs, hd;
    if (copy_sides(f, l, dst, src, n, k, &hs, &hd)) return cudaErrorInvalidValue;
    const std::string w = "cudaMemcpy at " + where(f, l);
    if (hs && hd) {
        host_op(w, {range(src, n, false), range(dst, n, true)});
    } else if (hs && !is_pinned(src, n)) {
        /* pageable: the legacy stream synchronised, the source staged; the device copy may
         * still be in flight when the call returns */
        S.host.join(legacy_of(S.cur)->vc);
        host_op(w + " (staging the pageable source)", {range(src, n, false)});
        enqueue(nullptr, w, {range(dst, n, true)});
    } else {
        const long o = enqueue(nullptr, w, {range(src, n, false), range(dst, n, true)});
        if (o >= 0 && (hs || hd)) S.host.join(S.ops[(size_t)o].vc); /* returns once it is done */
        /* device to device: no host synchronisation */
    }
    return cudaSuccess;
}

cudaError_t emu_cudaMemcpyAsync(const char *f, int l, void *dst, const void *src, size_t n, cudaMemcpyKind k,
                                cudaStream_t s)
{
    bool hs, hd;
    if (copy_sides(f, l, dst, src, n, k, &hs, &hd)) return cudaErrorInvalidValue;
    const std::string w = "cudaMemcpyAsync at " + where(f, l);
    if (hs && hd) {
        host_op(w, {range(src, n, false), range(dst, n, true)});
    } else if (hs && !is_pinned(src, n)) {
        host_op(w + " (staging the pageable source)", {range(src, n, false)});
        enqueue(s, w, {range(dst, n, true)});
    } else {
        const long o = enqueue(s, w, {range(src, n, false), range(dst, n, true)});
        if (o >= 0 && hd && !is_pinned(dst, n))
            S.host.join(S.ops[(size_t)o].vc); /* pageable: returns after */
    }
    return cudaSuccess;
}

cudaError_t emu_cudaMemcpyPeerAsync(const char *f, int l, void *dst, int, const void *src, int, size_t n,
                                    cudaStream_t s)
{
    bool hs, hd;
    if (copy_sides(f, l, dst, src, n, cudaMemcpyDeviceToDevice, &hs, &hd)) return cudaErrorInvalidValue;
    enqueue(s, "cudaMemcpyPeerAsync at " + where(f, l), {range(src, n, false), range(dst, n, true)});
    return cudaSuccess;
}

cudaError_t emu_cudaStreamSynchronize(const char *, int, cudaStream_t s)
{
    S.host.join(resolve(s)->vc);
    return cudaSuccess;
}

cudaError_t emu_cudaDeviceSynchronize(const char *, int)
{
    S.host.join(legacy_of(S.cur)->vc);
    for (emu_stream *s : S.streams)
        if (s->dev == S.cur) S.host.join(s->vc);
    return cudaSuccess;
}

cudaError_t emu_cudaEventRecord(const char *f, int l, cudaEvent_t e, cudaStream_t s)
{
    if (S.capture) return cudaSuccess; /* an edge inside the graph */
    const long o = enqueue(s, "cudaEventRecord at " + where(f, l), {});
    e->vc = S.ops[(size_t)o].vc;
    return cudaSuccess;
}

cudaError_t emu_cudaStreamWaitEvent(const char *, int, cudaStream_t s, cudaEvent_t e, unsigned)
{
    if (S.capture) return cudaSuccess;
    resolve(s)->vc.join(e->vc);
    return cudaSuccess;
}

cudaError_t emu_cudaDeviceEnablePeerAccess(const char *, int, int peer, unsigned)
{
    bool &on = S.peer[{S.cur, peer}];
    if (on) return cudaErrorPeerAccessAlreadyEnabled;
    on = true;
    return cudaSuccess;
}

cudaError_t emu_cudaStreamBeginCapture(const char *f, int l, cudaStream_t, cudaStreamCaptureMode)
{
    if (S.capture) {
        misuse("nested stream capture at " + where(f, l));
        return cudaErrorInvalidValue;
    }
    S.capture = new emu_graph;
    return cudaSuccess;
}

cudaError_t emu_cudaStreamEndCapture(const char *f, int l, cudaStream_t, cudaGraph_t *g)
{
    if (!S.capture) {
        misuse("cudaStreamEndCapture without a capture at " + where(f, l));
        return cudaErrorInvalidValue;
    }
    *g = S.capture;
    S.capture = nullptr;
    return cudaSuccess;
}

cudaError_t emu_cudaGraphLaunch(const char *f, int l, cudaGraphExec_t g, cudaStream_t s)
{
    enqueue(s, "cudaGraphLaunch at " + where(f, l), g->acc);
    return cudaSuccess;
}

void emu_kernel_begin(const char *f, int l, cudaStream_t st)
{
    S.kwhat = "kernel launched at " + where(f, l);
    S.kst = st;
    S.kacc.clear();
}

void emu_kernel_arg(const void *p, bool written)
{
    const alloc *a = find_alloc(p);
    if (!a) {
        misuse(S.kwhat + ": a pointer argument outside device memory");
        return;
    }
    S.kacc.push_back(access{a->lo, a->hi, written, false});
}

void emu_kernel_bytes(const void *p, size_t n, bool written)
{
    const alloc *a = find_alloc(p);
    if (!a || (uintptr_t)p + n > a->hi) {
        misuse(S.kwhat + ": a footprint outside device memory");
        return;
    }
    S.kacc.push_back(access{(uintptr_t)p, (uintptr_t)p + n, written, true});
}

void emu_kernel_end(void)
{
    enqueue(S.kst, S.kwhat, S.kacc);
}
