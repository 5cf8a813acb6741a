/*
 * emu_jobs.c - the emulated nodes' jobs (emulate.h): simulated ends from a
 * heap ordered by end time, real jobs as child processes reaped through
 * SIGCHLD, and the state log that lets a restarted emulator carry on.
 *
 * A job belongs to its node's list until the server acknowledges its end;
 * a simulated one is also in the heap until its end time (a cancelled one
 * stays there until then, marked ended: deleting from the middle of a heap
 * costs more than the few entries that wait), and is freed when it has left
 * both.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/emu_int.h"
#include "agent/svc_port.h"
#include "util/log.h"

extern char **environ;

/* ---- the heap of simulated ends ---- */

static bool earlier(const struct ejob *a, const struct ejob *b) { return a->end_wall_ms < b->end_wall_ms; }

static int heap_push(struct emu *e, struct ejob *j) {
  if (e->nheap == e->capheap) {
    uint32_t cap = e->capheap ? e->capheap * 2 : 1024;
    struct ejob **h = realloc(e->heap, cap * sizeof *h);
    if (!h) return PX_ENOMEM;
    e->heap = h, e->capheap = cap;
  }
  uint32_t i = e->nheap++;
  while (i && earlier(j, e->heap[(i - 1) / 2])) e->heap[i] = e->heap[(i - 1) / 2], i = (i - 1) / 2;
  e->heap[i] = j;
  j->in_heap = true;
  return 0;
}

static struct ejob *heap_pop(struct emu *e) {
  struct ejob *top = e->heap[0], *last = e->heap[--e->nheap];
  uint32_t i = 0;
  for (;;) {
    uint32_t c = 2 * i + 1;
    if (c >= e->nheap) break;
    if (c + 1 < e->nheap && earlier(e->heap[c + 1], e->heap[c])) c++;
    if (!earlier(e->heap[c], last)) break;
    e->heap[i] = e->heap[c], i = c;
  }
  if (e->nheap) e->heap[i] = last;
  top->in_heap = false;
  return top;
}

/* ---- the state log ---- */

static void log_start(struct emu *e, const struct ejob *j) {
  if (e->log)
    fprintf(e->log, "S %u %llu %u %lld %lld %d\n", j->node, (unsigned long long)j->job_id, j->restart,
            (long long)j->start_wall, (long long)j->end_wall_ms, (int)j->pid);
}

static void log_end(struct emu *e, const struct ejob *j) {
  if (e->log)
    fprintf(e->log, "E %u %llu %u %s %d %d %lld\n", j->node, (unsigned long long)j->job_id, j->restart,
            j->end.state, j->end.exit_code, j->end.term_signal, (long long)j->end.end_time);
}

/* ---- node job lists ---- */

static int node_add(struct enode *n, struct ejob *j) {
  if (n->njobs == n->capjobs) {
    uint32_t cap = n->capjobs ? n->capjobs * 2 : 4;
    struct ejob **v = realloc(n->jobs, cap * sizeof *v);
    if (!v) return PX_ENOMEM;
    n->jobs = v, n->capjobs = cap;
  }
  n->jobs[n->njobs++] = j;
  return 0;
}

static void node_del(struct enode *n, const struct ejob *j) {
  for (uint32_t i = 0; i < n->njobs; i++)
    if (n->jobs[i] == j) {
      n->jobs[i] = n->jobs[--n->njobs];
      return;
    }
}

static void job_release(struct emu *e, struct ejob *j) {
  node_del(&e->nodes[j->node], j);
  j->released = true;
  if (!j->in_heap) free(j);
}

/* The job ended here: its report is queued (none for a node failure: the
 * server has already requeued or ended it, as the real agent does). */
