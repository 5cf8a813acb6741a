/* container_spec.c - checking and parsing the --container-* options (container_spec.h). */
#include "proto/container_spec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An absolute path with no empty-named trick: no ".." component, no control
 * characters (a newline would end up in the runtime's configuration). */
static const char *path_problem(const char *p, size_t len) {
  if (!len) return "is empty";
  if (p[0] != '/') return "is not an absolute path";
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)p[i] < 0x20 || p[i] == 0x7f) return "contains a control character";
  for (size_t i = 0; i < len;) {
    size_t j = i;
    while (j < len && p[j] != '/') j++;
    if (j - i == 2 && p[i] == '.' && p[i + 1] == '.') return "has a \"..\" component";
    i = j + 1;
  }
  return NULL;
}

static int set_flag(struct px_ctr_mount *m, const char *f, size_t len) {
  static const char *const props[] = {"rprivate", "private", "rslave", "slave"};
  if (len == 2 && !strncmp(f, "ro", 2)) return m->ro = true, 0;
  if (len == 2 && !strncmp(f, "rw", 2)) return m->ro = false, 0;
  if (len == 6 && !strncmp(f, "nosuid", 6)) return m->nosuid = true, 0;
  if (len == 5 && !strncmp(f, "nodev", 5)) return m->nodev = true, 0;
  if (len == 6 && !strncmp(f, "noexec", 6)) return m->noexec = true, 0;
  for (size_t i = 0; i < sizeof props / sizeof props[0]; i++)
    if (strlen(props[i]) == len && !strncmp(f, props[i], len)) return m->propagation = props[i], 0;
  return -1;
}

static int parse_flags(struct px_ctr_mount *m, const char *f, size_t len, size_t idx, struct px_diag *d) {
  for (size_t i = 0; i <= len;) {
    size_t j = i;
    while (j < len && f[j] != '+') j++;
    if (set_flag(m, f + i, j - i))
      return px_diag_set(d, PX_EINVAL, -1,
                         "container_mounts: entry %zu: flag \"%.*s\" is not ro, rw, private, rprivate, slave, "
                         "rslave, nosuid, nodev or noexec",
                         idx + 1, (int)(j - i > 32 ? 32 : j - i), f + i);
    i = j + 1;
  }
  return 0;
}

static char *dup_n(const char *s, size_t n) {
  char *c = malloc(n + 1);
  if (c) memcpy(c, s, n), c[n] = '\0';
  return c;
}

/* One SRC[:DST[:FLAGS]] entry of len bytes. */
static int parse_one(const char *e, size_t len, size_t idx, struct px_ctr_mount *m, struct px_diag *d) {
  const char *c1 = memchr(e, ':', len);
  const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - e)) : NULL;
  size_t slen = c1 ? (size_t)(c1 - e) : len;
  const char *dst = c1 ? c1 + 1 : e;
  size_t dlen = c1 ? (c2 ? (size_t)(c2 - dst) : len - (size_t)(dst - e)) : slen;
  *m = (struct px_ctr_mount){.propagation = "rprivate"}; /* freed as it is on any error */
  const char *why = path_problem(e, slen);
  if (why) return px_diag_set(d, PX_EINVAL, -1, "container_mounts: entry %zu: source %s", idx + 1, why);
  if ((why = path_problem(dst, dlen)))
    return px_diag_set(d, PX_EINVAL, -1, "container_mounts: entry %zu: destination %s", idx + 1, why);
  if (dlen == 1) return px_diag_set(d, PX_EINVAL, -1, "container_mounts: entry %zu: destination is /", idx + 1);
  if (c2) {
    size_t flen = len - (size_t)(c2 + 1 - e);
    int rc = parse_flags(m, c2 + 1, flen, idx, d);
    if (rc) return rc;
  }
  m->src = dup_n(e, slen);
  m->dst = dup_n(dst, dlen);
  return m->src && m->dst ? 0 : PX_ENOMEM;
}

