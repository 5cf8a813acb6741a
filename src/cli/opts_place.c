/*
 * opts_place.c - the options that choose nodes and lay out tasks: -w/--nodelist,
 * -x/--exclude, --reservation, --cpus-per-gpu, -m/--distribution, --hint,
 * --open-mode and --time-min (issue 17).
 *
 * Values are checked here with Slurm 22.05's wording (so wrappers that grep
 * sbatch's errors keep working); the server checks them again for API
 * callers (core/parse.c) and resolves node names. A node list containing a
 * '/' is a file of names, as Slurm reads it: words separated by blanks,
 * commas or newlines, joined into one list here, before the job travels.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/opts_apply.h"

#define PX_NODEFILE_MAX (1 << 20) /* a node file beyond 1 MiB is not a list of nodes */

static int set_owned(char **dst, char *val) {
  if (!val) return PX_ENOMEM;
  free(*dst);
  *dst = val;
  return 0;
}

/* The names of a node file joined by commas; NULL with d set. */
static char *read_node_file(const char *path, const char *opt, struct px_diag *d) {
  FILE *f = fopen(path, "r");
  if (!f) {
    /* Slurm's own words, function name and all */
    px_diag_set(d, PX_EIO, -1, "slurm_allocate_resources error opening file %s, %s", path, strerror(errno));
    return NULL;
  }
  struct stat st;
  if (fstat(fileno(f), &st) || !S_ISREG(st.st_mode)) { /* a FIFO or a device would block or never end */
    fclose(f);
    px_diag_set(d, PX_EINVAL, -1, "--%s %s: not a regular file", opt, path);
    return NULL;
  }
  char *out = malloc(PX_NODEFILE_MAX + 1);
  size_t len = 0;
  int ch;
  bool sep = true;
  while (out && (ch = fgetc(f)) != EOF && len < PX_NODEFILE_MAX) {
    bool blank = isspace(ch) || ch == ',';
    if (blank) {
      sep = true;
      continue;
    }
    if (sep && len) out[len++] = ',';
    sep = false;
    if (len < PX_NODEFILE_MAX) out[len++] = (char)ch;
  }
  bool too_big = out && ch != EOF;
  fclose(f);
  if (!out) {
    px_diag_set(d, PX_ENOMEM, -1, "out of memory");
    return NULL;
  }
  out[len] = '\0';
  if (too_big || !len) {
    free(out);
    px_diag_set(d, PX_EINVAL, -1, "--%s file %s %s", opt, path, too_big ? "is over 1 MiB" : "names no node");
    return NULL;
  }
  return out;
}

static int set_nodes(char **dst, const char *val, const char *opt, struct px_diag *d) {
  if (!*val) return px_diag_set(d, PX_EINVAL, -1, "--%s: empty node list", opt);
  if (!strchr(val, '/')) return set_owned(dst, strdup(val));
  char *names = read_node_file(val, opt, d);
  return names ? set_owned(dst, names) : PX_EINVAL;
}

int px_opt_nodelist(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                    struct px_diag *d) {
  return set_nodes(&s->nodelist, val, "nodelist", d);
}
int px_opt_exclude(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                   struct px_diag *d) {
  return set_nodes(&s->exclude, val, "exclude", d);
}
int px_opt_reservation(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                       struct px_diag *d) {
  return set_owned(&s->reservation, strdup(val));
}

/* A count from 1 to 100000, in Slurm's words when it is not. */
static int positive(const char *val, const char *opt, uint32_t *out, struct px_diag *d) {
  char *e;
  errno = 0;
  long v = strtol(val, &e, 10);
  if (errno || e == val || *e || v <= 0 || v > 100000)
    return px_diag_set(d, PX_EINVAL, -1, "Invalid numeric value \"%s\" for --%s.", val, opt);
  *out = (uint32_t)v;
  return 0;
}

int px_opt_cpus_per_gpu(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                        struct px_diag *d) {
  return positive(val, "cpus-per-gpu", &s->cpus_per_gpu, d);
}

int px_opt_ntasks_per_gpu(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                          struct px_diag *d) {
  return positive(val, "ntasks-per-gpu", &x->ntasks_per_gpu, d);
}

