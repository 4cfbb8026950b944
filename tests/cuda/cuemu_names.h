/*
 * cuemu_names.h - the CUDA runtime calls our code makes, renamed to the
 * emulator's (tests/cuda/cuemu.cc), for C and C++ files built for the
 * emulated device; force-included (-include) before any CUDA header, so
 * cuda_runtime_api.h declares the renamed functions.
 */
#ifndef DQ_TESTS_CUEMU_NAMES_H
#define DQ_TESTS_CUEMU_NAMES_H

#define cudaGetDevice cuemu_GetDevice
#define cudaDeviceGetAttribute cuemu_DeviceGetAttribute
#define cudaGetLastError cuemu_GetLastError
#define cudaPeekAtLastError cuemu_PeekAtLastError
#define cudaGetErrorString cuemu_GetErrorString
#define cudaMalloc cuemu_Malloc
#define cudaFree cuemu_Free
#define cudaMallocAsync cuemu_MallocAsync
#define cudaFreeAsync cuemu_FreeAsync
#define cudaMemcpy cuemu_Memcpy
#define cudaMemcpyAsync cuemu_MemcpyAsync
#define cudaMemset cuemu_Memset
#define cudaMemsetAsync cuemu_MemsetAsync
#define cudaStreamSynchronize cuemu_StreamSynchronize
#define cudaStreamCreate cuemu_StreamCreate
#define cudaStreamDestroy cuemu_StreamDestroy
#define cudaDeviceSynchronize cuemu_DeviceSynchronize
#define cudaGetDeviceCount cuemu_GetDeviceCount
#define cudaFuncSetAttribute cuemu_FuncSetAttribute
#define cudaFuncGetAttributes cuemu_FuncGetAttributes
#define cudaSetDevice cuemu_SetDevice
#define cudaStreamCreateWithFlags cuemu_StreamCreateWithFlags
#define cudaMallocHost cuemu_MallocHost
#define cudaFreeHost cuemu_FreeHost
#define cudaDeviceGetDefaultMemPool cuemu_DeviceGetDefaultMemPool
#define cudaMemPoolSetAttribute cuemu_MemPoolSetAttribute
#define cudaStreamBeginCapture cuemu_StreamBeginCapture
#define cudaStreamEndCapture cuemu_StreamEndCapture
#define cudaGraphInstantiate cuemu_GraphInstantiate
#define cudaGraphExecUpdate cuemu_GraphExecUpdate
#define cudaGraphLaunch cuemu_GraphLaunch
#define cudaGraphDestroy cuemu_GraphDestroy
#define cudaGraphExecDestroy cuemu_GraphExecDestroy
#define cudaRuntimeGetVersion cuemu_RuntimeGetVersion
#define cudaDriverGetVersion cuemu_DriverGetVersion
#define cudaGetDeviceProperties cuemu_GetDeviceProperties
#define cudaEventCreate cuemu_EventCreate
#define cudaEventDestroy cuemu_EventDestroy
#define cudaEventRecord cuemu_EventRecord
#define cudaEventSynchronize cuemu_EventSynchronize
#define cudaEventElapsedTime cuemu_EventElapsedTime

#endif /* DQ_TESTS_CUEMU_NAMES_H */
