/*
 * The corpus of batch scripts (tests/data/scripts/, written the way users
 * write them) through sbatch's script handling: each must have its "#!"
 * line, and its #SBATCH / #PHX directives must give exactly the job its
 * "# expect: field=value" lines state (worked out by hand from the
 * directives: "-t 1-12:00:00" is 129600 s, "--mem-per-gpu=80G" is 81920
 * MiB). The end-to-end run of the same scripts on a dev cluster is
 * tests/integration/test_cli_corpus.sh.
 */
#include "px_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "spec_fields.h"

#define NOW 1796218730LL /* 2026-12-02T13:38:50Z, for --begin=now+1hour */

static char *slurp(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0;
  FILE *m = open_memstream(&buf, &len);
  int c;
  while ((c = fgetc(f)) != EOF) fputc(c, m);
  fclose(m);
  fclose(f);
  return buf;
}

/* Checks every "# expect:" line; a word without '=' continues the previous value. */
static int check_expects(const char *name, const char *script, const struct px_jobspec *s,
                         const struct px_cli_extra *x) {
  int checked = 0;
  for (const char *p = strstr(script, "# expect: "); p; p = strstr(p + 1, "# expect: ")) {
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)strcspn(p + 10, "\n"), p + 10);
    char key[64] = "", val[256] = "";
    char *save = NULL;
    for (char *w = strtok_r(line, " ", &save);; w = strtok_r(NULL, " ", &save)) {
      char *eq = w ? strchr(w, '=') : NULL;
      if (*key && (!w || eq)) {
        char got[256];
        field(s, x, key, got, sizeof got);
        if (strcmp(got, val)) fail_msg("%s: %s = '%s', want '%s'", name, key, got, val);
        checked++;
      }
      if (!w) break;
      if (eq) {
        snprintf(key, sizeof key, "%.*s", (int)(eq - w), w);
        snprintf(val, sizeof val, "%s", eq + 1);
      } else {
        size_t l = strlen(val);
        snprintf(val + l, sizeof val - l, " %s", w);
      }
    }
  }
  return checked;
}

static int by_name(const struct dirent **a, const struct dirent **b) {
  return strcmp((*a)->d_name, (*b)->d_name);
}

static void every_corpus_script_parses_as_expected(void **state) {
  const char *data = getenv("PX_TESTDATA");
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/scripts", data ? data : "tests/data");
  struct dirent **ents;
  int n = scandir(dir, &ents, NULL, by_name);
  assert_true(n > 0);
  int scripts = 0, checks = 0;
  for (int i = 0; i < n; i++) {
    const char *nm = ents[i]->d_name;
    size_t len = strlen(nm);
    if (len > 3 && !strcmp(nm + len - 3, ".sh")) {
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, nm);
      char *script = slurp(path);
      assert_non_null(script);
      assert_true(px_cli_script_has_shebang(script));
      struct px_cli_optlist l = {0};
      struct px_diag d;
      struct px_jobspec s;
      struct px_cli_extra x = {0};
      px_jobspec_init(&s);
      if (px_cli_parse_directives(script, &l, &d) || px_cli_apply(&l, &s, &x, NOW, &d))
        fail_msg("%s: %s", nm, d.msg);
      int c = check_expects(nm, script, &s, &x);
      if (c == 0) fail_msg("%s has no '# expect:' line", nm);
      checks += c;
      scripts++;
      px_jobspec_fini(&s);
      px_cli_extra_fini(&x);
      px_cli_optlist_fini(&l);
      free(script);
    }
    free(ents[i]);
  }
  free(ents);
  assert_true(scripts >= 30); /* the issue asks for a corpus of at least 30 */
  assert_true(checks >= 100);
}

int main(void) {
  setenv("TZ", "UTC", 1);
  tzset();
  const struct CMUnitTest tests[] = {cmocka_unit_test(every_corpus_script_parses_as_expected)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
