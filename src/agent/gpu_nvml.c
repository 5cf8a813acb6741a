/*
 * gpu_nvml.c - the NVML side of the GPU watch (gpu_watch.h): its own
 * thread, its own dlopen of the library (as discover.c; NVIDIA's
 * documented C API, declared here), events for XIDs and double-bit ECC
 * errors, and a look at every GPU's counters each interval.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/gpu_watch.h"
#include "util/error.h"
#include "util/log.h"

typedef struct nvml_device *nvml_dev;
typedef struct nvml_event_set *nvml_set;
struct nvml_event {
  nvml_dev device;
  unsigned long long type, data;
  unsigned gpu_instance, compute_instance;
};

#define NVML_SUCCESS 0
#define NVML_ERROR_TIMEOUT 10
#define NVML_ERROR_GPU_IS_LOST 15
#define EV_DBE 0x2ULL            /* nvmlEventTypeDoubleBitEccError */
#define EV_XID 0x8ULL            /* nvmlEventTypeXidCriticalError */
#define ECC_UNCORRECTED 1        /* NVML_MEMORY_ERROR_TYPE_UNCORRECTED */
#define ECC_VOLATILE 0           /* NVML_VOLATILE_ECC */
#define NVLINK_ERR_RECOVERY 1    /* NVML_NVLINK_ERROR_DL_RECOVERY */
#define NVLINKS 18
/* clock throttle reasons that mean the GPU protects itself: HW slowdown,
 * SW and HW thermal slowdown, HW power brake */
#define THROTTLE_BAD (0x8ULL | 0x20ULL | 0x40ULL | 0x80ULL)

struct nvml_fns {
  void *so;
  int (*init)(void);
  int (*shutdown)(void);
  int (*count)(unsigned *);
  int (*by_index)(unsigned, nvml_dev *);
  int (*set_create)(nvml_set *);
  int (*set_free)(nvml_set);
  int (*register_events)(nvml_dev, unsigned long long, nvml_set);
  int (*set_wait)(nvml_set, struct nvml_event *, unsigned);
  int (*ecc)(nvml_dev, int, int, unsigned long long *);
  int (*pages_pending)(nvml_dev, int *);
  int (*remapped)(nvml_dev, unsigned *, unsigned *, unsigned *, unsigned *);
  int (*throttle)(nvml_dev, unsigned long long *);
  int (*nvlink_err)(nvml_dev, unsigned, int, unsigned long long *);
};

/* What was last seen of one GPU: a finding is reported when it changes. */
struct seen {
  nvml_dev dev;
  unsigned long long dbe, throttle, nvlink[NVLINKS];
  bool pending, lost, primed;
};

struct nvml_watch {
  struct px_gpu_watch *w;
  struct nvml_fns f;
  nvml_set set;
  struct seen gpu[64];
  uint32_t n;
};

