/*
 * fmt_time.c - how Slurm 22.05 writes durations, timestamps and job states:
 * squeue's "M:SS", scontrol's "HH:MM:SS", sinfo's "7-00:00:00", ISO local
 * timestamps, and the long/compact state names ("PENDING"/"PD").
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "util/units.h"

void px_cli_fmt_elapsed(char *buf, size_t n, int64_t s) { px_duration_format(s, buf, n); }

void px_cli_fmt_hms(char *buf, size_t n, int64_t s) { px_duration_format_hms(s, buf, n); }

void px_cli_fmt_sinfo_time(char *buf, size_t n, int64_t s) {
  if (s == PX_CLI_UNLIMITED || s <= 0) {
    snprintf(buf, n, "infinite");
    return;
  }
  px_cli_fmt_elapsed(buf, n, s);
}

void px_cli_fmt_iso(char *buf, size_t n, int64_t t, const char *none) {
  if (t <= 0) {
    snprintf(buf, n, "%s", none);
    return;
  }
  time_t tt = (time_t)t;
  struct tm tm;
  if (!localtime_r(&tt, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%S", &tm))
    snprintf(buf, n, "%s", none);
}

static const struct {
  const char *name, *code;
} states[] = {
    {"PENDING", "PD"},     {"RUNNING", "R"},      {"SUSPENDED", "S"},      {"COMPLETING", "CG"},
    {"COMPLETED", "CD"},   {"CONFIGURING", "CF"}, {"CANCELLED", "CA"},     {"FAILED", "F"},
    {"TIMEOUT", "TO"},     {"PREEMPTED", "PR"},   {"NODE_FAIL", "NF"},     {"BOOT_FAIL", "BF"},
    {"DEADLINE", "DL"},    {"OUT_OF_MEMORY", "OOM"}, {"REQUEUED", "RQ"},   {"REQUEUE_HOLD", "RH"},
    {"SPECIAL_EXIT", "SE"}, {"STOPPED", "ST"},    {"RESIZING", "RS"},      {"REVOKED", "RV"},
};
#define NSTATES (sizeof states / sizeof states[0])

const char *px_cli_state_compact(const char *state) {
  for (size_t i = 0; i < NSTATES; i++)
    if (!strcmp(state, states[i].name)) return states[i].code;
  return state;
}

bool px_cli_state_normalise(const char *in, char *out, size_t n) {
  for (size_t i = 0; i < NSTATES; i++) {
    if (!strcasecmp(in, states[i].name) || !strcasecmp(in, states[i].code)) {
      snprintf(out, n, "%s", states[i].name);
      return true;
    }
  }
  return false;
}

bool px_cli_state_is_active(const char *state) {
  static const char *const active[] = {"PENDING",    "RUNNING",  "SUSPENDED",   "COMPLETING",
                                       "CONFIGURING", "REQUEUED", "REQUEUE_HOLD", "RESIZING",
                                       "STOPPED"};
  for (size_t i = 0; i < sizeof active / sizeof active[0]; i++)
    if (!strcmp(state, active[i])) return true;
  return false;
}

bool px_cli_state_is_finished(const char *state) { return !px_cli_state_is_active(state); }
