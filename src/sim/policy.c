/*
 * policy.c - reads policy files (policy.h). A table maps each key to a
 * setter; values are checked strictly (strtoul with end and range checks).
 * The string-valued keys (SchedulerType, ...) must name one of the values
 * the core knows, and point at static strings, so a policy owns no memory.
 */
#include "sim/policy.h"

#include <ctype.h>
#include <stdbool.h>
#include <stddef.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/units.h"

static const char *const sched_types[] = {"sched/builtin", "sched/backfill", NULL};
static const char *const prio_types[] = {"priority/multifactor", "priority/basic", NULL};
static const char *const preempt_types[] = {"preempt/none", "preempt/qos", "preempt/partition_prio", NULL};

static int one_of(const char *v, const char *const *set, const char **out) {
  for (size_t i = 0; set[i]; i++) {
    if (strcasecmp(v, set[i]) == 0) {
      *out = set[i];
      return 0;
    }
  }
  return PX_EPARSE;
}

static int parse_u32(const char *v, uint32_t *out) {
  char *end;
  errno = 0;
  if (!isdigit((unsigned char)v[0])) return PX_EPARSE;
  unsigned long x = strtoul(v, &end, 10);
  if (*end || errno || x > UINT32_MAX) return PX_EPARSE;
  *out = (uint32_t)x;
  return 0;
}

/* Slurm durations (util/units.h); UNLIMITED makes no sense for a half-life or an age. */
static int parse_duration(const char *v, int64_t *out) {
  int64_t x;
  if (px_duration_parse(v, &x, NULL) || x == PX_TIME_UNLIMITED || x < 0) return PX_EPARSE;
  *out = x;
  return 0;
}

/* LasThresholds=3600,36000: GPU-seconds, positive, strictly ascending, at
 * most PX_LAS_MAX_THRESHOLDS. */
static int parse_thresholds(const char *v, struct px_conf_sched *s) {
  int64_t t[PX_LAS_MAX_THRESHOLDS];
  uint32_t n = 0;
  for (const char *p = v;;) {
    char *end;
    errno = 0;
    if (n == PX_LAS_MAX_THRESHOLDS || !isdigit((unsigned char)*p)) return PX_EPARSE;
    long long x = strtoll(p, &end, 10);
    if (errno || x <= 0 || (n && x <= t[n - 1])) return PX_EPARSE;
    t[n++] = x;
    if (*end == '\0') break;
    if (*end != ',') return PX_EPARSE;
    p = end + 1;
  }
  memcpy(s->las_thresholds_gpu_s, t, n * sizeof *t);
  s->las_nthresholds = n;
  return 0;
}

/*
 * SchedulerParameters=opt=N,... with Slurm's names, as slurm.conf reads them
 * (src/conf/slurm.c): bf_interval (seconds), bf_max_job_test,
 * default_queue_depth, bf_window (minutes), bf_resolution (seconds).
 * bf_continue is accepted and changes nothing (a simulated pass is never
 * interrupted); any other option is an error: the simulator cannot honour it.
 */
static int sched_param(struct px_conf_sched *s, const char *item) {
  const char *eq = strchr(item, '=');
  size_t klen = eq ? (size_t)(eq - item) : strlen(item);
  uint32_t v = 0;
  if (klen == 11 && !strncasecmp(item, "bf_continue", klen)) return eq ? PX_EPARSE : 0;
  if (!eq || parse_u32(eq + 1, &v)) return PX_EPARSE;
  if (klen == 11 && !strncasecmp(item, "bf_interval", klen) && v <= 86400) s->bf_interval_s = v;
  else if (klen == 15 && !strncasecmp(item, "bf_max_job_test", klen)) s->bf_max_job_test = s->backfill_depth = v;
  else if (klen == 19 && !strncasecmp(item, "default_queue_depth", klen)) s->default_queue_depth = v;
  else if (klen == 9 && !strncasecmp(item, "bf_window", klen) && v <= 100000000) s->backfill_window_s = (int64_t)v * 60;
  else if (klen == 13 && !strncasecmp(item, "bf_resolution", klen) && v > 0) s->backfill_resolution_s = v;
  else return PX_EPARSE;
  return 0;
}

