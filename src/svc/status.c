/*
 * status.c - a service's state in one word and why, for `service list`,
 * `service show` and the API (svc.h).
 */
#include <stdio.h>
#include <string.h>

#include "svc/svc.h"

uint32_t px_svc_ready(const struct px_svc *s) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < s->nreps; i++)
    n += !s->reps[i].terminating && s->reps[i].state == PX_SVC_REP_READY;
  return n;
}

/* The index in the longest streak of failures (CrashLoop), or PX_NONE.
 * Only failures of the spec that runs now count: after a rollback the
 * failed generation's streak is the reason, not the state. */
static uint32_t crashing(const struct px_svc *s) {
  uint32_t worst = PX_NONE;
  for (uint32_t i = 0; i < s->replicas && i < s->nslots; i++)
    if (s->slots[i].failures >= PX_SVC_CRASHLOOP && px_svc_is_current(s, s->slots[i].fail_gen) &&
        (worst == PX_NONE || s->slots[i].failures > s->slots[worst].failures))
      worst = i;
  return worst;
}

static bool updating(const struct px_svc *s) {
  for (uint32_t i = 0; i < s->nreps; i++)
    if (!px_svc_is_current(s, s->reps[i].generation) && !s->reps[i].terminating) return true;
  return false;
}

const char *px_svc_status(const struct px_svc *s, int64_t now, char *reason, size_t size) {
  uint32_t ready = px_svc_ready(s), bad = crashing(s);
  snprintf(reason, size, "%s", s->rollback_reason[0] ? s->rollback_reason : s->blocked);
  if (s->deleting) return "Deleting";
  if (bad != PX_NONE) {
    const struct px_svc_slot *sl = &s->slots[bad];
    int64_t next = px_svc_next_start(s, bad);
    snprintf(reason, size, "replica %u failed %u times in a row (%s); next start in %llds", bad,
             sl->failures, sl->last_reason, (long long)(next > now ? next - now : 0));
    return "CrashLoop";
  }
  if (updating(s)) {
    if (!reason[0]) snprintf(reason, size, "rolling update to generation %llu", (unsigned long long)s->generation);
    return "Updating";
  }
  if (ready >= s->replicas) return "Running";
  if (!reason[0]) snprintf(reason, size, "%u of %u replicas ready", ready, s->replicas);
  return ready ? "Degraded" : "Starting";
}
