/*
 * cli_units.c - the value parsers the CLI needs, as thin wrappers over
 * util/units and util/hostlist that keep the CLI's calling convention
 * (plain arrays of names; Slurm's own wording is added by the callers).
 */
#include <stdlib.h>

#include "cli/cli.h"
#include "util/hostlist.h"
#include "util/units.h"
#include "util/vec.h"

int px_cli_duration_parse(const char *s, int64_t *out_s) {
  if (!s) return PX_EINVAL;
  return px_duration_parse(s, out_s, NULL) ? PX_EINVAL : 0;
}

int px_cli_size_parse_mib(const char *s, uint64_t *out_mib) {
  if (!s) return PX_EINVAL;
  int rc = px_size_parse_mib(s, out_mib, NULL);
  return rc == PX_ERANGE ? PX_ERANGE : rc ? PX_EINVAL : 0;
}

void px_cli_strv_free(char **v, size_t n) {
  if (!v) return;
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

int px_cli_hostlist_expand(const char *s, char ***names, size_t *n) {
  struct px_strvec v = {0};
  int rc = px_hostlist_expand(s, 0, &v, NULL);
  if (rc) return rc;
  *names = v.v; /* a px_strvec's array is a plain malloc'd array of strings */
  *n = v.len;
  return 0;
}

char *px_cli_hostlist_compress(char *const *names, size_t n) {
  char *out = NULL;
  return px_hostlist_compress((const char *const *)names, n, &out) ? NULL : out;
}
