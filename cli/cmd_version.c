/*
 * cmd_version.c - `docqa version`: docqa's version and those of the
 * libraries it was built with, the CPU kernels' SIMD path on this machine,
 * plus whether CUDA was built in and whether a device is present now.
 */
#include "cli.h"
#include "index.h"
#include "ingest.h"
#include "kernels.h"

static int run(dq_cli *cli, cli_option *opts) {
  dq_cuda_info cu;
  dq_cuda_probe(&cu);
  dq_cpu_caps cpu = dq_cpu_probe();
  char pcre2[64];
  dq_ingest_pcre2_version(pcre2, sizeof pcre2);
  char cuda_rt[32] = "not built", cublas[32] = "not built", dev[320];
  if (cu.built) {
    snprintf(cuda_rt, sizeof cuda_rt, "%d.%d", cu.runtime_version / 1000,
             (cu.runtime_version % 1000) / 10);
    snprintf(cublas, sizeof cublas, "%d.%d.%d", cu.cublas_version / 10000,
             (cu.cublas_version / 100) % 100, cu.cublas_version % 100);
    if (cu.n_devices > 0 && !cu.error[0])
      snprintf(dev, sizeof dev, "%s (sm_%d%d, %.1f GiB)", cu.device_name,
               cu.cc_major, cu.cc_minor,
               (double)cu.total_mem_bytes / (1024.0 * 1024 * 1024));
    else
      snprintf(dev, sizeof dev, "none (%s)",
               cu.error[0] ? cu.error : "no CUDA device found");
  } else {
    snprintf(dev, sizeof dev, "none (CUDA not built)");
  }
  if (cli->json) {
    json_t *o = json_object();
    json_object_set_new(o, "docqa", json_string(dq_version()));
    json_object_set_new(o, "sqlite", json_string(dq_index_sqlite_version()));
    json_object_set_new(o, "faiss", json_string(dq_index_faiss_version()));
    json_object_set_new(o, "libxml2", json_string(dq_ingest_libxml2_version()));
    json_object_set_new(o, "pcre2", json_string(pcre2));
    json_object_set_new(o, "poppler", json_string(dq_ingest_poppler_version()));
    json_object_set_new(o, "libzip", json_string(dq_ingest_libzip_version()));
    json_object_set_new(o, "tesseract", json_string(dq_ocr_version()));
    json_object_set_new(o, "tesseract_osd", json_boolean(dq_ocr_can_orient()));
    json_object_set_new(o, "jansson", json_string(JANSSON_VERSION));
    json_t *k = json_object();
    json_object_set_new(k, "path", json_string(dq_isa_name(cpu.isa)));
    json_object_set_new(k, "desc", json_string(cpu.desc));
    json_object_set_new(o, "cpu", k);
    json_t *c = json_object();
    json_object_set_new(c, "built", json_boolean(cu.built));
    json_object_set_new(c, "runtime", cu.built ? json_string(cuda_rt) : json_null());
    json_object_set_new(c, "cublas", cu.built ? json_string(cublas) : json_null());
    json_object_set_new(c, "devices", json_integer(cu.n_devices));
    json_object_set_new(c, "device", cu.n_devices > 0 && !cu.error[0]
                                         ? json_string(cu.device_name)
                                         : json_null());
    json_object_set_new(c, "error", cu.error[0] ? json_string(cu.error) : json_null());
    json_object_set_new(o, "cuda", c);
    cli_json_print(o);
    return DQ_EXIT_OK;
  }
  printf("docqa %s\n", dq_version());
  printf("  sqlite   %s\n", dq_index_sqlite_version());
  printf("  faiss    %s\n", dq_index_faiss_version());
  printf("  libxml2  %s\n", dq_ingest_libxml2_version());
  printf("  pcre2    %s\n", pcre2);
  printf("  poppler  %s\n", dq_ingest_poppler_version());
  printf("  libzip   %s\n", dq_ingest_libzip_version());
  printf("  tesseract %s (OCR of scans and images; %s)\n", dq_ocr_version(),
         dq_ocr_can_orient() ? "pages turned upright"
                             : "no orientation detection: Debian's "
                               "tesseract-ocr-osd");
  printf("  jansson  %s\n", JANSSON_VERSION);
  printf("  cpu      %s\n", cpu.desc);
  printf("  cuda     %s\n", cuda_rt);
  printf("  cublas   %s\n", cublas);
  printf("  device   %s\n", dev);
  return DQ_EXIT_OK;
}

cli_command cli_cmd_version = {
    .name = "version",
    .usage = "docqa version [--json]",
    .summary = "print versions of docqa and its libraries, CPU path and CUDA status",
    .help = "Shows the library versions docqa was built with, the CPU kernels'\n"
            "SIMD path on this machine (avx512 needs AVX-512 VNNI; avx2 uses\n"
            "AVX-VNNI where it works; DOCQA_CPU_ISA=avx2 or scalar caps it),\n"
            "whether the CUDA backend was compiled in, and whether a CUDA\n"
            "device is usable now.\n",
    .opts = NULL,
    .min_args = 0,
    .max_args = 0,
    .run = run,
};
