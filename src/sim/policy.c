/*
 * policy.c - reads policy files (policy.h). Each scheduling key goes
 * through the configuration's own key table and setters
 * (px_conf_sched_set), so a key, its values and its checks are those of
 * slurm.conf; this file adds only what a policy over a given cluster
 * needs: its name, and the scheduler type and the backfill mode following
 * each other (slurm.conf settles them once every key is read, a policy
 * changes one of them over a base that set both).
 */
#include "sim/policy.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char sched_backfill[] = "sched/backfill";

/* SchedulerType=sched/builtin has no backfill; sched/backfill over none
 * means EASY (Slurm's backfill reserves for the top job); a backfill mode
 * other than none needs sched/backfill. */
static void settle_backfill(struct px_conf_sched *s, const char *k) {
  bool backfill = strcmp(s->scheduler_type, sched_backfill) == 0;
  if (!strcasecmp(k, "SchedulerType") && !backfill) s->backfill = PX_BACKFILL_NONE;
  if (!strcasecmp(k, "SchedulerType") && backfill && s->backfill == PX_BACKFILL_NONE)
    s->backfill = PX_BACKFILL_EASY;
  if (!strcasecmp(k, "BackfillMode") && s->backfill != PX_BACKFILL_NONE)
    s->scheduler_type = sched_backfill;
}

/* SchedulerParameters without its bare bf_continue items: slurm.conf warns
 * that it ignores them, but a simulated pass is never interrupted, which is
 * all bf_continue asks (a policy stops at what slurm.conf would warn of). */
static const char *without_bf_continue(const char *v, char *buf, size_t n) {
  size_t len = 0;
  buf[0] = '\0';
  for (const char *p = v; *p;) {
    const char *end = strchr(p, ',');
    size_t item = end ? (size_t)(end - p) : strlen(p);
    if (!(item == 11 && !strncasecmp(p, "bf_continue", 11))) {
      int w = snprintf(buf + len, n - len, "%s%.*s", len ? "," : "", (int)item, p);
      if (w < 0 || (size_t)w >= n - len) return v; /* too long: conf reports it */
      len += (size_t)w;
    }
    p += item + (end != NULL);
  }
  return buf;
}

static int set_key(struct px_sim_policy *p, const char *k, const char *v, int lineno,
                   struct px_diag *d) {
  if (!strcasecmp(k, "PolicyName")) {
    if (!*v || strlen(v) >= sizeof p->name)
      return px_diag_set(d, PX_EPARSE, -1, "line %d: PolicyName: 1 to %zu characters", lineno,
                         sizeof p->name - 1);
    snprintf(p->name, sizeof p->name, "%s", v);
    return 0;
  }
  char buf[512];
  if (!strcasecmp(k, "SchedulerParameters")) {
    const char *asked = v;
    v = without_bf_continue(asked, buf, sizeof buf);
    if (*asked && !*v) return 0; /* only bf_continue */
  }
  struct px_diag why;
  px_diag_clear(&why);
  int rc = px_conf_sched_set(&p->sched, k, v, &why);
  if (rc == PX_ENOENT)
    return px_diag_set(d, PX_EPARSE, -1, "line %d: %.64s is not a scheduling key a policy may set",
                       lineno, k);
  if (rc) return px_diag_set(d, rc, -1, "line %d: %.200s", lineno, why.msg);
  settle_backfill(&p->sched, k);
  return 0;
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
    int rc = set_key(p, trim(w), trim(eq + 1), lineno, d);
    if (rc) return rc;
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
