/*
 * fake_nvml.c - a stand-in libnvidia-ml for the agent's discovery test: four
 * "H100" GPUs in two NVLink pairs (0-1 and 2-3), built by the test with cc
 * and loaded through PHALANX_NVML_LIB, so the dlopen path is exercised on a
 * machine without NVIDIA's driver. Only the calls the agent makes exist.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pci { char legacy[16]; unsigned domain, bus, device, id, sub; char bus_id[32]; };
struct mem { unsigned long long total, free, used; };
typedef long dev_t_;

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 4; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev_t_ *d) { *d = (dev_t_)i + 1; return i < 4 ? 0 : 2; }
/* With FAKE_NVML_MIG set, every GPU is in MIG mode, instance k of GPU g
 * being handle 100 + 8 * g + k: "1", two 3g.40gb instances each (GPU
 * instances 1 and 2); "mixed", GPUs 0 and 2 seven 1g.10gb (GPU instances
 * 7..13), GPUs 1 and 3 one 3g.40gb (GPU instance 1) and two 2g.20gb (3
 * and 4); "partial", GPUs 0 and 1 whole (MIG off) and GPUs 2 and 3 two
 * 3g.40gb each. Each GPU instance holds one compute instance, 0; a GPU's
 * minor number is its index. */
#define MIG(d) ((d) >= 100)
#define MIG_GPU(d) (((d) - 100) / 8)
#define MIG_K(d) (((d) - 100) % 8)
static int mixed(void) { return getenv("FAKE_NVML_MIG") && !strcmp(getenv("FAKE_NVML_MIG"), "mixed"); }
static int partial(void) { return getenv("FAKE_NVML_MIG") && !strcmp(getenv("FAKE_NVML_MIG"), "partial"); }
static unsigned per_gpu(long g) { return !mixed() ? 2 : g % 2 ? 3 : 7; }
static const char *profile(dev_t_ d) {
  if (!mixed()) return "3g.40gb";
  return MIG_GPU(d) % 2 == 0 ? "1g.10gb" : MIG_K(d) == 0 ? "3g.40gb" : "2g.20gb";
}
int nvmlDeviceGetName(dev_t_ d, char *buf, unsigned len) {
  if (MIG(d)) snprintf(buf, len, "NVIDIA H100 80GB HBM3 MIG %s", profile(d));
  else snprintf(buf, len, "NVIDIA H100 80GB HBM3");
  return 0;
}
int nvmlDeviceGetUUID(dev_t_ d, char *buf, unsigned len) {
  if (MIG(d)) snprintf(buf, len, "MIG-fake-%ld-%ld", MIG_GPU(d), MIG_K(d));
  else snprintf(buf, len, "GPU-fake-%ld", d - 1);
  return 0;
}
int nvmlDeviceGetMemoryInfo(dev_t_ d, struct mem *m) {
  m->total = (unsigned long long)(MIG(d) ? atoi(strchr(profile(d), '.') + 1) : 80) << 30;
  m->free = m->total;
  m->used = 0;
  return 0;
}
int nvmlDeviceGetMigMode(dev_t_ d, unsigned *cur, unsigned *pend) {
  *cur = *pend = getenv("FAKE_NVML_MIG") != NULL && !(partial() && d - 1 < 2);
  return 0;
}
int nvmlDeviceGetMaxMigDeviceCount(dev_t_ d, unsigned *n) { *n = 7; return 0; }
int nvmlDeviceGetMigDeviceHandleByIndex(dev_t_ d, unsigned k, dev_t_ *mig) {
  *mig = 100 + (d - 1) * 8 + k;
  return k < per_gpu(d - 1) ? 0 : 6; /* NVML_ERROR_NOT_FOUND */
}
int nvmlDeviceGetMinorNumber(dev_t_ d, unsigned *minor) { *minor = (unsigned)(d - 1); return 0; }
int nvmlDeviceGetGpuInstanceId(dev_t_ d, unsigned *id) {
  if (!MIG(d)) return 3; /* NVML_ERROR_NOT_SUPPORTED */
  *id = (unsigned)(!mixed() ? MIG_K(d) + 1 : MIG_GPU(d) % 2 == 0 ? MIG_K(d) + 7 : MIG_K(d) ? MIG_K(d) + 2 : 1);
  return 0;
}
int nvmlDeviceGetComputeInstanceId(dev_t_ d, unsigned *id) { *id = 0; return MIG(d) ? 0 : 3; }
static void bus(long i, struct pci *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02lX:00.0", 0x10 + i);
}
int nvmlDeviceGetPciInfo_v3(dev_t_ d, struct pci *p) { bus(d - 1, p); return 0; }
/* one active link per GPU, to its pair */
int nvmlDeviceGetNvLinkState(dev_t_ d, unsigned link, int *active) { *active = link == 0; return 0; }
int nvmlDeviceGetNvLinkRemotePciInfo_v2(dev_t_ d, unsigned link, struct pci *p) { bus((d - 1) ^ 1, p); return 0; }

