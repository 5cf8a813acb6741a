/*
 * golden.h - helpers of the CLI's golden-output tests: build the view
 * structs of the jobs, nodes and partitions in the real Slurm transcript,
 * render into memory, and compare with the verbatim Slurm output kept in
 * tests/data/golden/ (cut from the transcript by extract.py).
 */
#ifndef PX_TEST_CLI_GOLDEN_H
#define PX_TEST_CLI_GOLDEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* 2026-12-02T13:38:50Z, the date line of the transcript's `squeue -l`. */
#define T_SQUEUE_L 1796218730LL

static inline char *golden_read(const char *name) {
  const char *dir = getenv("PX_TESTDATA");
  char path[1024];
  snprintf(path, sizeof path, "%s/golden/%s", dir ? dir : "tests/data", name);
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0;
  FILE *m = open_memstream(&buf, &cap);
  int c;
  while ((c = fgetc(f)) != EOF) fputc(c, m);
  fclose(f);
  fclose(m);
  return buf;
}

/* Replaces the first `from` in *s by `to` (documented deviations only). */
static inline void golden_patch(char **s, const char *from, const char *to) {
  char *p = strstr(*s, from);
  if (!p) return;
  size_t pre = (size_t)(p - *s), n = strlen(*s) - strlen(from) + strlen(to) + 1;
  char *r = malloc(n);
  snprintf(r, n, "%.*s%s%s", (int)pre, *s, to, p + strlen(from));
  free(*s);
  *s = r;
}

/* Prints the first differing line of both texts, for a readable failure. */
static inline int golden_diff(const char *name, const char *want, const char *got) {
  if (!strcmp(want, got)) return 0;
  int line = 1;
  const char *w = want, *g = got;
  while (*w && *w == *g) {
    if (*w == '\n') line++;
    w++, g++;
  }
  while (w > want && w[-1] != '\n') w--, g--;
  fprintf(stderr, "%s: line %d differs\n want: [%.*s]\n  got: [%.*s]\n", name, line,
          (int)strcspn(w, "\n"), w, (int)strcspn(g, "\n"), g);
  return 1;
}

static inline void job_init(struct px_job_info *j, uint64_t id, const char *part, const char *name,
                            const char *state, const char *reason, uint32_t prio) {
  memset(j, 0, sizeof *j);
  px_jobspec_init(&j->spec);
  j->job_id = id;
  j->array_task_id = UINT32_MAX;
  j->spec.partition = strdup(part);
  j->spec.name = strdup(name);
  j->spec.user = strdup("root");
  j->spec.account = strdup("llm");
  j->spec.qos = strdup("normal");
  snprintf(j->state, sizeof j->state, "%s", state);
  snprintf(j->reason, sizeof j->reason, "%s", reason);
  j->priority = prio;
  j->nnodes = 1;
  j->ncpus = 1;
}

static inline void job_run(struct px_job_info *j, const char *nodes, int64_t start, int64_t end) {
  free(j->nodelist);
  j->nodelist = nodes ? strdup(nodes) : NULL;
  j->start_time = start;
  j->end_time = end;
}

static inline void jobs_free(struct px_job_info *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    px_jobspec_fini(&v[i].spec);
    free(v[i].nodelist);
    free(v[i].cancelled_by);
    free(v[i].array_pending);
    free(v[i].why);
    free(v[i].gpus_by_node);
  }
  free(v);
}

#endif