int px_ctr_mounts_parse(const char *text, struct px_ctr_mounts *out, struct px_diag *d) {
  out->n = 0;
  for (const char *p = text; p && *p;) {
    size_t len = strcspn(p, ",");
    if (out->n == PX_CTR_MOUNTS_MAX) {
      px_ctr_mounts_fini(out);
      return px_diag_set(d, PX_EINVAL, -1, "container_mounts: more than %d entries", PX_CTR_MOUNTS_MAX);
    }
    struct px_ctr_mount *m = &out->v[out->n];
    int rc = parse_one(p, len, out->n, m, d);
    out->n++;
    if (rc) {
      px_ctr_mounts_fini(out);
      return rc == PX_ENOMEM ? px_diag_set(d, PX_ENOMEM, -1, "container_mounts: out of memory") : rc;
    }
    p += len + (p[len] == ',');
  }
  return 0;
}

void px_ctr_mounts_fini(struct px_ctr_mounts *m) {
  for (size_t i = 0; i < m->n; i++) {
    free(m->v[i].src);
    free(m->v[i].dst);
    m->v[i].src = m->v[i].dst = NULL;
  }
  m->n = 0;
}

bool px_ctr_env_name_ok(const char *name, size_t len) {
  if (!len || (name[0] >= '0' && name[0] <= '9')) return false;
  for (size_t i = 0; i < len; i++) {
    char c = name[i];
    if (!(c == '_' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) return false;
  }
  return true;
}

bool px_ctr_env_listed(const char *list, const char *name, size_t len) {
  for (const char *p = list; p && *p;) {
    size_t n = strcspn(p, ",");
    if (n == len && !strncmp(p, name, len)) return true;
    p += n + (p[n] == ',');
  }
  return false;
}

static int check_env(const char *list, const char *prefix, struct px_diag *d) {
  for (const char *p = list;;) {
    size_t n = strcspn(p, ",");
    if (!px_ctr_env_name_ok(p, n))
      return px_diag_set(d, PX_EINVAL, -1, "%scontainer_env: \"%.*s\" is not a variable name", prefix,
                         (int)(n > 64 ? 64 : n), p);
    if (!p[n]) return 0;
    p += n + 1;
  }
}

static bool has_ctrl(const char *s) {
  for (; *s; s++)
    if ((unsigned char)*s < 0x20 || *s == 0x7f) return true;
  return false;
}

int px_container_spec_check(const struct px_jobspec *s, const char *prefix, struct px_diag *d) {
  const char *img = s->container_image;
  if (!img) {
    const char *other = s->container_mounts ? "container_mounts" : s->container_workdir ? "container_workdir"
                        : s->container_env ? "container_env" : NULL;
    if (other) return px_diag_set(d, PX_EINVAL, -1, "%s%s: needs container_image", prefix, other);
    return 0;
  }
  if (!*img) return px_diag_set(d, PX_EINVAL, -1, "%scontainer_image: must not be empty", prefix);
  if (has_ctrl(img)) return px_diag_set(d, PX_EINVAL, -1, "%scontainer_image: contains a control character", prefix);
  const char *wd = s->container_workdir, *why = wd ? path_problem(wd, strlen(wd)) : NULL;
  if (why) return px_diag_set(d, PX_EINVAL, -1, "%scontainer_workdir: %s", prefix, why);
  if (s->container_env) {
    int rc = check_env(s->container_env, prefix, d);
    if (rc) return rc;
  }
  struct px_ctr_mounts m;
  int rc = px_ctr_mounts_parse(s->container_mounts, &m, d);
  if (rc && *prefix && d) { /* the parser names the field without the prefix */
    char msg[sizeof d->msg];
    snprintf(msg, sizeof msg, "%s", d->msg);
    px_diag_set(d, rc, -1, "%s%s", prefix, msg);
  }
  if (!rc) px_ctr_mounts_fini(&m);
  return rc;
}
