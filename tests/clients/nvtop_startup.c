/* A third-party-style NVML client: follows nvtop's NVIDIA start-up as its public
 * source describes it (src/extract_gpuinfo_nvidia.c, gpuinfo_nvidia_init), written
 * here from that description, not copied:
 *   - dlopen "libnvidia-ml.so", else "libnvidia-ml.so.1";
 *   - resolve every symbol nvtop requires, taking the newest version first
 *     (nvmlInit_v2|nvmlInit, nvmlDeviceGetCount_v2|..., PciInfo_v3|_v2|plain,
 *     Graphics/ComputeRunningProcesses _v3|_v2|plain, MemoryInfo_v2|plain);
 *     one missing required symbol and nvtop gives up ("No GPU to monitor");
 *   - the optional ones (MPS processes, ECC, process utilization, MIG mode,
 *     NVLink, field values) may be absent;
 *   - nvmlInit, count, a handle and PCI info per GPU (a GPU without PCI info is
 *     skipped), then the static and dynamic reads of one refresh.
 * Prints one line per GPU it would monitor; exit 0 when at least one. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int ret_t;
typedef void* dev_t_;

typedef struct {
  char busIdLegacy[16];
  unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} pci_t;

typedef struct {
  unsigned gpu, memory;
} util_t;

typedef struct {
  unsigned long long total, free, used;
} mem_t;

typedef struct {
  unsigned pid;
  unsigned long long usedGpuMemory;
  unsigned gpuInstanceId, computeInstanceId;
} proc_t;

static void* lib;

static void* first(const char* a, const char* b, const char* c) {
  void* p = dlsym(lib, a);
  if (!p && b) p = dlsym(lib, b);
  if (!p && c) p = dlsym(lib, c);
  return p;
}

static const char* const kRequired[][3] = {
    {"nvmlInit_v2", "nvmlInit", NULL},
    {"nvmlShutdown", NULL, NULL},
    {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL},
    {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL},
    {"nvmlErrorString", NULL, NULL},
    {"nvmlDeviceGetName", NULL, NULL},
    {"nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo"},
    {"nvmlDeviceGetMaxPcieLinkGeneration", NULL, NULL},
    {"nvmlDeviceGetMaxPcieLinkWidth", NULL, NULL},
    {"nvmlDeviceGetTemperatureThreshold", NULL, NULL},
    {"nvmlDeviceGetClockInfo", NULL, NULL},
    {"nvmlDeviceGetMaxClockInfo", NULL, NULL},
    {"nvmlDeviceGetUtilizationRates", NULL, NULL},
    {"nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetMemoryInfo", NULL},
    {"nvmlDeviceGetCurrPcieLinkGeneration", NULL, NULL},
    {"nvmlDeviceGetCurrPcieLinkWidth", NULL, NULL},
    {"nvmlDeviceGetPcieThroughput", NULL, NULL},
    {"nvmlDeviceGetFanSpeed", NULL, NULL},
    {"nvmlDeviceGetTemperature", NULL, NULL},
    {"nvmlDeviceGetPowerUsage", NULL, NULL},
    {"nvmlDeviceGetEnforcedPowerLimit", NULL, NULL},
    {"nvmlDeviceGetEncoderUtilization", NULL, NULL},
    {"nvmlDeviceGetDecoderUtilization", NULL, NULL},
    {"nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
     "nvmlDeviceGetGraphicsRunningProcesses"},
    {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
     "nvmlDeviceGetComputeRunningProcesses"},
};

static const char* const kOptional[] = {
    "nvmlDeviceGetArchitecture",       "nvmlDeviceGetBusType",
    "nvmlDeviceGetMPSComputeRunningProcesses_v3", "nvmlDeviceGetTotalEccErrors",
    "nvmlDeviceGetProcessUtilization", "nvmlDeviceGetMigMode",
    "nvmlDeviceGetNvLinkState",        "nvmlDeviceGetNvLinkVersion",
    "nvmlDeviceGetFieldValues",
};

/* Process counts as nvtop asks: a null buffer first for the size. */
static int processes(const char* a, const char* b, const char* c, dev_t_ d) {
  ret_t (*fn)(dev_t_, unsigned*, proc_t*) = (ret_t(*)(dev_t_, unsigned*, proc_t*))first(a, b, c);
  unsigned n = 0;
  proc_t buf[64];
  if (!fn) return -1;
  ret_t r = fn(d, &n, NULL);
  if (r == 3) return -3; /* NOT_SUPPORTED: nvtop shows none */
  if (r != 0 && r != 7) return -r;
  n = 64;
  if (fn(d, &n, buf) != 0) return -1;
  return (int)n;
}

