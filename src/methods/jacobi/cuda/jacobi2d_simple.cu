/*
 * The first rungs of the ladder (Venkatasubramanian & Vuduc section 3.2): one thread per point reading its
 * four neighbours from device memory, on unpadded rows (naive) or on the padded,
 * 128-byte aligned layout (padded), and the same through a 2-D texture object (texture).
 */
#include <stdio.h>
#include <string.h>

#include "runtime/cuda/gpu_internal.cuh"

/* Rows [a.lo, a.hi), columns 1..nx; W: the weighted (omega) update. */
template <typename T, bool W>
__global__ void hr_k_point(hr_gargs<T> a)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (j > a.nx) return;
    const T *__restrict__ u = a.u;
    T *__restrict__ un = a.un;
    for (int i = blockIdx.y * blockDim.y + threadIdx.y + a.lo; i < a.hi; i += gridDim.y * blockDim.y) {
        const size_t k = (size_t)i * a.pitch + (size_t)j;
        un[k] = hr_point<T, W>(u[k - a.pitch], u[k + a.pitch], u[k - 1], u[k + 1], a.hf, k, i, j, a.sp, u[k], a.c0,
                               a.c1);
    }
}

/* Texture reads. The texture spans the allocation from its aligned base with rows of
 * `pitch` texels; element (i, j) is texel offset + i*pitch + j, which may spill into the
 * next texel row because offset + j can reach past pitch. */
template <typename T>
__device__ __forceinline__ T tex_get(cudaTextureObject_t t, int x, int y);
template <>
__device__ __forceinline__ float tex_get<float>(cudaTextureObject_t t, int x, int y)
{
    return tex2D<float>(t, (float)x + 0.5f, (float)y + 0.5f);
}
template <>
__device__ __forceinline__ double tex_get<double>(cudaTextureObject_t t, int x, int y)
{
    int2 v = tex2D<int2>(t, (float)x + 0.5f, (float)y + 0.5f);
    return __hiloint2double(v.y, v.x);
}

template <typename T>
__device__ __forceinline__ T tex_at(cudaTextureObject_t t, int off, int pitch, int i, int j)
{
    int x = off + j, y = i;
    if (x >= pitch) {
        x -= pitch;
        y++;
    }
    return tex_get<T>(t, x, y);
}

template <typename T>
__global__ void hr_k_texture(hr_gargs<T> a, cudaTextureObject_t t, int off)
{
    const int j = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (j > a.n) return;
    const int p = (int)a.pitch;
    for (int i = blockIdx.y * blockDim.y + threadIdx.y + 1; i <= a.n; i += gridDim.y * blockDim.y) {
        const size_t k = (size_t)i * a.pitch + (size_t)j;
        a.un[k] = hr_point(tex_at<T>(t, off, p, i - 1, j), tex_at<T>(t, off, p, i + 1, j),
                           tex_at<T>(t, off, p, i, j - 1), tex_at<T>(t, off, p, i, j + 1), a.hf, k, i,
                           j, a.sp);
    }
}

static dim3 point_grid(const hr_gpu *g)
{
    const hr_gpu_shape s = g->shape;
    return dim3((unsigned)((g->nx + s.bx - 1) / s.bx), hr_grid_y(((long)g->ny + s.by - 1) / s.by));
}

static cudaError_t launch_point(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    const dim3 blk(g->shape.bx, g->shape.by), grd = point_grid(g);
    const bool w = hr_gpu_weighted(g);
    if (g->dbl) {
        if (w)
            hr_k_point<double, true><<<grd, blk, 0, st>>>(hr_gpu_args<double>(g));
        else
            hr_k_point<double, false><<<grd, blk, 0, st>>>(hr_gpu_args<double>(g));
    } else {
        if (w)
            hr_k_point<float, true><<<grd, blk, 0, st>>>(hr_gpu_args<float>(g));
        else
            hr_k_point<float, false><<<grd, blk, 0, st>>>(hr_gpu_args<float>(g));
    }
    return HR_LAUNCHED();
}

