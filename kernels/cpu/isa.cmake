# Per-file ISA flags for kernels/cpu (included by kernels/CMakeLists.txt).
# The library targets baseline x86-64; these files are entered only after
# dq_cpu_probe() has executed an instruction of their ISA successfully.
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/vecdot_avx2.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attn_avx2.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attn_avxvnni.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mavxvnni")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/gemm_avxvnni.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mavxvnni")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attn_avx512.c
    PROPERTIES COMPILE_OPTIONS
    "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/attn_avx512f.c
    PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma;-mf16c;-mavx512f")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/vecdot_avx512.c
    PROPERTIES COMPILE_OPTIONS
    "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-mavx512vnni;-mavx512bf16")
  # act_impl.h's activations: vectorized like ops.c, no FMA contraction
  # (the same bits as the baseline build)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/act_avx2.c
    PROPERTIES COMPILE_OPTIONS
    "-mavx2;-mfma;-mf16c;-ffp-contract=off;-ftree-vectorize;-fvect-cost-model=dynamic;-fno-trapping-math")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/act_avx512.c
    PROPERTIES COMPILE_OPTIONS
    "-mavx2;-mfma;-mf16c;-mavx512f;-mavx512bw;-mavx512vl;-mavx512dq;-ffp-contract=off;-ftree-vectorize;-fvect-cost-model=dynamic;-fno-trapping-math;-mprefer-vector-width=512")
endif()

# ops.c is plain C meant to be auto-vectorized at the baseline ISA: GCC's
# default -O2 cost model ("very cheap") skips loops of unknown trip count,
# and FP selects are if-converted only without -ftrapping-math (we never
# rely on FP exception flags).
if(CMAKE_C_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/ops.c
    PROPERTIES COMPILE_OPTIONS "-ftree-vectorize;-fvect-cost-model=dynamic;-fno-trapping-math")
endif()
