/*
 * launch.cuh - the two spellings a kernel file needs that differ when
 * tests/cuda/cuemu.h runs the file's kernels on the CPU (DQ_CU_EMULATE):
 *
 *   DQ_CU_LAUNCH(k, grid, block, smem, stream)(args...)  k<<<...>>>(args)
 *   DQ_CU_DYN_SMEM(type, name);  the block's dynamic shared memory
 *
 * k must be one token or parenthesised-free of commas (a variable holding
 * a template instance).
 */
#ifndef DQ_CUDA_LAUNCH_CUH
#define DQ_CUDA_LAUNCH_CUH

#ifdef DQ_CU_EMULATE
#define DQ_CU_LAUNCH(k, grid, block, smem, stream)                             \
  ((void)(stream), cuemu_launch(k, dim3(grid), dim3(block), (size_t)(smem)))
#define DQ_CU_DYN_SMEM(type, name) type *name = (type *)cuemu_dyn_smem()
#else
#define DQ_CU_LAUNCH(k, grid, block, smem, stream)                             \
  k<<<grid, block, smem, stream>>>
#define DQ_CU_DYN_SMEM(type, name) extern __shared__ type name[]
#endif

#endif /* DQ_CUDA_LAUNCH_CUH */
