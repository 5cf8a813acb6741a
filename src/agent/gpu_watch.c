/* gpu_watch.c - the found-faults queue and fault injection (gpu_watch.h);
 * the NVML thread is gpu_nvml.c. */
#include "agent/gpu_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "agent/agent_link.h"
#include "util/error.h"
#include "util/log.h"

int px_gpu_watch_init(struct px_gpu_watch *w, const char *node, uint32_t ngpus) {
  memset(w, 0, sizeof *w);
  snprintf(w->node, sizeof w->node, "%s", node);
  w->ngpus = ngpus;
  atomic_init(&w->interval_ms, 500);
  atomic_init(&w->stop, false);
  w->wake[0] = w->wake[1] = -1;
  if (pipe2(w->wake, O_CLOEXEC | O_NONBLOCK)) return PX_EIO;
  pthread_mutex_init(&w->mu, NULL);
  return 0;
}

void px_gpu_watch_fini(struct px_gpu_watch *w) {
  if (w->wake[0] < 0) return;
  atomic_store(&w->stop, true);
  if (w->started) pthread_join(w->thread, NULL);
  pthread_mutex_destroy(&w->mu);
  free(w->found);
  for (uint32_t i = 0; i < w->nout; i++) free(w->out[i].json);
  free(w->out);
  close(w->wake[0]);
  close(w->wake[1]);
  w->wake[0] = w->wake[1] = -1;
}

void px_gpu_watch_add(struct px_gpu_watch *w, const struct px_gpu_fault *f) {
  pthread_mutex_lock(&w->mu);
  if (w->nfound == w->cap) {
    uint32_t cap = w->cap ? w->cap * 2 : 8;
    struct px_gpu_fault *p = realloc(w->found, cap * sizeof *p);
    if (p) w->found = p, w->cap = cap;
  }
  bool added = w->nfound < w->cap;
  if (added) w->found[w->nfound++] = *f;
  pthread_mutex_unlock(&w->mu);
  if (!added) {
    px_error("GPU %u: no memory to queue its %s fault", f->gpu, px_gpu_fault_name(f->fault));
    return;
  }
  px_warn("GPU %u: %s %lld%s%s", f->gpu, px_gpu_fault_name(f->fault), (long long)f->code, f->detail[0] ? ": " : "",
          f->detail);
  char one = 1;
  if (write(w->wake[1], &one, 1) < 0 && errno != EAGAIN) px_warn("GPU watch: wake: %s", strerror(errno));
}

struct px_gpu_fault *px_gpu_watch_take(struct px_gpu_watch *w, uint32_t *n) {
  char buf[64];
  while (read(w->wake[0], buf, sizeof buf) > 0) {
  }
  pthread_mutex_lock(&w->mu);
  struct px_gpu_fault *f = w->found;
  *n = w->nfound;
  w->found = NULL;
  w->nfound = w->cap = 0;
  pthread_mutex_unlock(&w->mu);
  return f;
}

void px_gpu_watch_post(struct px_gpu_watch *w, const char *path, char *json) {
  struct px_health_post *out = json ? realloc(w->out, (w->nout + 1) * sizeof *out) : NULL;
  if (!out) {
    px_error("no memory to report to %s", path);
    free(json);
    return;
  }
  w->out = out;
  w->out[w->nout++] = (struct px_health_post){path, json};
}

/* What was found joins the outgoing reports. */
static void take_found(struct px_gpu_watch *w) {
  uint32_t n;
  struct px_gpu_fault *f = px_gpu_watch_take(w, &n);
  for (uint32_t i = 0; i < n; i++) px_gpu_watch_post(w, "/v1/agent/gpu", px_gpu_fault_encode(&f[i]));
  free(f);
}

void px_gpu_watch_send(struct px_gpu_watch *w, struct px_link *k, int64_t now_ms) {
  take_found(w);
  if (now_ms < w->retry_at_ms || !k->registered) return;
  uint32_t done = 0;
  for (; done < w->nout; done++) {
    long status;
    int rc = px_link_post(k, w->out[done].path, w->out[done].json, &status);
    if (rc || status >= 500 || status == 404 || status == 409 || status == 429) {
      w->retry_at_ms = now_ms + 500;
      break;
    }
    if (status >= 300) px_error("report to %s refused (HTTP %ld): %s", w->out[done].path, status, w->out[done].json);
    free(w->out[done].json);
  }
  if (!done) return;
  memmove(w->out, w->out + done, (w->nout - done) * sizeof *w->out);
  w->nout -= done;
}

int64_t px_gpu_watch_due(const struct px_gpu_watch *w) { return w->nout ? w->retry_at_ms : INT64_MAX; }

int px_gpu_fault_parse_note(const char *note, const char *node, struct px_gpu_fault *f) {
  memset(f, 0, sizeof *f);
  char fault[16];
  unsigned gpu;
  long long code;
  int used = 0;
  if (sscanf(note, "gpufault %u %15s %lld %n", &gpu, fault, &code, &used) < 3 || gpu > 63 || code < 0 ||
      !px_gpu_fault_parse(fault, &f->fault))
    return PX_EINVAL;
  snprintf(f->node, sizeof f->node, "%s", node);
  f->gpu = gpu;
  f->code = code;
  snprintf(f->detail, sizeof f->detail, "%s", used ? note + used : "");
  return 0;
}

int px_gpu_inject(const char *state_dir, const char *node, uint32_t gpu, const char *fault, int64_t code,
                  const char *detail, char *why, size_t whylen) {
  enum px_gpu_fault_class c;
  if (!px_gpu_fault_parse(fault, &c)) {
    snprintf(why, whylen, "fault: '%s' is not one of xid ecc remap lost throttle nvlink", fault);
    return PX_EINVAL;
  }
  if (gpu > 63 || code < 0) {
    snprintf(why, whylen, "%s", gpu > 63 ? "gpu: an index 0..63" : "code: must be >= 0");
    return PX_EINVAL;
  }
  struct sockaddr_un addr = {.sun_family = AF_UNIX};
  if ((size_t)snprintf(addr.sun_path, sizeof addr.sun_path, "%s/agent.sock", state_dir) >= sizeof addr.sun_path) {
    snprintf(why, whylen, "state directory path too long: %s", state_dir);
    return PX_EINVAL;
  }
  char msg[256];
  int len = snprintf(msg, sizeof msg, "%.63s%sgpufault %u %s %lld %.120s", node ? node : "", node ? " " : "", gpu,
                     fault, (long long)code, detail ? detail : "");
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  int rc = fd < 0 || sendto(fd, msg, (size_t)len, 0, (struct sockaddr *)&addr, sizeof addr) != len ? PX_EIO : 0;
  if (rc) snprintf(why, whylen, "cannot reach the agent at %s: %s", addr.sun_path, strerror(errno));
  if (fd >= 0) close(fd);
  return rc;
}
