/* pty_order.c - a terminal step's order on its way to the supervisor (pty.h). */
#include "agent/pty.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/error.h"

char *px_pty_order_encode(const struct px_step_order *o, const char *server, const char *ca_file) {
  char self[4096];
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) return NULL;
  self[len] = '\0';
  size_t n = 0;
  while (o->argv[n]) n++;
  char **argv = calloc(n + 4, sizeof *argv);
  if (!argv) return NULL;
  argv[0] = self;
  argv[1] = "pty-host";
  argv[2] = "--";
  memcpy(argv + 3, o->argv, n * sizeof *argv);
  struct px_step_order c = *o;
  c.argv = argv;
  c.pty_server = (char *)server;
  c.pty_ca = ca_file && *ca_file ? (char *)ca_file : NULL;
  char *json = px_step_order_encode(&c);
  free(argv);
  return json;
}

static int add(char **env, size_t *n, size_t cap, const char *k, const char *v) {
  if (!v) return 0;
  if (*n >= cap) return PX_ERANGE;
  size_t len = strlen(k) + strlen(v) + 2;
  if (!(env[*n] = malloc(len))) return PX_ENOMEM;
  snprintf(env[*n], len, "%s=%s", k, v);
  (*n)++;
  return 0;
}

int px_pty_step_env(const struct px_step_order *o, char **env, size_t *n, size_t cap) {
  if (!o->pty_session) return 0;
  char rows[16], cols[16];
  snprintf(rows, sizeof rows, "%u", o->pty_rows);
  snprintf(cols, sizeof cols, "%u", o->pty_cols);
  int rc = add(env, n, cap, "PHALANX_PTY_SESSION", o->pty_session);
  if (!rc) rc = add(env, n, cap, "PHALANX_PTY_SECRET", o->pty_secret);
  if (!rc) rc = add(env, n, cap, "PHALANX_PTY_SERVER", o->pty_server);
  if (!rc) rc = add(env, n, cap, "PHALANX_PTY_CA", o->pty_ca);
  if (!rc && o->pty_rows) rc = add(env, n, cap, "PHALANX_PTY_ROWS", rows);
  if (!rc && o->pty_cols) rc = add(env, n, cap, "PHALANX_PTY_COLS", cols);
  if (!rc && o->pty_raw) rc = add(env, n, cap, "PHALANX_PTY_RAW", "1");
  return rc;
}
