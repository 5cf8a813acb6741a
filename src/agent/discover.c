/* discover.c - CPUs, memory and GPUs of this node (discover.h). */
#include "agent/discover.h"

#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "util/error.h"

void px_discover_cpus(struct px_node_res *r) {
  cpu_set_t set;
  r->cpus = r->cores = 0;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return;
  /* A core is a (package, core_id) pair; threads of one core share it. */
  uint64_t seen[CPU_SETSIZE];
  uint32_t nseen = 0;
  for (int c = 0; c < CPU_SETSIZE; c++) {
    if (!CPU_ISSET(c, &set)) continue;
    r->cpus++;
    char path[128];
    long pkg = 0, core = c;
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
    FILE *f = fopen(path, "re");
    if (f) {
      if (fscanf(f, "%ld", &pkg) != 1) pkg = 0;
      fclose(f);
    }
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
    if ((f = fopen(path, "re"))) {
      if (fscanf(f, "%ld", &core) != 1) core = c;
      fclose(f);
    }
    uint64_t key = ((uint64_t)pkg << 32) | (uint32_t)core;
    bool dup = false;
    for (uint32_t i = 0; i < nseen && !dup; i++) dup = seen[i] == key;
    if (!dup) seen[nseen++] = key;
  }
  r->cores = nseen;
}

void px_discover_mem(struct px_node_res *r) {
  struct sysinfo si;
  r->mem_mib = sysinfo(&si) == 0 ? ((uint64_t)si.totalram * si.mem_unit) >> 20 : 0;
}

bool px_mig_profile(const char *type, uint32_t *slices, uint64_t *mem_mib) {
  unsigned g, gb;
  char tail;
  if (sscanf(type, "%ug.%ugb%c", &g, &gb, &tail) != 2 || g < 1 || g > 7 || gb < 1 || gb > 1024) return false;
  if (slices) *slices = 7 / g ? 7 / g : 1; /* instances of this profile one GPU holds */
  if (mem_mib) *mem_mib = (uint64_t)gb * 1024;
  return true;
}

/* "56:1g.10gb": N MIG instances of one profile, each GPU holding as many as
 * the profile allows (7 / g): UUIDs "MIG-EMU-<node>-<gpu>-<k>", the parent
 * GPU as their group (so a job's instances share a GPU when they can). */
static void emulate_mig(struct px_node_res *r, uint32_t n, const char *type, const char *node) {
  uint32_t per = 1;
  uint64_t mem = 0;
  px_mig_profile(type, &per, &mem);
  for (uint32_t i = 0; i < n; i++) {
    struct px_gpu_info *g = &r->gpus[i];
    g->group = i / per;
    g->mem_mib = mem;
    snprintf(g->uuid, sizeof g->uuid, "MIG-EMU-%.32s-%u-%u", node, (i / per) % 100, i % per);
  }
}

/* MIG instances of several profiles: types in name order, each type's in
 * discovery order, and indices renumbered so, as the server numbers a node's
 * GPUs of several types (conf.h gpu_types). Stable: one type keeps its
 * order. */
void px_mig_order(struct px_node_res *r) {
  if (!px_gpus_are_mig(r)) return;
  for (uint32_t i = 1; i < r->ngpus; i++) { /* insertion sort: stable, 64 at most */
    struct px_gpu_info g = r->gpus[i];
    uint32_t k = i;
    for (; k > 0 && strcmp(r->gpus[k - 1].type, g.type) > 0; k--) r->gpus[k] = r->gpus[k - 1];
    r->gpus[k] = g;
  }
  for (uint32_t i = 0; i < r->ngpus; i++) r->gpus[i].index = i;
}

/* "7:1g.10gb,1:3g.40gb,2:2g.20gb": MIG instances of several profiles, in
 * the order given, each on the first emulated GPU with slices left (a GPU
 * has 7; a profile "Ng" takes N): 7 x 1g.10gb fill GPU 0, and 3g.40gb and
 * two 2g.20gb share GPU 1. A type that is no profile ("2:h100") is whole
 * GPUs, not in MIG mode, beside them. */