static int sched_params(struct px_conf_sched *s, const char *v, int lineno, struct px_diag *d) {
  char buf[512];
  if (!*v || strlen(v) >= sizeof buf)
    return px_diag_set(d, PX_EPARSE, -1, "line %d: SchedulerParameters: empty or over 511 characters", lineno);
  snprintf(buf, sizeof buf, "%s", v);
  char *save = NULL;
  struct px_conf_sched next = *s;
  for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save))
    if (sched_param(&next, it))
      return px_diag_set(d, PX_EPARSE, -1,
                         "line %d: SchedulerParameters: %.64s: expected bf_interval=0..86400, bf_max_job_test=N, "
                         "default_queue_depth=N, bf_window=MINUTES, bf_resolution=SECONDS>0 or bf_continue",
                         lineno, it);
  *s = next;
  return 0;
}

static int set_key(struct px_sim_policy *p, const char *k, const char *v) {
  struct px_conf_sched *s = &p->sched;
  if (!strcasecmp(k, "PolicyName")) {
    if (!*v || strlen(v) >= sizeof p->name) return PX_EPARSE;
    snprintf(p->name, sizeof p->name, "%s", v);
    return 0;
  }
  if (!strcasecmp(k, "SchedulerType")) {
    int rc = one_of(v, sched_types, &s->scheduler_type);
    if (!rc && s->scheduler_type == sched_types[0]) s->backfill = PX_BACKFILL_NONE;
    if (!rc && s->scheduler_type == sched_types[1] && s->backfill == PX_BACKFILL_NONE)
      s->backfill = PX_BACKFILL_EASY; /* Slurm's sched/backfill reserves for the top job */
    return rc;
  }
  if (!strcasecmp(k, "BackfillMode")) {
    if (!strcasecmp(v, "none")) s->backfill = PX_BACKFILL_NONE;
    else if (!strcasecmp(v, "easy")) s->backfill = PX_BACKFILL_EASY;
    else if (!strcasecmp(v, "conservative")) s->backfill = PX_BACKFILL_CONSERVATIVE;
    else return PX_EPARSE;
    if (s->backfill != PX_BACKFILL_NONE) s->scheduler_type = sched_types[1];
    return 0;
  }
  if (!strcasecmp(k, "BackfillDepth")) return parse_u32(v, &s->backfill_depth);
  if (!strcasecmp(k, "BackfillWindow")) return parse_duration(v, &s->backfill_window_s);
  if (!strcasecmp(k, "BackfillResolution")) {
    uint32_t x;
    if (parse_u32(v, &x) || x == 0) return PX_EPARSE;
    s->backfill_resolution_s = x;
    return 0;
  }
  if (!strcasecmp(k, "PriorityType")) return one_of(v, prio_types, &s->priority_type);
  if (!strcasecmp(k, "PriorityOrder")) {
    if (!strcasecmp(v, "multifactor")) s->order = PX_ORDER_MULTIFACTOR;
    else if (!strcasecmp(v, "fifo")) s->order = PX_ORDER_FIFO;
    else if (!strcasecmp(v, "las")) s->order = PX_ORDER_LAS;
    else return PX_EPARSE;
    return 0;
  }
  if (!strcasecmp(k, "PreemptType")) return one_of(v, preempt_types, &s->preempt_type);
  if (!strcasecmp(k, "PreemptMode")) {
    if (!strcasecmp(v, "off")) s->preempt_mode = PX_PREEMPT_OFF;
    else if (!strcasecmp(v, "requeue")) s->preempt_mode = PX_PREEMPT_REQUEUE;
    else if (!strcasecmp(v, "cancel")) s->preempt_mode = PX_PREEMPT_CANCEL;
    else return PX_EPARSE;
    return 0;
  }
  if (!strcasecmp(k, "SelectTypeParameters") || !strcasecmp(k, "Placement")) {
    if (!strcasecmp(v, "pack")) s->placement = PX_PLACE_PACK;
    else if (!strcasecmp(v, "spread")) s->placement = PX_PLACE_SPREAD;
    else return PX_EPARSE;
    return 0;
  }
  if (!strcasecmp(k, "LasThresholds")) return parse_thresholds(v, s);
  if (!strcasecmp(k, "PreemptExemptAfter")) return parse_u32(v, &s->preempt_exempt_after);
  if (!strcasecmp(k, "PreemptExemptPeriod")) return parse_duration(v, &s->preempt_exempt_s);
  if (!strcasecmp(k, "PriorityDecayHalfLife")) return parse_duration(v, &s->decay_half_life_s);
  if (!strcasecmp(k, "PriorityMaxAge")) return parse_duration(v, &s->max_age_s);
  if (!strcasecmp(k, "PriorityFavorSmall")) {
    if (!strcasecmp(v, "yes")) s->favor_small = true;
    else if (!strcasecmp(v, "no")) s->favor_small = false;
    else return PX_EPARSE;
    return 0;
  }
  static const struct {
    const char *key;
    size_t off;
  } weights[] = {
      {"PriorityWeightAge", offsetof(struct px_conf_sched, weight_age)},
      {"PriorityWeightFairshare", offsetof(struct px_conf_sched, weight_fairshare)},
      {"PriorityWeightJobSize", offsetof(struct px_conf_sched, weight_jobsize)},
      {"PriorityWeightPartition", offsetof(struct px_conf_sched, weight_partition)},
      {"PriorityWeightQOS", offsetof(struct px_conf_sched, weight_qos)},
      {"PriorityWeightTRES", offsetof(struct px_conf_sched, weight_tres)},
  };
  for (size_t i = 0; i < sizeof weights / sizeof weights[0]; i++) {
    if (!strcasecmp(k, weights[i].key)) return parse_u32(v, (uint32_t *)((char *)s + weights[i].off));
  }
  return PX_ENOENT;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

/* One line: one or more Key=Value words (slurm.conf allows several per line). */
static int parse_line(struct px_sim_policy *p, char *line, int lineno, struct px_diag *d) {
  char *hash = strchr(line, '#');
  if (hash) *hash = '\0';
  char *save = NULL;
  for (char *w = strtok_r(line, " \t\r", &save); w; w = strtok_r(NULL, " \t\r", &save)) {
    char *eq = strchr(w, '=');
    if (!eq) return px_diag_set(d, PX_EPARSE, -1, "line %d: '%.64s' is not Key=Value", lineno, w);
    *eq = '\0';
    char *k = trim(w), *v = trim(eq + 1);
    if (!strcasecmp(k, "SchedulerParameters")) {
      int rc = sched_params(&p->sched, v, lineno, d);
      if (rc) return rc;
      continue;
    }
    int rc = set_key(p, k, v);
    if (rc == PX_ENOENT)
      return px_diag_set(d, PX_EPARSE, -1, "line %d: %.64s is not a scheduling key a policy may set", lineno, k);
    if (rc) return px_diag_set(d, PX_EPARSE, -1, "line %d: %.64s=%.64s: bad value", lineno, k, v);
  }
  return 0;
}

int px_sim_policy_parse(struct px_sim_policy *p, const char *text, size_t len, struct px_diag *d) {
  struct px_sim_policy next = *p;
  char *buf = malloc(len + 1);
  if (!buf) return PX_ENOMEM;
  memcpy(buf, text, len);
  buf[len] = '\0';
  int rc = 0, lineno = 0;
  for (char *line = buf; line && !rc;) {
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    lineno++;
    if (d) d->line = lineno;
    rc = parse_line(&next, line, lineno, d);
    line = nl ? nl + 1 : NULL;
  }
  free(buf);
  if (!rc) *p = next; /* a failed parse changes nothing */
  return rc;
}

int px_sim_policy_load(struct px_sim_policy *p, const char *path, const struct px_conf_sched *base,
                       struct px_diag *d) {
  FILE *f = fopen(path, "rb");
  if (!f) return px_diag_set(d, PX_EIO, -1, "%.200s: %s", path, strerror(errno));
  char text[16384];
  size_t n = fread(text, 1, sizeof text, f);
  bool big = !feof(f);
  fclose(f);
  if (big) return px_diag_set(d, PX_EPARSE, -1, "%.200s: a policy file is at most 16 KiB", path);
  memset(p, 0, sizeof *p);
  p->sched = *base;
  const char *slash = strrchr(path, '/');
  snprintf(p->name, sizeof p->name, "%.63s", slash ? slash + 1 : path);
  char *dot = strrchr(p->name, '.');
  if (dot && dot != p->name && strcmp(dot, ".conf") == 0) *dot = '\0';
  int rc = px_sim_policy_parse(p, text, n, d);
  if (rc && d) {
    char msg[sizeof d->msg];
    snprintf(msg, sizeof msg, "%.200s", d->msg);
    snprintf(d->msg, sizeof d->msg, "%.40s: %.200s", slash ? slash + 1 : path, msg);
  }
  return rc;
}
