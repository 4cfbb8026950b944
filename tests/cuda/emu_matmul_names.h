/* matmul.cu's entry points as the emulated build names them (emu_matmul.cc
 * defines them, emu_test_quant.cc calls them). */
#define dq_cu_err_str emu_dq_cu_err_str
#define dq_cu_type_supported emu_dq_cu_type_supported
#define dq_cu_mm_free emu_dq_cu_mm_free
#define dq_cu_mm_new emu_dq_cu_mm_new
#define dq_cu_blas_load emu_dq_cu_blas_load
#define dq_cu_mm_last_step emu_dq_cu_mm_last_step
#define dq_cu_matmul emu_dq_cu_matmul
#define dq_cu_matmul_n emu_dq_cu_matmul_n
#define dq_cu_matmul_glu emu_dq_cu_matmul_glu
#define dq_cu_matvec_ids emu_dq_cu_matvec_ids