static int emulate_mig_layout(struct px_node_res *r, const char *spec, const char *node) {
  uint32_t used[PX_MAX_NODE_GPUS] = {0}, ninst[PX_MAX_NODE_GPUS] = {0};
  r->ngpus = 0;
  r->emulated = true;
  for (const char *p = spec; *p;) {
    char type[32], *end;
    unsigned long n = strtoul(p, &end, 10);
    size_t len = *end == ':' ? strcspn(end + 1, ",") : 0;
    uint32_t slices = 0;
    uint64_t mem = 0;
    if (end == p || !len || len >= sizeof type || n > PX_MAX_NODE_GPUS - r->ngpus) return PX_EINVAL;
    memcpy(type, end + 1, len);
    type[len] = '\0';
    bool whole = !px_mig_profile(type, NULL, &mem);
    if (whole) slices = 7, mem = 81920; /* a GPU not in MIG mode, whole */
    else if (sscanf(type, "%ug", &slices) != 1) return PX_EINVAL;
    for (unsigned long i = 0; i < n; i++) {
      uint32_t gpu = 0;
      while (gpu < PX_MAX_NODE_GPUS && used[gpu] + slices > 7) gpu++;
      if (gpu == PX_MAX_NODE_GPUS) return PX_EINVAL;
      used[gpu] += slices;
      struct px_gpu_info *g = &r->gpus[r->ngpus];
      *g = (struct px_gpu_info){.index = r->ngpus, .group = gpu, .mem_mib = mem, .dev_minor = -1, .mig_gi = -1, .mig_ci = -1};
      snprintf(g->type, sizeof g->type, "%s", type);
      if (whole) snprintf(g->uuid, sizeof g->uuid, "GPU-EMU-%.32s-%u", node, gpu);
      else snprintf(g->uuid, sizeof g->uuid, "MIG-EMU-%.32s-%u-%u", node, gpu % 100, ninst[gpu]++);
      r->ngpus++;
    }
    p = end + 1 + len;
    if (*p == ',' && !*++p) return PX_EINVAL; /* a trailing comma */
  }
  px_mig_order(r);
  return 0;
}

int px_discover_gpus_emulated(struct px_node_res *r, const char *spec, const char *node) {
  if (strchr(spec, ',')) return emulate_mig_layout(r, spec, node);
  char *end;
  unsigned long n = strtoul(spec, &end, 10);
  if (end == spec || n > PX_MAX_NODE_GPUS) return PX_EINVAL;
  char type[32] = "emu";
  unsigned long groups = 1;
  if (*end == ':') {
    const char *t = end + 1;
    size_t len = strcspn(t, ":");
    if (len == 0 || len >= sizeof type) return PX_EINVAL;
    memcpy(type, t, len);
    type[len] = '\0';
    if (t[len] == ':') {
      groups = strtoul(t + len + 1, &end, 10);
      if (*end || groups == 0 || groups > n) return PX_EINVAL;
    }
  } else if (*end) {
    return PX_EINVAL;
  }
  r->ngpus = (uint32_t)n;
  r->emulated = true;
  for (uint32_t i = 0; i < n; i++) {
    struct px_gpu_info *g = &r->gpus[i];
    memset(g, 0, sizeof *g);
    g->dev_minor = g->mig_gi = g->mig_ci = -1;
    g->index = i;
    snprintf(g->uuid, sizeof g->uuid, "GPU-EMU-%.40s-%u", node, i);
    snprintf(g->type, sizeof g->type, "%s", type);
    g->mem_mib = 81920;
    g->group = (uint32_t)(i * groups / n); /* even islands, as GpuGroups= describes */
  }
  if (px_mig_profile(type, NULL, NULL)) emulate_mig(r, r->ngpus, type, node);
  return 0;
}

