/* progress.c - the terminal progress bar (progress.h). */
#include "sim/progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct px_sim_progress {
  char label[48];
  double t0, last;
};

static double mono_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct px_sim_progress *px_sim_progress_new(const char *label) {
  if (!isatty(STDERR_FILENO)) return NULL;
  struct px_sim_progress *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  snprintf(p->label, sizeof p->label, "%s", label);
  p->t0 = p->last = mono_s();
  return p;
}

void px_sim_progress_update(struct px_sim_progress *p, uint64_t done, uint64_t total) {
  double now = mono_s();
  if (!p || now - p->last < 0.2 || total == 0) return;
  p->last = now;
  double f = (double)done / (double)total;
  int filled = (int)(f * 30);
  char bar[31];
  for (int i = 0; i < 30; i++) bar[i] = i < filled ? '#' : '.';
  bar[30] = '\0';
  double eta = f > 0 ? (now - p->t0) * (1 - f) / f : 0;
  fprintf(stderr, "\r%-20.20s [%s] %5.1f%%  ETA %4.0fs ", p->label, bar, 100 * f, eta);
  fflush(stderr);
}

void px_sim_progress_free(struct px_sim_progress *p) {
  if (!p) return;
  fprintf(stderr, "\r%-80s\r", "");
  fflush(stderr);
  free(p);
}