int main(void) {
  lib = dlopen("libnvidia-ml.so", RTLD_LAZY);
  if (!lib) lib = dlopen("libnvidia-ml.so.1", RTLD_LAZY);
  if (!lib) {
    printf("No GPU to monitor: %s\n", dlerror());
    return 1;
  }
  for (size_t i = 0; i < sizeof kRequired / sizeof kRequired[0]; ++i) {
    if (!first(kRequired[i][0], kRequired[i][1], kRequired[i][2])) {
      printf("No GPU to monitor: missing %s\n", kRequired[i][0]);
      return 1;
    }
  }
  int optional = 0;
  for (size_t i = 0; i < sizeof kOptional / sizeof kOptional[0]; ++i) optional += !!dlsym(lib, kOptional[i]);
  ret_t (*init)(void) = (ret_t(*)(void))first("nvmlInit_v2", "nvmlInit", NULL);
  ret_t (*shutdown)(void) = (ret_t(*)(void))dlsym(lib, "nvmlShutdown");
  const char* (*err)(ret_t) = (const char* (*)(ret_t))dlsym(lib, "nvmlErrorString");
  ret_t (*count)(unsigned*) = (ret_t(*)(unsigned*))first("nvmlDeviceGetCount_v2", "nvmlDeviceGetCount", NULL);
  ret_t (*handle)(unsigned, dev_t_*) =
      (ret_t(*)(unsigned, dev_t_*))first("nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex", NULL);
  ret_t (*pci)(dev_t_, pci_t*) =
      (ret_t(*)(dev_t_, pci_t*))first("nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPciInfo_v2", "nvmlDeviceGetPciInfo");
  ret_t (*name)(dev_t_, char*, unsigned) = (ret_t(*)(dev_t_, char*, unsigned))dlsym(lib, "nvmlDeviceGetName");
  ret_t (*util)(dev_t_, util_t*) = (ret_t(*)(dev_t_, util_t*))dlsym(lib, "nvmlDeviceGetUtilizationRates");
  ret_t (*mem)(dev_t_, mem_t*) = (ret_t(*)(dev_t_, mem_t*))dlsym(lib, "nvmlDeviceGetMemoryInfo");
  ret_t (*temp)(dev_t_, int, unsigned*) = (ret_t(*)(dev_t_, int, unsigned*))dlsym(lib, "nvmlDeviceGetTemperature");
  ret_t (*power)(dev_t_, unsigned*) = (ret_t(*)(dev_t_, unsigned*))dlsym(lib, "nvmlDeviceGetPowerUsage");
  ret_t (*gen)(dev_t_, unsigned*) = (ret_t(*)(dev_t_, unsigned*))dlsym(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
  ret_t (*enc)(dev_t_, unsigned*, unsigned*) =
      (ret_t(*)(dev_t_, unsigned*, unsigned*))dlsym(lib, "nvmlDeviceGetEncoderUtilization");
  ret_t r = init();
  if (r != 0) {
    printf("No GPU to monitor: nvmlInit: %s\n", err(r));
    return 1;
  }
  unsigned n = 0;
  if ((r = count(&n)) != 0) {
    printf("No GPU to monitor: count: %s\n", err(r));
    return 1;
  }
  unsigned seen = 0;
  for (unsigned i = 0; i < n; ++i) {
    dev_t_ d = NULL;
    pci_t p;
    if (handle(i, &d) != 0 || pci(d, &p) != 0) continue; /* nvtop skips it */
    char nm[96] = "";
    util_t u = {0, 0};
    mem_t m = {0, 0, 0};
    unsigned t = 0, mw = 0, g = 0, e = 0, period = 0;
    name(d, nm, sizeof nm);
    ret_t ur = util(d, &u);
    mem(d, &m);
    temp(d, 0, &t);
    power(d, &mw);
    gen(d, &g);
    enc(d, &e, &period);
    int gfx = processes("nvmlDeviceGetGraphicsRunningProcesses_v3", "nvmlDeviceGetGraphicsRunningProcesses_v2",
                        "nvmlDeviceGetGraphicsRunningProcesses", d);
    int cmp = processes("nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2",
                        "nvmlDeviceGetComputeRunningProcesses", d);
    char ustr[16];
    if (ur == 0) {
      snprintf(ustr, sizeof ustr, "%u%%", u.gpu);
    } else {
      snprintf(ustr, sizeof ustr, "N/A");
    }
    printf("GPU %u: %s | %s | util %s | mem %llu MiB | %u C | %u W | Gen%u | compute %d | graphics %d\n", i,
           nm, p.busId, ustr, m.used >> 20, t, mw / 1000, g, cmp, gfx);
    ++seen;
  }
  printf("optional symbols: %d of %zu\n", optional, sizeof kOptional / sizeof kOptional[0]);
  shutdown();
  if (seen == 0) {
    printf("No GPU to monitor\n");
    return 1;
  }
  return 0;
}