void px_gpu_group(const bool *linked, uint32_t n, uint32_t *group) {
  uint32_t parent[PX_MAX_NODE_GPUS];
  for (uint32_t i = 0; i < n; i++) parent[i] = i;
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++) {
      if (!linked[i * n + j]) continue;
      uint32_t a = i, b = j;
      while (parent[a] != a) a = parent[a];
      while (parent[b] != b) b = parent[b];
      if (a != b) parent[a > b ? a : b] = a < b ? a : b;
    }
  uint32_t next = 0, id_of_root[PX_MAX_NODE_GPUS];
  for (uint32_t i = 0; i < n; i++) id_of_root[i] = UINT32_MAX;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t r = i;
    while (parent[r] != r) r = parent[r];
    if (id_of_root[r] == UINT32_MAX) id_of_root[r] = next++;
    group[i] = id_of_root[r];
  }
}

/* ---- NVML, declared here from NVIDIA's documented C API ---------------- */

typedef struct nvml_device *nvml_dev;
struct nvml_memory { unsigned long long total, free, used; };
struct nvml_pci {
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
#define NVML_NVLINK_MAX_LINKS 18
#define NVML_TOPOLOGY_SYSTEM 50 /* levels below this share a NUMA node or better */

struct nvml {
  void *so;
  int (*init)(void);
  int (*shutdown)(void);
  int (*count)(unsigned *);
  int (*by_index)(unsigned, nvml_dev *);
  int (*name)(nvml_dev, char *, unsigned);
  int (*uuid)(nvml_dev, char *, unsigned);
  int (*mem)(nvml_dev, struct nvml_memory *);
  int (*pci)(nvml_dev, struct nvml_pci *);
  int (*link_state)(nvml_dev, unsigned, int *);
  int (*link_remote)(nvml_dev, unsigned, struct nvml_pci *);
  int (*ancestor)(nvml_dev, nvml_dev, int *);
  int (*mig_mode)(nvml_dev, unsigned *, unsigned *);
  int (*mig_max)(nvml_dev, unsigned *);
  int (*mig_by_index)(nvml_dev, unsigned, nvml_dev *);
  int (*minor)(nvml_dev, unsigned *);
  int (*gi_id)(nvml_dev, unsigned *);
  int (*ci_id)(nvml_dev, unsigned *);
};

static bool nvml_load(struct nvml *m, char *why, size_t whylen) {
  const char *lib = getenv("PHALANX_NVML_LIB") ? getenv("PHALANX_NVML_LIB") : "libnvidia-ml.so.1";
  memset(m, 0, sizeof *m);
  if (!(m->so = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
    snprintf(why, whylen, "NVML not available (%s)", dlerror());
    return false;
  }
  /* dlsym returns void *; POSIX guarantees the function pointer round trip */
#define SYM(field, name) *(void **)&m->field = dlsym(m->so, name)
  SYM(init, "nvmlInit_v2");
  SYM(shutdown, "nvmlShutdown");
  SYM(count, "nvmlDeviceGetCount_v2");
  SYM(by_index, "nvmlDeviceGetHandleByIndex_v2");
  SYM(name, "nvmlDeviceGetName");
  SYM(uuid, "nvmlDeviceGetUUID");
  SYM(mem, "nvmlDeviceGetMemoryInfo");
  SYM(pci, "nvmlDeviceGetPciInfo_v3");
  SYM(link_state, "nvmlDeviceGetNvLinkState");
  SYM(link_remote, "nvmlDeviceGetNvLinkRemotePciInfo_v2");
  SYM(ancestor, "nvmlDeviceGetTopologyCommonAncestor");
  SYM(mig_mode, "nvmlDeviceGetMigMode");
  SYM(mig_max, "nvmlDeviceGetMaxMigDeviceCount");
  SYM(mig_by_index, "nvmlDeviceGetMigDeviceHandleByIndex");
  SYM(minor, "nvmlDeviceGetMinorNumber");
  SYM(gi_id, "nvmlDeviceGetGpuInstanceId");
  SYM(ci_id, "nvmlDeviceGetComputeInstanceId");
#undef SYM
  if (!m->init || !m->count || !m->by_index || !m->uuid) {
    snprintf(why, whylen, "NVML in %s lacks the required functions", lib);
    dlclose(m->so);
    return false;
  }
  return true;
}

/* "NVIDIA H100 80GB HBM3" -> "h100": the first word with a digit, lowercased. */
static void short_type(const char *name, char *out, size_t size) {
  char buf[96];
  snprintf(buf, sizeof buf, "%s", name);
  const char *pick = name;
  for (char *tok = strtok(buf, " -"); tok; tok = strtok(NULL, " -"))
    if (strpbrk(tok, "0123456789") && strcmp(tok, "NVIDIA") != 0) {
      pick = tok;
      break;
    }
  size_t i = 0;
  for (; pick[i] && i + 1 < size; i++) out[i] = (char)(pick[i] >= 'A' && pick[i] <= 'Z' ? pick[i] + 32 : pick[i]);
  out[i] = '\0';
}

static void nvml_links(struct nvml *m, nvml_dev *dev, uint32_t n, bool *linked) {
  struct nvml_pci pci[PX_MAX_NODE_GPUS];
  bool any_link = false;
  int sw = -1; /* first GPU seen on an NVSwitch: the island's anchor */
  for (uint32_t i = 0; i < n; i++) pci[i].bus_id[0] = m->pci && m->pci(dev[i], &pci[i]) == 0 ? pci[i].bus_id[0] : '\0';
  for (uint32_t i = 0; m->link_state && m->link_remote && i < n; i++) {
    for (unsigned k = 0; k < NVML_NVLINK_MAX_LINKS; k++) {
      int active = 0;
      struct nvml_pci rp;
      if (m->link_state(dev[i], k, &active) != 0 || !active || m->link_remote(dev[i], k, &rp) != 0) continue;
      any_link = true;
      bool gpu = false;
      for (uint32_t j = 0; j < n; j++)
        if (j != i && pci[j].bus_id[0] && strcmp(pci[j].bus_id, rp.bus_id) == 0)
          gpu = linked[i * n + j] = linked[j * n + i] = true;
      if (!gpu && sw < 0) sw = (int)i;
      if (!gpu && sw >= 0) linked[i * n + (uint32_t)sw] = linked[(uint32_t)sw * n + i] = true;
    }
  }
  if (any_link || !m->ancestor) return;
  /* No NVLink: GPUs under one NUMA node form a group. */
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t j = i + 1; j < n; j++) {
      int level = NVML_TOPOLOGY_SYSTEM;
      if (m->ancestor(dev[i], dev[j], &level) == 0 && level < NVML_TOPOLOGY_SYSTEM)
        linked[i * n + j] = linked[j * n + i] = true;
    }
}

static void group_by_links(struct nvml *m, nvml_dev *dev, uint32_t n, struct px_node_res *r) {
  static bool linked[PX_MAX_NODE_GPUS * PX_MAX_NODE_GPUS];
  memset(linked, 0, sizeof linked);
  nvml_links(m, dev, n, linked);
  uint32_t group[PX_MAX_NODE_GPUS];
  px_gpu_group(linked, n, group);
  for (uint32_t i = 0; i < n; i++) r->gpus[i].group = group[i];
}

bool px_gpus_are_mig(const struct px_node_res *r) {
  for (uint32_t i = 0; i < r->ngpus; i++)
    if (!strncmp(r->gpus[i].uuid, "MIG-", 4)) return true;
  return false;
}

/* One GPU (or MIG instance) handle into r's next entry: name, UUID, memory. */
static void describe(struct nvml *m, nvml_dev d, struct px_node_res *r, uint32_t group) {
  struct px_gpu_info *g = &r->gpus[r->ngpus];
  memset(g, 0, sizeof *g);
  g->index = r->ngpus;
  g->group = group;
  g->dev_minor = g->mig_gi = g->mig_ci = -1;
  char name[96] = "";
  if (m->name) m->name(d, name, sizeof name);
  const char *mig = strstr(name, "MIG ");
  if (mig) snprintf(g->type, sizeof g->type, "%s", mig + 4); /* "NVIDIA H100 80GB HBM3 MIG 1g.10gb" */
  else short_type(name, g->type, sizeof g->type);
  m->uuid(d, g->uuid, sizeof g->uuid);
  struct nvml_memory mem;
  if (m->mem && m->mem(d, &mem) == 0) g->mem_mib = mem.total >> 20;
  r->ngpus++;
}

/* What names an instance's device nodes (mig_dev.h): its parent's
 * /dev/nvidiaN minor, its GPU and compute instance ids (-1 where NVML
 * does not say). */
static void mig_ids(struct nvml *m, nvml_dev parent, nvml_dev mi, struct px_gpu_info *g) {
  unsigned v;
  if (m->minor && m->minor(parent, &v) == 0 && v < 256) g->dev_minor = (int32_t)v;
  if (m->gi_id && m->gi_id(mi, &v) == 0 && v < 1024) g->mig_gi = (int32_t)v;
  if (m->ci_id && m->ci_id(mi, &v) == 0 && v < 1024) g->mig_ci = (int32_t)v;
}

/* A GPU in MIG mode: its instances become the node's GPUs (group: the
 * parent GPU). false when MIG is off (or NVML has no MIG calls). */
static bool mig_instances(struct nvml *m, nvml_dev d, uint32_t parent, struct px_node_res *r) {
  unsigned cur = 0, pend = 0, max = 0;
  if (!m->mig_mode || !m->mig_max || !m->mig_by_index || m->mig_mode(d, &cur, &pend) != 0 || cur != 1 ||
      m->mig_max(d, &max) != 0)
    return false;
  for (unsigned k = 0; k < max && r->ngpus < PX_MAX_NODE_GPUS; k++) {
    nvml_dev mi;
    if (m->mig_by_index(d, k, &mi) != 0) continue;
    describe(m, mi, r, parent);
    mig_ids(m, d, mi, &r->gpus[r->ngpus - 1]);
  }
  return true;
}

int px_discover_gpus_nvml(struct px_node_res *r, char *why, size_t whylen) {
  struct nvml m;
  if (!nvml_load(&m, why, whylen)) return PX_EUNSUPPORTED;
  unsigned n = 0;
  int rc = m.init();
  if (rc != 0 || m.count(&n) != 0) {
    snprintf(why, whylen, "NVML initialisation failed (code %d)", rc);
    dlclose(m.so);
    return PX_EUNSUPPORTED;
  }
  if (n > PX_MAX_NODE_GPUS) n = PX_MAX_NODE_GPUS;
  nvml_dev dev[PX_MAX_NODE_GPUS];
  uint32_t got = 0;
  bool mig = false;
  r->ngpus = 0;
  for (unsigned i = 0; i < n; i++) {
    if (m.by_index(i, &dev[got]) != 0) continue;
    if (mig_instances(&m, dev[got], got, r)) {
      mig = true;
      got++;
      continue;
    }
    describe(&m, dev[got], r, got); /* beside MIG instances, a whole GPU is its own parent */
    struct px_gpu_info *g = &r->gpus[r->ngpus - 1];
    unsigned minor;
    g->index = i;
    if (m.minor && m.minor(dev[got], &minor) == 0 && minor < 256) g->dev_minor = (int32_t)minor;
    got++;
  }
  r->emulated = false;
  if (!mig) group_by_links(&m, dev, got, r); /* MIG instances are grouped by their GPU */
  px_mig_order(r);
  if (m.shutdown) m.shutdown();
  dlclose(m.so);
  return 0;
}
