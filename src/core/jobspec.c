/* jobspec.c - life cycle of struct px_jobspec (jobspec.h). */
#include "core/jobspec.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/error.h"

void px_jobspec_init(struct px_jobspec *s) {
  memset(s, 0, sizeof *s);
  s->requeue = true;
}

static void free_strv(char **v) {
  if (!v) return;
  for (char **p = v; *p; p++) free(*p);
  free(v);
}

void px_jobspec_fini(struct px_jobspec *s) {
  char **strs[] = {&s->name, &s->user, &s->account, &s->partition, &s->qos, &s->gpu_type,
                   &s->constraint, &s->dependency, &s->array, &s->script, &s->workdir,
                   &s->submit_dir, &s->stdout_path, &s->stderr_path, &s->stdin_path,
                   &s->comment, &s->mail_type, &s->mail_user, &s->service, &s->exclude,
                   &s->nodelist, &s->reservation, &s->open_mode, &s->hint, &s->distribution,
                   &s->container_image, &s->container_mounts, &s->container_workdir, &s->container_env};
  for (size_t i = 0; i < sizeof strs / sizeof strs[0]; i++) {
    free(*strs[i]);
    *strs[i] = NULL;
  }
  free_strv(s->argv);
  free_strv(s->env);
  s->argv = s->env = NULL;
}

static int dup_str(char **dst, const char *src) {
  if (!src) return 0;
  *dst = strdup(src);
  return *dst ? 0 : PX_ENOMEM;
}

static int dup_strv(char ***dst, char *const *src) {
  if (!src) return 0;
  size_t n = 0;
  while (src[n]) n++;
  char **v = calloc(n + 1, sizeof *v);
  if (!v) return PX_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!(v[i] = strdup(src[i]))) {
      free_strv(v);
      return PX_ENOMEM;
    }
  }
  *dst = v;
  return 0;
}

int px_jobspec_copy(struct px_jobspec *dst, const struct px_jobspec *src) {
  *dst = *src;
  /* Clear every pointer first so that a failure half-way frees only copies. */
  dst->name = dst->user = dst->account = dst->partition = dst->qos = dst->gpu_type = NULL;
  dst->constraint = dst->dependency = dst->array = dst->script = dst->workdir = NULL;
  dst->submit_dir = dst->stdout_path = dst->stderr_path = dst->stdin_path = NULL;
  dst->comment = dst->mail_type = dst->mail_user = dst->service = dst->exclude = NULL;
  dst->nodelist = dst->reservation = dst->open_mode = dst->hint = dst->distribution = NULL;
  dst->container_image = dst->container_mounts = dst->container_workdir = dst->container_env = NULL;
  dst->argv = dst->env = NULL;
  int rc = 0;
  rc |= dup_str(&dst->name, src->name);
  rc |= dup_str(&dst->user, src->user);
  rc |= dup_str(&dst->account, src->account);
  rc |= dup_str(&dst->partition, src->partition);
  rc |= dup_str(&dst->qos, src->qos);
  rc |= dup_str(&dst->gpu_type, src->gpu_type);
  rc |= dup_str(&dst->constraint, src->constraint);
  rc |= dup_str(&dst->dependency, src->dependency);
  rc |= dup_str(&dst->array, src->array);
  rc |= dup_str(&dst->script, src->script);
  rc |= dup_str(&dst->workdir, src->workdir);
  rc |= dup_str(&dst->submit_dir, src->submit_dir);
  rc |= dup_str(&dst->stdout_path, src->stdout_path);
  rc |= dup_str(&dst->stderr_path, src->stderr_path);
  rc |= dup_str(&dst->stdin_path, src->stdin_path);
  rc |= dup_str(&dst->comment, src->comment);
  rc |= dup_str(&dst->mail_type, src->mail_type);
  rc |= dup_str(&dst->mail_user, src->mail_user);
  rc |= dup_str(&dst->service, src->service);
  rc |= dup_str(&dst->exclude, src->exclude);
  rc |= dup_str(&dst->nodelist, src->nodelist);
  rc |= dup_str(&dst->reservation, src->reservation);
  rc |= dup_str(&dst->open_mode, src->open_mode);
  rc |= dup_str(&dst->hint, src->hint);
  rc |= dup_str(&dst->distribution, src->distribution);
  rc |= dup_str(&dst->container_image, src->container_image);
  rc |= dup_str(&dst->container_mounts, src->container_mounts);
  rc |= dup_str(&dst->container_workdir, src->container_workdir);
  rc |= dup_str(&dst->container_env, src->container_env);
  rc |= dup_strv(&dst->argv, src->argv);
  rc |= dup_strv(&dst->env, src->env);
  if (rc) {
    px_jobspec_fini(dst);
    px_jobspec_init(dst);
    return PX_ENOMEM;
  }
  return 0;
}