static void job_end(struct emu *e, struct ejob *j, const char *state, int32_t exit_code, int32_t sig) {
  if (j->ended) return;
  j->ended = true;
  e->ended++;
  if (j->pid > 0) px_map_del(&e->pids, (uint64_t)j->pid);
  struct px_task_report *r = &j->end;
  *r = (struct px_task_report){.job_id = j->job_id, .restart_count = j->restart, .exit_code = exit_code,
                               .term_signal = sig, .start_time = j->start_wall, .end_time = time(NULL)};
  snprintf(r->node, sizeof r->node, "%s", e->nodes[j->node].name);
  snprintf(r->state, sizeof r->state, "%s", state);
  log_end(e, j);
  if (!strcmp(state, "NODE_FAIL") && !strcmp(j->stop_reason, "NODE_FAIL")) {
    px_emu_acked(e, j);
    return;
  }
  px_emu_queue_report(e, j->node, px_task_report_encode(r), j);
}

void px_emu_acked(struct emu *e, struct ejob *j) {
  px_map_put(&e->done, px_emu_done_key(j->job_id, j->restart), 1);
  if (e->log) fprintf(e->log, "D %u %llu %u\n", j->node, (unsigned long long)j->job_id, j->restart);
  job_release(e, j);
}

/* ---- launching ---- */

/* A simulated job's run time: PX_EMU_RUN_S=N in its environment, else the
 * N of `sleep N` as its command or in its script, else 0. */
static int64_t sim_run_ms(const struct px_launch *l) {
  double s = 0;
  for (char **v = l->env; v && *v; v++)
    if (sscanf(*v, "PX_EMU_RUN_S=%lf", &s) == 1) return (int64_t)(s * 1000);
  if (l->argv && l->argv[0] && !strcmp(l->argv[0], "sleep") && l->argv[1] && sscanf(l->argv[1], "%lf", &s) == 1)
    return (int64_t)(s * 1000);
  const char *p = l->script ? strstr(l->script, "sleep ") : NULL;
  if (p && sscanf(p + 6, "%lf", &s) == 1) return (int64_t)(s * 1000);
  return 0;
}

/* The job's command (or script, through /bin/sh -c) as a child with no output. */
static pid_t spawn_real(const struct px_launch *l) {
  char *sh[] = {"/bin/sh", "-c", l->script, NULL};
  char **argv = l->argv && l->argv[0] ? l->argv : l->script ? sh : NULL;
  if (!argv) return -1;
  posix_spawn_file_actions_t fa;
  posix_spawnattr_t at;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawnattr_init(&at);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&at, &none);
  posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETPGROUP);
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0], &fa, &at, argv, environ) != 0) pid = -1;
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  return pid;
}

static struct ejob *find(struct enode *n, uint64_t job_id, uint32_t restart) {
  for (uint32_t i = 0; i < n->njobs; i++)
    if (n->jobs[i]->job_id == job_id && n->jobs[i]->restart == restart) return n->jobs[i];
  return NULL;
}

void px_emu_launch(struct emu *e, uint32_t node, const struct px_launch *l) {
  struct enode *n = &e->nodes[node];
  if (strcmp(l->nodes[l->node_rank], n->name) != 0) {
    px_error("job %llu: order for node %s reached %s; ignored", (unsigned long long)l->job_id,
             l->nodes[l->node_rank], n->name);
    return;
  }
  if (px_map_get(&e->done, px_emu_done_key(l->job_id, l->restart_count), NULL) ||
      find(n, l->job_id, l->restart_count))
    return; /* started before: never twice */
  struct ejob *j = calloc(1, sizeof *j);
  if (!j || node_add(n, j)) {
    free(j);
    px_error("job %llu: out of memory starting it on %s", (unsigned long long)l->job_id, n->name);
    return;
  }
  *j = (struct ejob){.job_id = l->job_id, .restart = l->restart_count, .node = node, .start_wall = time(NULL)};
  e->launched++;
  if (l->service) /* a simulated replica serves until stopped, ready at once on fake ports */
    px_emu_queue_report(e, node, px_svc_emu_report(n->name, l), NULL);
  if (!e->o->real_jobs) {
    j->end_wall_ms = l->service && !sim_run_ms(l) ? INT64_MAX : px_emu_wall_ms() + sim_run_ms(l);
    log_start(e, j);
    if (heap_push(e, j)) job_end(e, j, "FAILED", 1, 0);
    return;
  }
  j->pid = spawn_real(l);
  log_start(e, j);
  if (j->pid < 0 || px_map_put(&e->pids, (uint64_t)j->pid, (uint64_t)(uintptr_t)j)) job_end(e, j, "FAILED", 127, 0);
}

