/* agent_link.c - registration, order polling and report delivery (agent_link.h). */
#include "agent/agent_link.h"

#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

/* The server holds a poll up to 55 s when asked (60 at most; 20 when not
 * asked): fewer polls per node, which counts at 10,000 nodes. */
#define POLL_HOLD_S 55
#define POLL_TIMEOUT_MS ((POLL_HOLD_S + 10) * 1000L)
#define REPORT_TIMEOUT_MS 5000L

int px_link_init(struct px_link *k, const char *server, const char *ca_file, const char *node,
                 const char *token_file, bool munge) {
  memset(k, 0, sizeof *k);
  snprintf(k->node, sizeof k->node, "%s", node);
  k->wake[0] = k->wake[1] = -1;
  int rc = px_http_new(server, ca_file, token_file, munge, node, &k->main_http);
  if (!rc) rc = px_http_new(server, ca_file, token_file, munge, node, &k->poll_http);
  if (!rc && pipe2(k->wake, O_CLOEXEC | O_NONBLOCK) != 0) rc = PX_EIO;
  pthread_mutex_init(&k->mu, NULL);
  k->backoff_ms = 100;
  if (rc) px_link_fini(k);
  return rc;
}

void px_link_fini(struct px_link *k) {
  k->stop = 1;
  if (k->poll_http) px_http_abort(k->poll_http);
  if (k->thread_started) pthread_join(k->thread, NULL);
  k->thread_started = false;
  px_http_free(k->main_http);
  px_http_free(k->poll_http);
  k->main_http = k->poll_http = NULL;
  for (uint32_t i = 0; i < k->ninbox; i++) px_agent_work_fini(&k->inbox[i]);
  free(k->inbox);
  k->inbox = NULL;
  k->ninbox = k->capinbox = 0;
  while (k->head) {
    struct px_report_item *n = k->head->next;
    free(k->head->json);
    free(k->head);
    k->head = n;
  }
  k->tail = NULL;
  if (k->wake[0] >= 0) close(k->wake[0]), close(k->wake[1]);
  k->wake[0] = k->wake[1] = -1;
  pthread_mutex_destroy(&k->mu);
}

