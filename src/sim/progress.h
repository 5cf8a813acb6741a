/*
 * progress.h - a progress bar with an ETA on stderr, drawn only when stderr
 * is a terminal (pipes and logs stay clean), at most five times a second.
 */
#ifndef PX_SIM_PROGRESS_H
#define PX_SIM_PROGRESS_H

#include <stdint.h>

struct px_sim_progress;

/* NULL when stderr is not a terminal (or out of memory): callers then skip updates. */
struct px_sim_progress *px_sim_progress_new(const char *label);
void px_sim_progress_update(struct px_sim_progress *p, uint64_t done, uint64_t total);
/* Clears the line and frees p (NULL is a no-op). */
void px_sim_progress_free(struct px_sim_progress *p);

#endif