void px_emu_signal(struct emu *e, uint32_t node, const struct px_signal_order *s) {
  struct enode *n = &e->nodes[node];
  if (s->is_step) return; /* steps never start here */
  for (uint32_t i = n->njobs; i-- > 0;) {
    struct ejob *j = n->jobs[i];
    if (j->job_id != s->job_id || j->ended) continue;
    if (s->grace_s < 0) { /* signal only: a simulated job has nothing to signal */
      if (j->pid > 0 && !j->foreign) kill(j->pid, s->signal);
      continue;
    }
    snprintf(j->stop_reason, sizeof j->stop_reason, "%s", s->reason[0] ? s->reason : "CANCELLED");
    if (j->pid > 0 && !j->foreign) {
      kill(j->pid, SIGKILL); /* its end comes through SIGCHLD */
      continue;
    }
    job_end(e, j, j->stop_reason, 0, s->signal);
  }
}

int64_t px_emu_sim_due(struct emu *e, int64_t now) {
  while (e->nheap && e->heap[0]->end_wall_ms <= now) {
    struct ejob *j = heap_pop(e);
    if (j->released) free(j);
    else job_end(e, j, "COMPLETED", 0, 0);
  }
  return e->nheap ? e->heap[0]->end_wall_ms : INT64_MAX;
}

void px_emu_reap(struct emu *e) {
  int ws;
  pid_t pid;
  while ((pid = waitpid(-1, &ws, WNOHANG)) > 0) {
    uint64_t v;
    if (!px_map_get(&e->pids, (uint64_t)pid, &v)) continue;
    struct ejob *j = (struct ejob *)(uintptr_t)v;
    bool ok = WIFEXITED(ws) && WEXITSTATUS(ws) == 0;
    const char *state = j->stop_reason[0] ? j->stop_reason : ok ? "COMPLETED" : "FAILED";
    job_end(e, j, state, WIFEXITED(ws) ? WEXITSTATUS(ws) : 0, WIFSIGNALED(ws) ? WTERMSIG(ws) : 0);
  }
}

/* Real jobs of a previous run are not our children: looked at once a second. */
void px_emu_check_foreign(struct emu *e) {
  for (uint32_t i = 0; i < e->nnodes; i++)
    for (uint32_t k = e->nodes[i].njobs; k-- > 0;) {
      struct ejob *j = e->nodes[i].jobs[k];
      if (j->foreign && !j->ended && kill(j->pid, 0) != 0 && errno == ESRCH)
        job_end(e, j, j->stop_reason[0] ? j->stop_reason : "FAILED", 1, 0);
    }
}

void px_emu_stop_jobs(struct emu *e) {
  for (uint32_t i = 0; i < e->nnodes; i++)
    for (uint32_t k = 0; k < e->nodes[i].njobs; k++) {
      struct ejob *j = e->nodes[i].jobs[k];
      if (j->pid > 0 && !j->ended) kill(j->pid, SIGKILL);
    }
}

void px_emu_jobs_free(struct emu *e) {
  for (uint32_t i = 0; i < e->nheap; i++) e->heap[i]->in_heap = false;
  for (uint32_t i = 0; i < e->nheap; i++)
    if (e->heap[i]->released) free(e->heap[i]);
  for (uint32_t i = 0; i < e->nnodes; i++) {
    for (uint32_t k = 0; k < e->nodes[i].njobs; k++) free(e->nodes[i].jobs[k]);
    free(e->nodes[i].jobs);
  }
  free(e->heap);
  px_map_fini(&e->pids);
  px_map_fini(&e->done);
  if (e->log) fclose(e->log);
}