/* Slurm looks at the first letter only: a[ppend], t[runcate]. */
int px_opt_open_mode(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                     struct px_diag *d) {
  int c = tolower((unsigned char)*val);
  if (c != 'a' && c != 't') {
    x->exit_status = 255; /* Slurm's exit(-1) for this one */
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --open-mode specification");
  }
  return set_owned(&s->open_mode, strdup(c == 'a' ? "append" : "truncate"));
}

int px_opt_hint(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                struct px_diag *d) {
  static const char *const hints[] = {"nomultithread", "multithread", "compute_bound", "memory_bound"};
  char buf[64];
  snprintf(buf, sizeof buf, "%s", val);
  char *save = NULL;
  for (char *w = strtok_r(buf, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    size_t i = 0;
    while (i < 4 && strcasecmp(w, hints[i])) i++;
    if (i == 4) return px_diag_set(d, PX_EINVAL, -1, "unrecognized --hint argument \"%s\", see --hint=help", w);
  }
  if (strlen(val) >= sizeof buf) return px_diag_set(d, PX_EINVAL, -1, "unrecognized --hint argument \"%s\"", val);
  char *lower = strdup(val);
  for (char *p = lower; p && *p; p++) *p = (char)tolower((unsigned char)*p);
  return set_owned(&s->hint, lower);
}

/* -m LEVEL1[:LEVEL2[:LEVEL3]][,Pack|NoPack]; the core has the grammar, this
 * gives Slurm's two messages for its two cases. */
int px_opt_distribution(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                        struct px_diag *d) {
  x->exit_status = 255; /* Slurm's exit(-1) for a bad -m; reset below when it is good */
  if (!strncasecmp(val, "plane", 5) && (val[5] == '\0' || val[5] == ':' || val[5] == ',' ||
                                        (val[5] == '=' && strtol(val + 6, NULL, 10) <= 0)))
    return px_diag_set(d, PX_EINVAL, -1, "Invalid plane size or size not specified");
  struct px_jobspec probe;
  px_jobspec_init(&probe);
  probe.distribution = (char *)val;
  probe.nodelist = "-"; /* arbitrary's need of a node list is checked once all options are in */
  struct px_diag ignored;
  if (px_jobspec_check_launch(&probe, &ignored))
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --distribution specification");
  x->exit_status = 0;
  return set_owned(&s->distribution, strdup(val));
}

int px_opt_time_min(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                    struct px_diag *d) {
  int64_t secs;
  if (px_cli_duration_parse(val, &secs)) {
    x->exit_status = 255;
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --time-min specification");
  }
  if (secs == 0) /* 0 would read as "not given" on the wire; Slurm's server refuses it */
    return px_diag_set(d, PX_EINVAL, -1,
                       "Batch job submission failed: Invalid time-min specification (exceeds job's time "
                       "or other limits)");
  s->time_min_s = secs; /* UNLIMITED (INT64_MAX) is the wire's unlimited too */
  return 0;
}

/* Checks that need every option: Slurm's cross-option errors. */
int px_cli_check_placement(const struct px_jobspec *s, struct px_diag *d) {
  if (s->cpus_per_gpu && s->cpus_per_task)
    return px_diag_set(d, PX_EINVAL, -1, "--cpus-per-gpu is mutually exclusive with --cpus-per-task");
  size_t nlisted = 0;
  char **names;
  if (s->nodelist && !px_cli_hostlist_expand(s->nodelist, &names, &nlisted)) px_cli_strv_free(names, nlisted);
  /* Slurm raises the minimum node count to the list's; a lower maximum is its error */
  if (nlisted && s->nodes_max && s->nodes_max < nlisted)
    return px_diag_set(d, PX_EINVAL, -1, "invalid number of nodes (-N %zu-%u)", nlisted, s->nodes_max);
  if (s->distribution && !strncasecmp(s->distribution, "arbitrary", 9) && !s->nodelist)
    return px_diag_set(d, PX_EINVAL, -1,
                       "With Arbitrary distribution you need to specify a nodelist or hostfile with the -w "
                       "option");
  return 0;
}
