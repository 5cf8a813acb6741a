/*
 * fuzz_hostlist.c - libFuzzer target for hostlist expansion and compression.
 * Besides "no crash, no leak, no sanitizer report" it checks two properties:
 * the count matches the expansion, and compressing the names then expanding
 * the result gives back the same set.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/hostlist.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorts and removes duplicates in place. */
static void unique(struct px_strvec *v) {
  qsort(v->v, v->len, sizeof *v->v, cmp);
  size_t k = 0;
  for (size_t i = 0; i < v->len; i++) {
    if (k && strcmp(v->v[k - 1], v->v[i]) == 0) free(v->v[i]);
    else v->v[k++] = v->v[i];
  }
  v->len = k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *expr = malloc(size + 1);
  if (!expr) return 0;
  memcpy(expr, data, size);
  expr[size] = '\0';
  struct px_strvec names = {0}, back = {0};
  struct px_diag d;
  size_t count = 0;
  int err = px_hostlist_expand(expr, 2000, &names, &d);
  int cerr = px_hostlist_count(expr, 2000, &count, NULL);
  if ((err == 0) != (cerr == 0) || (err == 0 && count != names.len)) abort();
  if (err == 0 && names.len) {
    char *s = NULL;
    if (px_hostlist_compress((const char *const *)names.v, names.len, &s) == 0) {
      if (px_hostlist_expand(s, 2000, &back, NULL) != 0) abort();
      unique(&names);
      unique(&back);
      if (names.len != back.len) abort();
      for (size_t i = 0; i < names.len; i++)
        if (strcmp(names.v[i], back.v[i]) != 0) abort();
    }
    free(s);
  }
  px_strvec_free_all(&names);
  px_strvec_free_all(&back);
  free(expr);
  return 0;
}