/* ---- restart: replay the log, then write it again compacted ---- */

static void replay_line(struct emu *e, const char *line) {
  unsigned node, restart;
  unsigned long long id;
  long long a, b;
  int pid, ec, sig;
  char state[24];
  if (sscanf(line, "D %u %llu %u", &node, &id, &restart) == 3) {
    px_map_put(&e->done, px_emu_done_key(id, restart), 1);
    struct ejob *j = node < e->nnodes ? find(&e->nodes[node], id, restart) : NULL;
    if (j) node_del(&e->nodes[node], j), free(j);
  } else if (sscanf(line, "S %u %llu %u %lld %lld %d", &node, &id, &restart, &a, &b, &pid) == 6 && node < e->nnodes) {
    struct ejob *j = calloc(1, sizeof *j);
    if (!j || node_add(&e->nodes[node], j)) return free(j);
    *j = (struct ejob){.job_id = id, .restart = restart, .node = node, .start_wall = a, .end_wall_ms = b,
                       .pid = pid, .foreign = pid > 0};
  } else if (sscanf(line, "E %u %llu %u %23s %d %d %lld", &node, &id, &restart, state, &ec, &sig, &a) == 7 &&
             node < e->nnodes) {
    struct ejob *j = find(&e->nodes[node], id, restart);
    if (!j) return;
    j->ended = true;
    j->end = (struct px_task_report){.job_id = id, .restart_count = restart, .exit_code = ec, .term_signal = sig,
                                     .start_time = j->start_wall, .end_time = a};
    snprintf(j->end.node, sizeof j->end.node, "%s", e->nodes[node].name);
    snprintf(j->end.state, sizeof j->end.state, "%s", state);
  }
}

/* What the log held goes back to work: ends to report, sim jobs to the heap. */
static void resume_jobs(struct emu *e) {
  for (uint32_t i = 0; i < e->nnodes; i++)
    for (uint32_t k = 0; k < e->nodes[i].njobs; k++) {
      struct ejob *j = e->nodes[i].jobs[k];
      log_start(e, j);
      if (j->ended) {
        log_end(e, j);
        px_emu_queue_report(e, i, px_task_report_encode(&j->end), j);
      } else if (!j->pid && heap_push(e, j)) {
        job_end(e, j, "FAILED", 1, 0);
      }
    }
}

int px_emu_log_open(struct emu *e) {
  char path[PATH_MAX + 32], tmp[PATH_MAX + 40], line[256];
  snprintf(path, sizeof path, "%s/emulate.log", e->o->state_dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  FILE *old = fopen(path, "re");
  while (old && fgets(line, sizeof line, old)) replay_line(e, line);
  if (old) fclose(old);
  if (!(e->log = fopen(tmp, "we"))) return PX_EIO;
  for (size_t i = 0; i < e->done.cap; i++)
    if (e->done.slots[i].used)
      fprintf(e->log, "D %u %llu %u\n", UINT32_MAX, (unsigned long long)(e->done.slots[i].key >> 16),
              (unsigned)(e->done.slots[i].key & 0xffff));
  resume_jobs(e);
  fflush(e->log);
  return rename(tmp, path) == 0 ? 0 : PX_EIO;
}

void px_emu_replay_text(const char *text, size_t len) {
  struct px_emu_opts o = {0};
  struct enode nodes[4] = {{.name = "n0"}, {.name = "n1"}, {.name = "n2"}, {.name = "n3"}};
  struct emu e = {.o = &o, .nodes = nodes, .nnodes = 4};
  char line[256];
  for (size_t at = 0; at < len;) {
    size_t end = at;
    while (end < len && text[end] != '\n') end++;
    snprintf(line, sizeof line, "%.*s", (int)(end - at), text + at);
    replay_line(&e, line);
    at = end + 1;
  }
  px_emu_jobs_free(&e);
}