/* ---- --open-mode, --hint, --distribution ---- */

static bool word_in(const char *w, size_t len, const char *const *set) {
  for (; *set; set++)
    if (strlen(*set) == len && !strncasecmp(w, *set, len)) return true;
  return false;
}

/* Slurm's -m: LEVEL1[:LEVEL2[:LEVEL3]][,Pack|NoPack], LEVEL1 block, cyclic,
 * arbitrary, plane=N or '*'; the socket and core levels block, cyclic,
 * fcyclic or '*'. */
static int check_distribution(const char *v, bool nodelist, struct px_diag *d) {
  static const char *const first[] = {"*", "block", "cyclic", "arbitrary", NULL};
  static const char *const inner[] = {"*", "block", "cyclic", "fcyclic", NULL};
  static const char *const pack[] = {"pack", "nopack", NULL};
  const char *comma = strchr(v, ','), *end = comma ? comma : v + strlen(v);
  if (comma && !word_in(comma + 1, strlen(comma + 1), pack))
    return px_diag_set(d, PX_EINVAL, -1, "distribution: \"%.64s\" after ',' is not Pack or NoPack", comma + 1);
  int level = 0;
  for (const char *p = v; p < end; level++) {
    const char *colon = memchr(p, ':', (size_t)(end - p)), *e = colon ? colon : end;
    size_t len = (size_t)(e - p);
    bool ok = level == 0 ? word_in(p, len, first) : level < 3 && word_in(p, len, inner);
    if (level == 0 && len > 6 && !strncasecmp(p, "plane=", 6)) {
      char *num_end;
      long size = strtol(p + 6, &num_end, 10);
      if (num_end != e || size <= 0 || size > 100000)
        return px_diag_set(d, PX_EINVAL, -1, "distribution: plane size must be a positive number (%.64s)", v);
      ok = true;
    }
    if (!ok) return px_diag_set(d, PX_EINVAL, -1, "distribution: \"%.*s\" is not a distribution (%.64s)", (int)len, p, v);
    if (level == 0 && len == 9 && !strncasecmp(p, "arbitrary", 9) && !nodelist)
      return px_diag_set(d, PX_EINVAL, -1, "distribution: arbitrary needs a node list");
    p = colon ? colon + 1 : end;
  }
  return 0;
}

static int check_hint(const char *v, struct px_diag *d) {
  static const char *const hints[] = {"nomultithread", "multithread", "compute_bound", "memory_bound", NULL};
  for (const char *p = v;;) {
    const char *comma = strchr(p, ','), *e = comma ? comma : p + strlen(p);
    if (!word_in(p, (size_t)(e - p), hints))
      return px_diag_set(d, PX_EINVAL, -1,
                         "hint: \"%.*s\" is not nomultithread, multithread, compute_bound or memory_bound",
                         (int)(e - p), p);
    if (!comma) return 0;
    p = comma + 1;
  }
}

/* --mail-type: Slurm's words, any case (the server mails on BEGIN, END,
 * FAIL and REQUEUE; the others are accepted as Slurm accepts them). */
static int check_mail_type(const char *v, struct px_diag *d) {
  static const char *const words[] = {"NONE", "BEGIN", "END", "FAIL", "REQUEUE", "ALL", "INVALID_DEPEND",
                                      "STAGE_OUT", "TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80",
                                      "TIME_LIMIT_50", "ARRAY_TASKS", NULL};
  for (const char *p = v;;) {
    const char *comma = strchr(p, ','), *e = comma ? comma : p + strlen(p);
    if (!word_in(p, (size_t)(e - p), words))
      return px_diag_set(d, PX_EINVAL, -1, "mail_type: \"%.*s\" is not one of BEGIN, END, FAIL, REQUEUE, ALL, NONE, "
                         "INVALID_DEPEND, STAGE_OUT, TIME_LIMIT[_50|_80|_90], ARRAY_TASKS", (int)(e - p), p);
    if (!comma) return 0;
    p = comma + 1;
  }
}

int px_jobspec_check_launch(const struct px_jobspec *s, struct px_diag *d) {
  if (s->mail_type && *s->mail_type && check_mail_type(s->mail_type, d)) return PX_EINVAL;
  if (s->open_mode && strcmp(s->open_mode, "append") && strcmp(s->open_mode, "truncate"))
    return px_diag_set(d, PX_EINVAL, -1, "open_mode: \"%.16s\" is not append or truncate", s->open_mode);
  if (s->hint && *s->hint) {
    int rc = check_hint(s->hint, d);
    if (rc) return rc;
  }
  if (s->distribution && *s->distribution)
    return check_distribution(s->distribution, s->nodelist && *s->nodelist, d);
  return 0;
}