static cudaError_t launch_texture(hr_gpu *g, int sweeps, cudaStream_t st)
{
    (void)sweeps;
    const dim3 blk(g->shape.bx, g->shape.by), grd = point_grid(g);
    const cudaTextureObject_t t = g->tex[g->dcur];
    if (g->dbl)
        hr_k_texture<double><<<grd, blk, 0, st>>>(hr_gpu_args<double>(g), t, (int)g->offset);
    else
        hr_k_texture<float><<<grd, blk, 0, st>>>(hr_gpu_args<float>(g), t, (int)g->offset);
    return HR_LAUNCHED();
}

static int check_point(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    return hri_gpu_check_block(g, sh, 1, why, len);
}

static int check_texture(const hr_gpu *g, hr_gpu_shape sh, char *why, size_t len)
{
    if (check_point(g, sh, why, len)) return 1;
    const size_t rows = (size_t)g->ny + 3;
    if (g->pitch > (size_t)g->tex2d_max_w || rows > (size_t)g->tex2d_max_h) {
        snprintf(why, len, "n=%d exceeds the device's 2-D linear texture limit (%d x %d texels)", g->n,
                 g->tex2d_max_w, g->tex2d_max_h);
        return 1;
    }
    if ((g->pitch * g->esize) % g->tex_pitch_align || (size_t)g->d_u[0] % g->tex_align ||
        (size_t)g->d_u[1] % g->tex_align) {
        snprintf(why, len, "grid pitch or base does not meet the texture alignment");
        return 1;
    }
    return 0;
}

/* Texture objects over both grids (made once; the shape does not change them). */
static cudaError_t prepare_texture(hr_gpu *g)
{
    for (int k = 0; k < 2; k++) {
        if (g->tex[k]) continue;
        cudaResourceDesc rd;
        memset(&rd, 0, sizeof rd);
        rd.resType = cudaResourceTypePitch2D;
        rd.res.pitch2D.devPtr = g->d_u[k];
        rd.res.pitch2D.desc = g->dbl ? cudaCreateChannelDesc<int2>() : cudaCreateChannelDesc<float>();
        rd.res.pitch2D.width = g->pitch;
        rd.res.pitch2D.height = (size_t)g->ny + 3;
        rd.res.pitch2D.pitchInBytes = g->pitch * g->esize;
        cudaTextureDesc td;
        memset(&td, 0, sizeof td);
        td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
        td.filterMode = cudaFilterModePoint;
        td.readMode = cudaReadModeElementType;
        td.normalizedCoords = 0;
        cudaError_t e = cudaCreateTextureObject(&g->tex[k], &rd, &td, NULL);
        if (e != cudaSuccess) return e;
    }
    return cudaSuccess;
}

static const hr_gpu_shape point_cands[] = {{32, 4, 1},  {32, 8, 1},  {32, 16, 1}, {64, 4, 1}, {64, 8, 1},
                                           {128, 2, 1}, {128, 4, 1}, {256, 1, 1}, {16, 16, 1}, {8, 8, 1}};
#define NPC ((int)(sizeof point_cands / sizeof point_cands[0]))

const hr_gpu_family hri_fam_naive = {0, 0, {{32, 8, 1}, {32, 8, 1}}, point_cands, NPC,
                                    check_point, NULL, launch_point, hri_gpu_pass_one, 0};
const hr_gpu_family hri_fam_padded = {1, 0, {{32, 8, 1}, {32, 8, 1}}, point_cands, NPC,
                                     check_point, NULL, launch_point, hri_gpu_pass_one, 0};
const hr_gpu_family hri_fam_texture = {1, 0, {{32, 8, 1}, {32, 8, 1}}, point_cands, NPC,
                                      check_texture, prepare_texture, launch_texture, hri_gpu_pass_one, 0};