static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap(int ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* HealthCheckProgram= and RebootProgram= as the register answer names them. */
static void node_programs(struct px_link *k, json_t *answer) {
  json_t *hc = answer ? json_object_get(answer, "health_check") : NULL;
  const char *prog = json_string_value(json_object_get(hc, "program"));
  const char *reboot = json_string_value(answer ? json_object_get(answer, "reboot_program") : NULL);
  snprintf(k->hc_program, sizeof k->hc_program, "%s", prog ? prog : "");
  snprintf(k->reboot_program, sizeof k->reboot_program, "%s", reboot ? reboot : "");
  k->hc_interval_s = json_integer_value(json_object_get(hc, "interval_s"));
  k->hc_states = (unsigned)json_integer_value(json_object_get(hc, "states"));
}

int px_link_register(struct px_link *k, const struct px_node_report *r, int *heartbeat_s) {
  char *body = px_node_report_encode(r);
  if (!body) return PX_ENOMEM;
  long status = 0;
  char *resp = NULL;
  int rc = px_http_do(k->main_http, "POST", "/v1/agent/register", body, REPORT_TIMEOUT_MS, &status, &resp);
  free(body);
  k->register_status = status;
  if (!rc && status >= 200 && status < 300) {
    json_t *j = resp ? json_loads(resp, 0, NULL) : NULL;
    json_t *hb = j ? json_object_get(j, "heartbeat_s") : NULL;
    if (json_is_integer(hb) && json_integer_value(hb) > 0) *heartbeat_s = (int)json_integer_value(hb);
    k->batch = json_is_true(j ? json_object_get(j, "report_batch") : NULL);
    json_t *gi = j ? json_object_get(j, "gpu_health_interval_ms") : NULL;
    if (json_is_integer(gi) && json_integer_value(gi) > 0) k->gpu_interval_ms = (uint32_t)json_integer_value(gi);
    node_programs(k, j);
    json_decref(j);
    k->registered = true;
    px_info("registered with the server");
  } else if (!rc) {
    px_warn("register: HTTP %ld %s", status, resp ? resp : "");
    rc = PX_EPROTO;
  }
  free(resp);
  return rc;
}

static void inbox_push(struct px_link *k, struct px_agent_work *w) {
  pthread_mutex_lock(&k->mu);
  if (k->ninbox == k->capinbox) {
    uint32_t cap = k->capinbox ? k->capinbox * 2 : 8;
    struct px_agent_work *n = realloc(k->inbox, cap * sizeof *n);
    if (!n) {
      pthread_mutex_unlock(&k->mu);
      px_error("out of memory queueing orders (batch %llu dropped)", (unsigned long long)w->seq);
      px_agent_work_fini(w);
      return;
    }
    k->inbox = n;
    k->capinbox = cap;
  }
  k->inbox[k->ninbox++] = *w;
  pthread_mutex_unlock(&k->mu);
  if (write(k->wake[1], "w", 1) < 0) { /* the pipe is full: the main loop is already woken */ }
}

static void *poll_main(void *arg) {
  struct px_link *k = arg;
  int wait = 100;
  while (!k->stop) {
    char path[256];
    snprintf(path, sizeof path, "/v1/agent/work?node=%s&after=%llu&timeout=%d", k->node, (unsigned long long)k->seq,
             POLL_HOLD_S);
    long status = 0;
    char *resp = NULL;
    int rc = px_http_do(k->poll_http, "GET", path, NULL, POLL_TIMEOUT_MS, &status, &resp);
    struct px_agent_work w;
    struct px_diag d;
    if (!rc && status == 200 && resp && px_agent_work_decode(resp, &w, &d) == 0) {
      k->seq = w.seq; /* the server's numbering, even a lower one: another controller's (outbox.c) */
      if (w.nlaunch || w.nsignal || w.nstep) inbox_push(k, &w);
      else px_agent_work_fini(&w);
      wait = 100;
    } else if (!k->stop && rc != PX_ETIMEOUT) {
      if (!rc && status == 200) px_error("work: bad answer: %s", d.msg);
      else if (!rc && status != 204) px_warn("work: HTTP %ld", status);
      nap(wait);
      wait = wait < 1000 ? wait * 2 : 1000;
    }
    free(resp);
  }
  return NULL;
}

int px_link_start_poll(struct px_link *k) {
  if (pthread_create(&k->thread, NULL, poll_main, k) != 0) return PX_EAGAIN;
  k->thread_started = true;
  return 0;
}

struct px_agent_work *px_link_take(struct px_link *k, uint32_t *n) {
  char drain[64];
  while (read(k->wake[0], drain, sizeof drain) > 0) {}
  pthread_mutex_lock(&k->mu);
  struct px_agent_work *w = k->inbox;
  *n = k->ninbox;
  k->inbox = NULL;
  k->ninbox = k->capinbox = 0;
  pthread_mutex_unlock(&k->mu);
  return w;
}

void px_link_queue(struct px_link *k, char *json, const char *jobdir) {
  struct px_report_item *it = calloc(1, sizeof *it);
  if (!it || !json) {
    px_error("out of memory queueing a report");
    free(it);
    free(json);
    return;
  }
  it->json = json;
  it->queued_ms = mono_ms();
  snprintf(it->jobdir, sizeof it->jobdir, "%s", jobdir ? jobdir : "");
  if (k->tail) k->tail->next = it;
  else k->head = it;
  k->tail = it;
  k->nqueued++;
}

int64_t px_link_due(const struct px_link *k) {
  if (!k->head) return INT64_MAX;
  int64_t due = k->batch && k->nqueued < PX_REPORT_BATCH ? k->head->queued_ms + PX_REPORT_HOLD_MS : 0;
  return due > k->retry_at_ms ? due : k->retry_at_ms;
}

/* 2xx, or a rejection that retrying cannot cure (see the header). */
static bool settled(long status) {
  return (status >= 200 && status < 300) ||
         (status >= 400 && status < 500 && status != 404 && status != 409 && status != 401);
}

static void pop_head(struct px_link *k, void (*on_acked)(const char *, void *), void *ud, long status) {
  struct px_report_item *it = k->head;
  if (status >= 300) px_error("report rejected (HTTP %ld): %s", status, it->json);
  if (it->jobdir[0] && on_acked) on_acked(it->jobdir, ud);
  k->head = it->next;
  if (!k->head) k->tail = NULL;
  k->nqueued--;
  free(it->json);
  free(it);
}

static void retry_later(struct px_link *k, int64_t now_ms) {
  k->retry_at_ms = now_ms + k->backoff_ms;
  k->backoff_ms = k->backoff_ms < 2000 ? k->backoff_ms * 2 : 2000;
}

/* One report, one request (a server without batches). 0, or 1 to stop. */
static int flush_one(struct px_link *k, int64_t now_ms, void (*on_acked)(const char *, void *), void *ud) {
  long status = 0;
  int rc = px_http_do(k->main_http, "POST", "/v1/agent/report", k->head->json, REPORT_TIMEOUT_MS, &status, NULL);
  if (rc || !settled(status)) {
    /* the server is away (or restarting): keep everything, retry later */
    retry_later(k, now_ms);
    if (rc) k->registered = false;
    return 1;
  }
  k->backoff_ms = 100;
  pop_head(k, on_acked, ud, status);
  return 0;
}

/* Up to PX_REPORT_BATCH reports in one request; each settles on its own
 * status. Those that do not settle stay at the head, in order. 0, or 1 to stop. */
static int flush_batch(struct px_link *k, int64_t now_ms, void (*on_acked)(const char *, void *), void *ud) {
  char *items[PX_REPORT_BATCH];
  uint32_t n = 0;
  for (struct px_report_item *it = k->head; it && n < PX_REPORT_BATCH; it = it->next) items[n++] = it->json;
  char *body = px_task_reports_encode(items, n), *resp = NULL;
  if (!body) return 1;
  long status = 0;
  int rc = px_http_do(k->main_http, "POST", "/v1/agent/report", body, REPORT_TIMEOUT_MS, &status, &resp);
  free(body);
  json_t *j = !rc && status == 200 && resp ? json_loads(resp, 0, NULL) : NULL;
  json_t *st = json_object_get(j, "status");
  free(resp);
  if (!json_is_array(st) || json_array_size(st) != n) {
    json_decref(j);
    if (!rc && status == 400) {
      px_warn("the server refused a batch of reports (HTTP 400); sending them one by one");
      k->batch = false; /* the single form drops only a report that is itself refused */
      return 0;
    }
    if (!rc && status >= 300 && settled(status)) { /* refused whole (403): as each would be */
      for (uint32_t i = 0; i < n; i++) pop_head(k, on_acked, ud, status);
      return 0;
    }
    retry_later(k, now_ms);
    if (rc) k->registered = false;
    return 1;
  }
  /* settled ones leave; the others move, in order, to a list that becomes the head */
  struct px_report_item *keep = NULL, *last = NULL;
  for (uint32_t i = 0; i < n; i++) {
    long s = (long)json_integer_value(json_array_get(st, i));
    if (settled(s)) {
      pop_head(k, on_acked, ud, s);
      continue;
    }
    struct px_report_item *it = k->head;
    k->head = it->next;
    it->next = NULL;
    if (last) last->next = it;
    else keep = it;
    last = it;
  }
  json_decref(j);
  if (keep) {
    last->next = k->head;
    if (!k->head) k->tail = last;
    k->head = keep;
    retry_later(k, now_ms);
    return 1;
  }
  if (!k->head) k->tail = NULL;
  k->backoff_ms = 100;
  return 0;
}

int px_link_flush(struct px_link *k, int64_t now_ms, void (*on_acked)(const char *, void *), void *ud) {
  if (now_ms < k->retry_at_ms) return k->head != NULL;
  while (k->head)
    if ((k->batch ? flush_batch : flush_one)(k, now_ms, on_acked, ud)) return 1;
  return 0;
}

int px_link_post(struct px_link *k, const char *path, const char *body, long *status) {
  *status = 0;
  int rc = px_http_do(k->main_http, "POST", path, body, REPORT_TIMEOUT_MS, status, NULL);
  if (!rc && (*status == 404 || *status == 409)) k->registered = false;
  return rc;
}

int px_link_heartbeat(struct px_link *k, const char *jobs_usage, bool *reboot) {
  char *resp = NULL, *body = NULL;
  if (jobs_usage) { /* the running jobs' use (agent.c jobs_usage), for sstat */
    if (asprintf(&body, "{\"node\":\"%s\",\"jobs\":%s}", k->node, jobs_usage) < 0) body = NULL;
  } else if (asprintf(&body, "{\"node\":\"%s\"}", k->node) < 0) {
    body = NULL;
  }
  if (!body) return PX_ENOMEM;
  long status = 0;
  int rc = px_http_do(k->main_http, "POST", "/v1/agent/heartbeat", body, REPORT_TIMEOUT_MS, &status, &resp);
  free(body);
  json_t *j = !rc && resp ? json_loads(resp, 0, NULL) : NULL;
  *reboot = json_is_true(json_object_get(j, "reboot"));
  json_decref(j);
  free(resp);
  if (rc || status == 404 || status == 409) k->registered = false;
  return rc ? rc : (status >= 200 && status < 300 ? 0 : PX_EPROTO);
}