static int load(struct nvml_fns *f) {
  const char *lib = getenv("PHALANX_NVML_LIB") ? getenv("PHALANX_NVML_LIB") : "libnvidia-ml.so.1";
  memset(f, 0, sizeof *f);
  if (!(f->so = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) return PX_EUNSUPPORTED;
#define SYM(field, name) *(void **)&f->field = dlsym(f->so, name)
  SYM(init, "nvmlInit_v2");
  SYM(shutdown, "nvmlShutdown");
  SYM(count, "nvmlDeviceGetCount_v2");
  SYM(by_index, "nvmlDeviceGetHandleByIndex_v2");
  SYM(set_create, "nvmlEventSetCreate");
  SYM(set_free, "nvmlEventSetFree");
  SYM(register_events, "nvmlDeviceRegisterEvents");
  SYM(set_wait, "nvmlEventSetWait_v2");
  SYM(ecc, "nvmlDeviceGetTotalEccErrors");
  SYM(pages_pending, "nvmlDeviceGetRetiredPagesPendingStatus");
  SYM(remapped, "nvmlDeviceGetRemappedRows");
  SYM(throttle, "nvmlDeviceGetCurrentClocksThrottleReasons");
  SYM(nvlink_err, "nvmlDeviceGetNvLinkErrorCounter");
#undef SYM
  if (!f->init || !f->count || !f->by_index || f->init() != NVML_SUCCESS) {
    dlclose(f->so);
    return PX_EUNSUPPORTED;
  }
  return 0;
}

/* A finding on GPU gpu: the GPU's, or on a MIG node each of its instances'. */
static void found(struct nvml_watch *nw, uint32_t gpu, enum px_gpu_fault_class c, long long code, const char *detail) {
  struct px_gpu_fault f = {.gpu = gpu, .fault = c, .code = code};
  snprintf(f.node, sizeof f.node, "%s", nw->w->node);
  snprintf(f.detail, sizeof f.detail, "%s", detail);
  if (!nw->w->mig) return px_gpu_watch_add(nw->w, &f);
  for (uint32_t i = 0; i < nw->w->ngpus && i < 64; i++) {
    if (nw->w->parent[i] != gpu) continue;
    f.gpu = i;
    snprintf(f.detail, sizeof f.detail, "%.100s (on GPU %u)", detail, gpu);
    px_gpu_watch_add(nw->w, &f);
  }
}

/* rc of an NVML call on GPU i: a lost GPU is reported once, until it answers again. */
static bool answered(struct nvml_watch *nw, uint32_t i, int rc) {
  if (rc != NVML_ERROR_GPU_IS_LOST) return rc == NVML_SUCCESS;
  if (!nw->gpu[i].lost) found(nw, i, PX_GPU_FAULT_LOST, 0, "NVML: GPU is lost");
  nw->gpu[i].lost = true;
  return false;
}

static void look_ecc(struct nvml_watch *nw, uint32_t i, struct seen *g) {
  unsigned long long dbe = 0;
  if (!nw->f.ecc || !answered(nw, i, nw->f.ecc(g->dev, ECC_UNCORRECTED, ECC_VOLATILE, &dbe))) return;
  g->lost = false;
  if (g->primed && dbe > g->dbe) found(nw, i, PX_GPU_FAULT_ECC, (long long)(dbe - g->dbe), "double-bit ECC errors");
  g->dbe = dbe;
}

static void look_pending(struct nvml_watch *nw, uint32_t i, struct seen *g) {
  unsigned corr = 0, unc = 0, pending = 0, failed = 0;
  int pages = 0;
  bool now = false;
  if (nw->f.remapped && answered(nw, i, nw->f.remapped(g->dev, &corr, &unc, &pending, &failed)))
    now = pending || failed;
  else if (nw->f.pages_pending && answered(nw, i, nw->f.pages_pending(g->dev, &pages)))
    now = pages != 0;
  if (now && !g->pending) found(nw, i, PX_GPU_FAULT_REMAP, 0, failed ? "row remapping failed" : "memory rows pending retirement");
  g->pending = now;
}

static void look_throttle(struct nvml_watch *nw, uint32_t i, struct seen *g) {
  unsigned long long r = 0;
  if (!nw->f.throttle || !answered(nw, i, nw->f.throttle(g->dev, &r))) return;
  r &= THROTTLE_BAD;
  if (r & ~g->throttle) found(nw, i, PX_GPU_FAULT_THROTTLE, (long long)r, "clocks throttled (thermal or power brake)");
  g->throttle = r;
}

static void look_nvlink(struct nvml_watch *nw, uint32_t i, struct seen *g) {
  for (unsigned k = 0; nw->f.nvlink_err && k < NVLINKS; k++) {
    unsigned long long v = 0;
    if (nw->f.nvlink_err(g->dev, k, NVLINK_ERR_RECOVERY, &v) != NVML_SUCCESS) continue;
    if (g->primed && v > g->nvlink[k]) found(nw, i, PX_GPU_FAULT_NVLINK, k, "NVLink recovery errors");
    g->nvlink[k] = v;
  }
}

static void look(struct nvml_watch *nw) {
  for (uint32_t i = 0; i < nw->n; i++) {
    struct seen *g = &nw->gpu[i];
    look_ecc(nw, i, g);
    look_pending(nw, i, g);
    look_throttle(nw, i, g);
    look_nvlink(nw, i, g);
    g->primed = true; /* counts before the agent started are not news */
  }
}

static uint32_t gpu_of(const struct nvml_watch *nw, nvml_dev d) {
  for (uint32_t i = 0; i < nw->n; i++)
    if (nw->gpu[i].dev == d) return i;
  return UINT32_MAX;
}

/* Waits up to ms for an event; an XID is reported at once (a DBE event
 * only hastens the next look at the counters). */
static void wait_events(struct nvml_watch *nw, unsigned ms) {
  struct nvml_event ev;
  if (!nw->set || !nw->f.set_wait) {
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    return;
  }
  memset(&ev, 0, sizeof ev);
  if (nw->f.set_wait(nw->set, &ev, ms) != NVML_SUCCESS) return;
  uint32_t i = gpu_of(nw, ev.device);
  char detail[64];
  snprintf(detail, sizeof detail, "XID %llu", ev.data);
  if (i != UINT32_MAX && (ev.type & EV_XID)) found(nw, i, PX_GPU_FAULT_XID, (long long)ev.data, detail);
}

static void *thread_main(void *arg) {
  struct nvml_watch *nw = arg;
  while (!atomic_load(&nw->w->stop)) {
    look(nw);
    wait_events(nw, atomic_load(&nw->w->interval_ms));
  }
  if (nw->set && nw->f.set_free) nw->f.set_free(nw->set);
  if (nw->f.shutdown) nw->f.shutdown();
  dlclose(nw->f.so);
  free(nw);
  return NULL;
}

int px_gpu_watch_start_nvml(struct px_gpu_watch *w) {
  struct nvml_watch *nw = calloc(1, sizeof *nw);
  if (!nw) return PX_ENOMEM;
  nw->w = w;
  unsigned n = 0;
  if (load(&nw->f) || nw->f.count(&n) != NVML_SUCCESS) {
    if (nw->f.so) dlclose(nw->f.so);
    free(nw);
    return PX_EUNSUPPORTED;
  }
  for (unsigned i = 0; i < n && nw->n < 64; i++)
    if (nw->f.by_index(i, &nw->gpu[nw->n].dev) == NVML_SUCCESS) nw->n++;
  if (nw->f.set_create && nw->f.register_events && nw->f.set_create(&nw->set) == NVML_SUCCESS)
    for (uint32_t i = 0; i < nw->n; i++)
      if (nw->f.register_events(nw->gpu[i].dev, EV_XID | EV_DBE, nw->set) != NVML_SUCCESS)
        px_warn("GPU %u: NVML events not available; its XIDs go unseen", i);
  if (pthread_create(&w->thread, NULL, thread_main, nw)) {
    if (nw->set && nw->f.set_free) nw->f.set_free(nw->set);
    dlclose(nw->f.so);
    free(nw);
    return PX_ENOMEM;
  }
  w->started = true;
  px_info("watching %u GPUs through NVML (XID and ECC events, counters every %u ms)", nw->n,
          atomic_load(&w->interval_ms));
  return 0;
}
