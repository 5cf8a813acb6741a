/*
 * tick.c - the controller in the main loop (svc_server.h): each service's
 * plan (svc/plan.c) becomes events on the one event path, journaled like a
 * request's; agents hear of a stop only after the commit.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/event.h"
#include "proto/jfield.h"
#include "server/svc/svc_server.h"
#include "svc/svc_event.h"
#include "util/log.h"
#include "util/units.h"

static char *dup_or_null(const char *s) { return s && *s ? strdup(s) : NULL; }

/* v (may be NULL) and then extra (NULL-terminated) in one malloc'd vector. */
static char **dup_strv(char *const *v, char *const *extra) {
  size_t n = 0, k = 0;
  while (v && v[n]) n++;
  while (extra && extra[k]) k++;
  char **out = calloc(n + k + 1, sizeof *out);
  for (size_t i = 0; out && i < n + k; i++) {
    if ((out[i] = strdup(i < n ? v[i] : extra[i - n]))) continue;
    while (i--) free(out[i]);
    free(out);
    return NULL;
  }
  return out;
}

/* Spread: the nodes the service's other replicas hold ("n01,n03"), which the
 * new one may not use. The same index's replica (one being replaced in a
 * rolling update) is not counted: with as many replicas as nodes the
 * update could not otherwise place its surge. Nor is a replica on its way
 * out (terminating or stopping): its node is about to be free, and the
 * exclusion is fixed at submit, so counting it kept a rolling update's
 * next surge pending for good once the earlier indexes' old replicas had
 * been draining when it was submitted (test_service_traffic under load).
 * NULL when none. */
static char *spread_exclude(struct px_server *s, const struct px_svc *v, uint32_t index) {
  struct px_jbuf b = {0};
  for (uint32_t i = 0; i < v->nreps; i++) {
    const struct px_svc_replica *r = &v->reps[i];
    if (r->index == index || r->terminating || r->stopping || r->node >= s->conf->nnodes) continue;
    if (b.len) px_jbuf_add(&b, ",", 1);
    const char *name = s->conf->nodes[r->node].name;
    px_jbuf_add(&b, name, strlen(name));
  }
  if (b.len) px_jbuf_add(&b, "", 1); /* the terminating NUL */
  if (b.err) free(b.p);
  return b.err || !b.len ? NULL : b.p;
}

int px_svc_replica_spec(struct px_server *s, const struct px_svc *v, uint32_t index,
                        struct px_jobspec *o) {
  const struct px_svc_spec *sp = &v->spec;
  char name[PX_SVC_NAME_MAX + 16], out[4200];
  snprintf(name, sizeof name, "%s-r%u", sp->name, index);
  px_jobspec_init(o);
  o->name = strdup(name);
  o->user = strdup(sp->user);
  o->uid = sp->uid;
  o->gid = sp->gid;
  o->account = dup_or_null(sp->account);
  const struct px_conf *cf = s->conf; /* none named: the default, as a batch submit */
  o->partition = sp->partition[0] || cf->default_partition == PX_NONE
                     ? dup_or_null(sp->partition)
                     : strdup(cf->partitions[cf->default_partition].name);
  o->qos = dup_or_null(sp->qos);
  o->nodes_min = o->nodes_max = o->ntasks = 1;
  o->cpus_per_task = sp->cpus;
  o->gpus_per_node = sp->gpus;
  o->mem_per_node_mib = sp->mem_mib;
  o->constraint = dup_or_null(sp->constraint);
  if (sp->spread) o->exclude = spread_exclude(s, v, index);
  /* A lost node ends a replica (NODE_FAIL) instead of requeueing it: a
   * requeued job keeps the exclude list of its first submit, so it could
   * start next to a sibling that moved since; the controller's replacement
   * is a new job whose list is the siblings' nodes now. */
  o->requeue = false;
  o->time_limit_s = PX_TIME_UNLIMITED; /* long-running: never ends on its own */
  o->script = sp->script ? strdup(sp->script) : NULL;
  /* The replica's identity in its environment (the agent sets its ports). */
  char e_svc[80], e_rep[32], e_gen[48];
  snprintf(e_svc, sizeof e_svc, "PX_SERVICE=%s", sp->name);
  snprintf(e_rep, sizeof e_rep, "PX_REPLICA=%u", index);
  snprintf(e_gen, sizeof e_gen, "PX_GENERATION=%llu", (unsigned long long)v->generation);
  char *ids[] = {e_svc, e_rep, e_gen, NULL};
  o->argv = sp->argv ? dup_strv(sp->argv, NULL) : NULL;
  o->env = dup_strv(sp->env, ids);
  o->workdir = strdup(sp->workdir ? sp->workdir : "/tmp");
  snprintf(out, sizeof out, "%s/%s-%%j.out", o->workdir ? o->workdir : "/tmp", sp->name);
  o->stdout_path = strdup(out);
  o->service = strdup(sp->name);
  o->replica = index;
  o->service_generation = v->generation;
  bool ok = o->name && o->user && o->workdir && o->stdout_path && o->service &&
            (!sp->argv || o->argv) && o->env && (!sp->script || o->script);
  if (!ok) px_jobspec_fini(o);
  return ok ? 0 : PX_ENOMEM;
}

