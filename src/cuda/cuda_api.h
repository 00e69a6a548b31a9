/* What the C side asks of the CUDA side. Without CUDA, src/common/gpu_stub.c answers. */
#ifndef HR_CUDA_API_H
#define HR_CUDA_API_H

#ifdef __cplusplus
extern "C" {
#endif

/* Number of usable CUDA devices (0 without CUDA, without a driver, or without a GPU). */
int hr_cuda_device_count(void);

#ifdef __cplusplus
}
#endif
#endif
