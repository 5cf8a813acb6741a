/*
 * fake_nvml.c - a stand-in libnvidia-ml for the agent's discovery test: four
 * "H100" GPUs in two NVLink pairs (0-1 and 2-3), built by the test with cc
 * and loaded through PHALANX_NVML_LIB, so the dlopen path is exercised on a
 * machine without NVIDIA's driver. Only the calls the agent makes exist.
 */
#include <stdio.h>
#include <string.h>

struct pci { char legacy[16]; unsigned domain, bus, device, id, sub; char bus_id[32]; };
struct mem { unsigned long long total, free, used; };
typedef long dev_t_;

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned *n) { *n = 4; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned i, dev_t_ *d) { *d = (dev_t_)i + 1; return i < 4 ? 0 : 2; }
int nvmlDeviceGetName(dev_t_ d, char *buf, unsigned len) { snprintf(buf, len, "NVIDIA H100 80GB HBM3"); return 0; }
int nvmlDeviceGetUUID(dev_t_ d, char *buf, unsigned len) { snprintf(buf, len, "GPU-fake-%ld", d - 1); return 0; }
int nvmlDeviceGetMemoryInfo(dev_t_ d, struct mem *m) { m->total = 80ULL << 30; m->free = m->total; m->used = 0; return 0; }
static void bus(long i, struct pci *p) {
  memset(p, 0, sizeof *p);
  snprintf(p->bus_id, sizeof p->bus_id, "00000000:%02lX:00.0", 0x10 + i);
}
int nvmlDeviceGetPciInfo_v3(dev_t_ d, struct pci *p) { bus(d - 1, p); return 0; }
/* one active link per GPU, to its pair */
int nvmlDeviceGetNvLinkState(dev_t_ d, unsigned link, int *active) { *active = link == 0; return 0; }
int nvmlDeviceGetNvLinkRemotePciInfo_v2(dev_t_ d, unsigned link, struct pci *p) { bus((d - 1) ^ 1, p); return 0; }