/* ---- the actions ---- */

static int accept_svc(struct px_server *s, enum px_event_kind kind, uint64_t job_id, char *rec,
                      int64_t now) {
  if (!rec) return PX_ENOMEM;
  struct px_event ev = {.kind = kind, .job_id = job_id, .svc = rec};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  free(rec);
  return rc;
}

static int submit(struct px_server *s, struct px_svc *v, const struct px_svc_act *a, int64_t now) {
  struct px_jobspec spec;
  int rc = px_svc_replica_spec(s, v, a->index, &spec);
  if (rc) return rc;
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = s->next_job_id, .spec = &spec};
  struct px_event_result res;
  rc = px_events_accept(s, &ev, now, &res); /* the fold takes the spec */
  if (rc) {
    px_warn("service %s: replica %u refused: %s", v->spec.name, a->index, res.diag.msg);
    snprintf(v->blocked, sizeof v->blocked, "replica %u refused: %.160s", a->index, res.diag.msg);
    px_jobspec_fini(&spec);
    return rc == PX_ENOMEM ? rc : 0;
  }
  v->blocked[0] = '\0';
  s->need_cycle = true;
  return 0;
}

static int stop(struct px_server *s, const struct px_svc_act *a, int64_t now) {
  struct px_sjob *j = px_jobs_find(s, a->job_id);
  if (!j || px_job_state_terminal(j->state)) return 0;
  bool running = j->state == PX_JOB_RUNNING;
  struct px_event ev = {.kind = PX_EV_CANCEL, .job_id = j->id, .by = "service"};
  struct px_event_result res;
  int rc = px_events_accept(s, &ev, now, &res);
  if (!rc && running) rc = px_u64vec_push(&s->svc->stops, j->id);
  s->need_cycle = true;
  return rc;
}

static int run_action(struct px_server *s, struct px_svc *v, const struct px_svc_act *a, int64_t now) {
  const char *name = v->spec.name;
  struct px_svc_rep_change c = {.drain = true, .failure = a->failure, .reason = a->reason};
  switch (a->kind) {
    case PX_SVC_ACT_SUBMIT:
      return submit(s, v, a, now);
    case PX_SVC_ACT_DRAIN:
      return accept_svc(s, PX_EV_SVC_REPLICA, a->job_id, px_svc_ev_replica(name, a->job_id, &c), now);
    case PX_SVC_ACT_STOP:
      return stop(s, a, now);
    case PX_SVC_ACT_SCALE:
      px_info("service %s: %s", name, a->reason);
      return accept_svc(s, PX_EV_SVC_SCALE, 0, px_svc_ev_scale(name, a->count, a->reason), now);
    case PX_SVC_ACT_ROLLBACK:
      px_warn("service %s: %s", name, a->reason);
      return accept_svc(s, PX_EV_SVC_ROLLBACK, 0, px_svc_ev_rollback(name, a->reason), now);
  }
  return 0;
}

static bool same_list(const char *a, const char *b) {
  return !strcmp(a ? a : "", b ? b : "");
}

