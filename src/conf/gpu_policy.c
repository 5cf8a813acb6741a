/* gpu_policy.c - GpuFaultPolicy= (gpu_policy.h). */
#include "conf/gpu_policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fault_names[] = {
#define PX_GPU_FAULT_NAME(k, name) name,
    PX_GPU_FAULTS(PX_GPU_FAULT_NAME)
#undef PX_GPU_FAULT_NAME
};

static const struct {
  const char *name;
  unsigned bit;
} action_names[] = {{"gpu", PX_GPU_ACT_GPU}, {"drain", PX_GPU_ACT_DRAIN}, {"requeue", PX_GPU_ACT_REQUEUE},
                    {"fail", PX_GPU_ACT_FAIL}, {"grace", PX_GPU_ACT_GRACE}, {"none", 0}};
#define NACTIONS (sizeof action_names / sizeof action_names[0])

const char *px_gpu_fault_name(enum px_gpu_fault_class c) {
  return (unsigned)c < PX_GPU_FAULT_COUNT ? fault_names[c] : NULL;
}

bool px_gpu_fault_parse(const char *name, enum px_gpu_fault_class *out) {
  for (unsigned k = 0; name && k < PX_GPU_FAULT_COUNT; k++)
    if (!strcmp(fault_names[k], name)) {
      *out = (enum px_gpu_fault_class)k;
      return true;
    }
  return false;
}

void px_gpu_policy_defaults(struct px_gpu_policy *p) {
  memset(p, 0, sizeof *p);
  p->actions[PX_GPU_FAULT_XID] = PX_GPU_ACT_GPU | PX_GPU_ACT_REQUEUE;
  p->actions[PX_GPU_FAULT_ECC] = PX_GPU_ACT_GPU | PX_GPU_ACT_REQUEUE;
  p->actions[PX_GPU_FAULT_REMAP] = PX_GPU_ACT_GPU;
  p->actions[PX_GPU_FAULT_LOST] = PX_GPU_ACT_GPU | PX_GPU_ACT_DRAIN | PX_GPU_ACT_REQUEUE;
  p->actions[PX_GPU_FAULT_THROTTLE] = 0;
  p->actions[PX_GPU_FAULT_NVLINK] = PX_GPU_ACT_GPU | PX_GPU_ACT_REQUEUE;
  static const uint32_t app_xids[] = {13, 31, 43, 45};
  for (size_t i = 0; i < sizeof app_xids / sizeof app_xids[0]; i++) p->xid[p->nxid++] = app_xids[i];
  p->quarantine_faults = 3;
  p->node_flap_faults = 6;
  p->quarantine_window_s = 86400;
  p->health_interval_ms = 500;
}

/* "gpu+drain" -> bits; -1 with why on a bad word or a bad mix. */
static int parse_actions(const char *s, size_t len, unsigned *out, char *why, size_t whylen) {
  unsigned bits = 0;
  bool none = false;
  for (size_t i = 0; i < len;) {
    size_t w = i;
    while (w < len && s[w] != '+') w++;
    size_t k = 0;
    while (k < NACTIONS && !(strlen(action_names[k].name) == w - i && !strncmp(action_names[k].name, s + i, w - i)))
      k++;
    if (k == NACTIONS) {
      snprintf(why, whylen, "action '%.*s' is not one of gpu drain requeue grace fail none", (int)(w - i), s + i);
      return -1;
    }
    bits |= action_names[k].bit;
    none |= action_names[k].bit == 0;
    i = w + 1;
  }
  if (!len || (none && bits)) {
    snprintf(why, whylen, "%s", !len ? "no action" : "none goes alone");
    return -1;
  }
  if ((bits & PX_GPU_ACT_REQUEUE) && (bits & PX_GPU_ACT_FAIL)) {
    snprintf(why, whylen, "requeue and fail exclude each other");
    return -1;
  }
  if ((bits & PX_GPU_ACT_GRACE) && !(bits & PX_GPU_ACT_REQUEUE)) {
    snprintf(why, whylen, "grace goes with requeue");
    return -1;
  }
  *out = bits;
  return 0;
}

static int set_xid(struct px_gpu_policy *p, uint32_t xid, unsigned bits, char *why, size_t whylen) {
  uint32_t i = 0;
  while (i < p->nxid && p->xid[i] != xid) i++;
  if (i == PX_GPU_POLICY_XIDS) {
    snprintf(why, whylen, "at most %d XIDs of their own", PX_GPU_POLICY_XIDS);
    return -1;
  }
  if (i == p->nxid) p->nxid++;
  p->xid[i] = xid;
  p->xid_actions[i] = bits;
  return 0;
}

/* One CLASS:ACTIONS item into q. */
static int parse_item(struct px_gpu_policy *q, const char *s, size_t len, char *why, size_t whylen) {
  const char *colon = memchr(s, ':', len);
  char name[24];
  size_t nlen = colon ? (size_t)(colon - s) : len;
  snprintf(name, sizeof name, "%.*s", (int)(nlen < sizeof name ? nlen : sizeof name - 1), s);
  if (!colon) {
    snprintf(why, whylen, "item '%.*s': want CLASS:ACTIONS", (int)len, s);
    return -1;
  }
  unsigned bits;
  char aw[128];
  if (parse_actions(colon + 1, len - nlen - 1, &bits, aw, sizeof aw)) {
    snprintf(why, whylen, "item '%.*s': %s", (int)len, s, aw);
    return -1;
  }
  enum px_gpu_fault_class c;
  if (px_gpu_fault_parse(name, &c) && nlen < sizeof name) {
    q->actions[c] = bits;
    return 0;
  }
  char *end;
  unsigned long xid = !strncmp(name, "xid", 3) && name[3] >= '0' && name[3] <= '9' ? strtoul(name + 3, &end, 10) : 0;
  if (!xid || *end || xid > 1000 || nlen >= sizeof name) {
    snprintf(why, whylen, "item '%.*s': class '%.*s' is not one of xid ecc remap lost throttle nvlink or xidN",
             (int)len, s, (int)nlen, s);
    return -1;
  }
  if (set_xid(q, (uint32_t)xid, bits, aw, sizeof aw)) {
    snprintf(why, whylen, "item '%.*s': %s", (int)len, s, aw);
    return -1;
  }
  return 0;
}

int px_gpu_policy_parse(struct px_gpu_policy *p, const char *text, char *why, size_t whylen) {
  struct px_gpu_policy q = *p;
  for (const char *s = text; *s;) {
    size_t len = strcspn(s, ",");
    if (parse_item(&q, s, len, why, whylen)) return -1;
    s += len;
    if (*s == ',') s++;
  }
  *p = q;
  return 0;
}

unsigned px_gpu_policy_actions(const struct px_gpu_policy *p, enum px_gpu_fault_class c, int64_t code) {
  if ((unsigned)c >= PX_GPU_FAULT_COUNT) return 0;
  if (c == PX_GPU_FAULT_XID)
    for (uint32_t i = 0; i < p->nxid; i++)
      if ((int64_t)p->xid[i] == code) return p->xid_actions[i];
  return p->actions[c];
}

void px_gpu_actions_text(unsigned actions, char *buf, size_t size) {
  size_t used = 0;
  buf[0] = '\0';
  for (size_t k = 0; k < NACTIONS; k++)
    if (actions & action_names[k].bit && used < size)
      used += (size_t)snprintf(buf + used, size - used, "%s%s", used ? "+" : "", action_names[k].name);
  if (!used) snprintf(buf, size, "none");
}