/* ---- health (gpu_nvml.c): faults scripted in the file $FAKE_NVML_FAULTS,
 * one per line, appended by the test while the agent runs:
 *   xid GPU CODE       an XID event on GPU (delivered once, in order)
 *   ecc GPU N          N more volatile double-bit ECC errors
 *   remap GPU          rows pending remapping
 *   throttle GPU MASK  the current clock throttle reasons
 *   lost GPU           every later call on GPU answers GPU_IS_LOST (15) */
#include <stdlib.h>
#include <time.h>

static unsigned xids_delivered;

/* Scans the file: *found the count of kind lines for gpu (any gpu when
 * gpu < 0), *sum the sum of their values, *last the last value; for xid,
 * the n-th line's gpu and code. */
struct scan { unsigned found; unsigned long long sum, last; long nth_gpu; unsigned long long nth_code; };
static struct scan scan(const char *kind, long gpu, unsigned nth) {
  struct scan s = {0, 0, 0, -1, 0};
  const char *path = getenv("FAKE_NVML_FAULTS");
  FILE *f = path ? fopen(path, "r") : NULL;
  char k[16];
  long g;
  unsigned long long v;
  char line[128];
  while (f && fgets(line, sizeof line, f)) {
    int n = sscanf(line, "%15s %ld %llu", k, &g, &v);
    if (n < 2 || strcmp(k, kind) || (gpu >= 0 && g != gpu)) continue;
    if (n < 3) v = 0;
    if (s.found == nth) s.nth_gpu = g, s.nth_code = v;
    s.found++, s.sum += v, s.last = v;
  }
  if (f) fclose(f);
  return s;
}
static int lost(dev_t_ d) { return scan("lost", d - 1, 0).found ? 15 : 0; }

int nvmlEventSetCreate(void **set) { *set = (void *)1; return 0; }
int nvmlEventSetFree(void *set) { return 0; }
int nvmlDeviceRegisterEvents(dev_t_ d, unsigned long long types, void *set) { return 0; }
struct event { dev_t_ device; unsigned long long type, data; unsigned gi, ci; };
int nvmlEventSetWait_v2(void *set, struct event *e, unsigned ms) {
  for (unsigned waited = 0;; waited += 10) {
    struct scan s = scan("xid", -1, xids_delivered);
    if (s.found > xids_delivered) {
      xids_delivered++;
      e->device = s.nth_gpu + 1, e->type = 0x8, e->data = s.nth_code;
      return 0;
    }
    if (waited >= ms) return 10; /* NVML_ERROR_TIMEOUT */
    struct timespec ts = {0, 10000000L};
    nanosleep(&ts, NULL);
  }
}
int nvmlDeviceGetTotalEccErrors(dev_t_ d, int type, int counter, unsigned long long *n) {
  *n = scan("ecc", d - 1, 0).sum;
  return lost(d);
}
int nvmlDeviceGetRemappedRows(dev_t_ d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failed) {
  *corr = *unc = *failed = 0;
  *pending = scan("remap", d - 1, 0).found > 0;
  return lost(d);
}
int nvmlDeviceGetCurrentClocksThrottleReasons(dev_t_ d, unsigned long long *r) {
  *r = scan("throttle", d - 1, 0).last;
  return lost(d);
}