/* Spread's exclusion is fixed when a replica is submitted (and kept when a
 * dead node's replica is requeued), but its siblings move on: a replica
 * still pending with a list that no longer matches is withdrawn, and the
 * plan's replace phase submits its index again with today's list (a
 * withdrawal by the service is not a failure: no backoff). */
static int respread(struct px_server *s, const char *name, int64_t now, size_t *nacts) {
  struct px_svc *v = px_svcs_find(&s->svc->t, name);
  if (!v || !v->spec.spread) return 0;
  uint64_t stale[PX_SVC_MAX_ACTS];
  size_t n = 0;
  for (uint32_t i = 0; i < v->nreps && n < PX_SVC_MAX_ACTS; i++) {
    const struct px_svc_replica *r = &v->reps[i];
    if (r->state != PX_SVC_REP_PENDING || r->terminating || r->stopping) continue;
    struct px_sjob *j = px_jobs_find(s, r->job_id);
    if (!j || j->state != PX_JOB_PENDING) continue;
    char *want = spread_exclude(s, v, r->index);
    if (!same_list(want, j->spec.exclude)) stale[n++] = r->job_id;
    free(want);
  }
  for (size_t i = 0; i < n; i++) { /* the folds reorder v->reps: ids only */
    struct px_svc_act a = {.kind = PX_SVC_ACT_STOP, .job_id = stale[i]};
    int rc = stop(s, &a, now);
    if (rc) return rc;
  }
  *nacts += n;
  return 0;
}

/* Plans one service until it has nothing more to do now (a few rounds:
 * an action's fold may enable the next, as a drain frees surge room). */
static int control(struct px_server *s, const char *name, int64_t now, size_t *nacts) {
  struct px_svc_server *sv = s->svc;
  struct px_svc_act acts[PX_SVC_MAX_ACTS];
  for (int round = 0; round < 4; round++) {
    struct px_svc *v = px_svcs_find(&sv->t, name);
    if (!v) return 0;
    int64_t due;
    size_t n = px_svc_plan(v, now, acts, PX_SVC_MAX_ACTS, &due);
    if (due < sv->due) sv->due = due;
    if (!n) return 0;
    *nacts += n;
    for (size_t i = 0; i < n; i++) {
      if (!(v = px_svcs_find(&sv->t, name))) return 0; /* deleted by the last stop */
      int rc = run_action(s, v, &acts[i], now);
      if (rc) return rc;
    }
  }
  if (sv->due > now + 1) sv->due = now + 1; /* more to do: soon */
  return 0;
}

int px_svc_tick(struct px_server *s, int64_t now) {
  struct px_svc_server *sv = s->svc;
  if (!sv) return 0;
  size_t nacts = 0;
  if (sv->t.changed || now >= sv->due) {
    sv->t.changed = false;
    sv->due = INT64_MAX;
    size_t n = sv->t.n;
    char(*names)[PX_SVC_NAME_MAX + 1] = n ? malloc(n * sizeof *names) : NULL;
    if (n && !names) return 0; /* retried at the next tick */
    for (size_t i = 0; i < n; i++) memcpy(names[i], sv->t.v[i]->spec.name, sizeof names[i]);
    int rc = 0;
    for (size_t i = 0; !rc && i < n; i++)
      if (!(rc = respread(s, names[i], now, &nacts))) rc = control(s, names[i], now, &nacts);
    free(names);
    if (rc) return rc;
  }
  if (nacts && px_journal_commit(s)) return PX_EIO;
  for (size_t i = 0; i < sv->stops.len; i++) { /* journaled: the agents may hear of it */
    struct px_sjob *j = px_jobs_find(s, sv->stops.v[i]);
    if (j && j->state == PX_JOB_RUNNING) px_nodes_stop(s, j, SIGTERM, "CANCELLED");
  }
  sv->stops.len = 0;
  if (sv->render) {
    if (px_journal_sync(s)) return PX_EIO; /* readers see only what is durable */
    px_svc_render(s, now);
    sv->render = false;
    s->dirty = true; /* a snapshot follows: parked endpoint polls wake */
  }
  return 0;
}
