/* jobspec.c - life cycle of struct px_jobspec (jobspec.h). */
#include "core/jobspec.h"

#include <stdlib.h>
#include <string.h>

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
                   &s->nodelist, &s->reservation, &s->open_mode, &s->hint, &s->distribution};
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
  rc |= dup_strv(&dst->argv, src->argv);
  rc |= dup_strv(&dst->env, src->env);
  if (rc) {
    px_jobspec_fini(dst);
    px_jobspec_init(dst);
    return PX_ENOMEM;
  }
  return 0;
}
