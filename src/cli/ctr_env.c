/*
 * ctr_env.c - the --container-* options across salloc's shell. salloc's
 * own job only holds the allocation (its script waits for the end marker
 * on the host), so the options are not the job's: salloc hands them to
 * the shell as PHALANX_CONTAINER_* variables, and every srun in that shell
 * takes them as its defaults, as pyxis' salloc options reach its sruns.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/ctr_env.h"

static const char *const ctr_vars[] = {"PHALANX_CONTAINER_IMAGE", "PHALANX_CONTAINER_MOUNTS",
                                       "PHALANX_CONTAINER_WORKDIR", "PHALANX_CONTAINER_ENV"};

static char **ctr_field(struct px_jobspec *s, size_t i) {
  char **f[] = {&s->container_image, &s->container_mounts, &s->container_workdir, &s->container_env};
  return f[i];
}

int px_ctr_to_env(struct px_jobspec *s) {
  for (size_t i = 0; i < sizeof ctr_vars / sizeof ctr_vars[0]; i++) {
    char **f = ctr_field(s, i);
    if (*f ? setenv(ctr_vars[i], *f, 1) != 0 : unsetenv(ctr_vars[i]) != 0) return PX_ENOMEM;
    free(*f);
    *f = NULL;
  }
  return 0;
}

int px_ctr_from_env(struct px_jobspec *s) {
  if (s->container_image || !getenv(ctr_vars[0])) return 0; /* srun's own image wins, with its options */
  for (size_t i = 0; i < sizeof ctr_vars / sizeof ctr_vars[0]; i++) {
    char **f = ctr_field(s, i);
    const char *v = getenv(ctr_vars[i]);
    if (!*f && v && *v && !(*f = strdup(v))) return PX_ENOMEM;
  }
  return 0;
}
