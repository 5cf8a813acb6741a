/*
 * cmd_service.c - `phalanx service apply FILE|list|show NAME|scale NAME N|
 * delete NAME|logs NAME [REPLICA]` (docs/services.md).
 *
 * apply sends the file as it is (YAML or JSON): the server parses it, so
 * its errors name the file's own lines, and this lean front end links no
 * YAML library. logs reads a replica's output like GET /v1/jobs/ID/output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/cmd_common.h"

#define USAGE "usage: phalanx service apply FILE | list | show NAME | scale NAME N | delete NAME | logs NAME [REPLICA] [--json]"

static char *read_all(FILE *f, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, f);
    if (n < cap - 1) break;
    char *b = cap < (8u << 20) ? realloc(buf, cap *= 2) : NULL;
    if (!b) free(buf);
    buf = b;
  }
  if (buf) buf[n] = '\0';
  *len = n;
  return buf;
}

/* Prints the server's error for a non-2xx answer; 0 for 2xx. */
static int check(struct px_cmd *c, long status, json_t *resp, const char *what) {
  if (status / 100 == 2) return 0;
  char msg[512];
  px_client_error_text(status, resp, msg, sizeof msg);
  px_cmd_error(c, "%s%s%s", what ? what : "", what ? ": " : "", msg);
  return 1;
}

static int apply(struct px_cmd *c, const char *file) {
  FILE *f = strcmp(file, "-") ? fopen(file, "r") : stdin;
  if (!f) {
    px_cmd_error(c, "%s: cannot read it", file);
    return 1;
  }
  size_t len;
  char *text = read_all(f, &len);
  if (f != stdin) fclose(f);
  if (!text) {
    px_cmd_error(c, "%s: out of memory or over 8 MiB", file);
    return 1;
  }
  struct px_diag d;
  char cwd[2048], path[2200];
  px_diag_clear(&d);
  snprintf(path, sizeof path, "/v1/services");
  if (getcwd(cwd, sizeof cwd) && !strpbrk(cwd, " %&?#+"))
    snprintf(path, sizeof path, "/v1/services?workdir=%s", cwd);
  struct px_http_reply r = {0};
  int rc = !c->connected && px_client_init(&c->client, &d) ? 1 : 0;
  c->connected = !rc;
  if (!rc) rc = px_client_request(&c->client, "POST", path, text, len, &r, &d) ? 1 : 0;
  free(text);
  if (rc) {
    px_cmd_error(c, "%s", d.msg);
    return 1;
  }
  json_t *resp = r.body ? json_loads(r.body, 0, NULL) : NULL;
  free(r.body);
  if (!(rc = check(c, r.status, resp, file))) {
    if (c->json) px_cmd_print_json(resp);
    else
      printf("service %s %s (generation %lld)\n", json_string_value(json_object_get(resp, "name")),
             r.status == 201 ? "created"
             : json_is_true(json_object_get(resp, "new_generation")) ? "updated: rolling out"
                                                                     : "configured",
             (long long)json_integer_value(json_object_get(resp, "generation")));
  }
  json_decref(resp);
  return rc;
}

static int list(struct px_cmd *c) {
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "GET", "/v1/services", NULL, &status, &resp)) return 1;
  int rc = check(c, status, resp, NULL);
  if (!rc && c->json) px_cmd_print_json(resp);
  else if (!rc) {
    printf("%-24s %-10s %-9s %-5s %-12s %s\n", "NAME", "STATE", "READY", "GEN", "ACCOUNT", "REASON");
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(resp, "services"), i, v) {
      char ready[32];
      snprintf(ready, sizeof ready, "%lld/%lld", (long long)json_integer_value(json_object_get(v, "ready")),
               (long long)json_integer_value(json_object_get(v, "replicas")));
      printf("%-24s %-10s %-9s %-5lld %-12s %s\n", json_string_value(json_object_get(v, "name")),
             json_string_value(json_object_get(v, "state")), ready,
             (long long)json_integer_value(json_object_get(v, "generation")),
             json_string_value(json_object_get(v, "account")),
             json_string_value(json_object_get(v, "reason")));
    }
  }
  json_decref(resp);
  return rc;
}

static const char *s_of(const json_t *o, const char *k) {
  const char *v = json_string_value(json_object_get(o, k));
  return v ? v : "";
}
static long long i_of(const json_t *o, const char *k) {
  return (long long)json_integer_value(json_object_get(o, k));
}

static void print_show(const json_t *o) {
  printf("Name=%s State=%s Ready=%lld/%lld Generation=%lld User=%s Account=%s\n", s_of(o, "name"),
         s_of(o, "state"), i_of(o, "ready"), i_of(o, "replicas"), i_of(o, "generation"),
         s_of(o, "user"), s_of(o, "account"));
  if (*s_of(o, "reason")) printf("Reason=%s\n", s_of(o, "reason"));
  printf("%-6s %-8s %-4s %-10s %-12s %-10s %s\n", "INDEX", "JOBID", "GEN", "STATE", "NODE", "PORTS", "NOTE");
  size_t i;
  json_t *r;
  json_array_foreach(json_object_get(o, "replica_jobs"), i, r) {
    char ports[128] = "";
    const char *k;
    json_t *p;
    json_object_foreach(json_object_get(r, "ports"), k, p) {
      size_t n = strlen(ports);
      snprintf(ports + n, sizeof ports - n, "%s%s:%lld", n ? "," : "", k, (long long)json_integer_value(p));
    }
    printf("%-6lld %-8lld %-4lld %-10s %-12s %-10s %s%s\n", i_of(r, "index"), i_of(r, "job_id"),
           i_of(r, "generation"), s_of(r, "state"), s_of(r, "node"), ports[0] ? ports : "-",
           json_is_true(json_object_get(r, "terminating")) ? "terminating " : "", s_of(r, "reason"));
  }
  json_array_foreach(json_object_get(o, "decisions"), i, r)
    printf("Decision time=%lld %lld->%lld: %s\n", i_of(r, "time"), i_of(r, "from"), i_of(r, "to"),
           s_of(r, "reason"));
}

static int one(struct px_cmd *c, const char *method, const char *name, const char *tail,
               json_t *body, json_t **out) {
  char path[256];
  snprintf(path, sizeof path, "/v1/services/%s%s", name, tail);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, method, path, body, &status, &resp)) return 1;
  int rc = check(c, status, resp, name);
  if (!rc && out) *out = resp;
  else json_decref(resp);
  return rc;
}

/* The output of the replica(s): index or every one (-1), newest first per index. */
static int logs(struct px_cmd *c, const char *name, long index) {
  json_t *svc = NULL;
  if (one(c, "GET", name, "", NULL, &svc)) return 1;
  size_t i;
  json_t *r;
  int rc = 0, shown = 0;
  json_array_foreach(json_object_get(svc, "replica_jobs"), i, r) {
    if (index >= 0 && i_of(r, "index") != index) continue;
    char path[96];
    snprintf(path, sizeof path, "/v1/jobs/%lld/output?lines=200", i_of(r, "job_id"));
    long status = 0;
    json_t *out = NULL;
    if (px_cmd_call(c, "GET", path, NULL, &status, &out) || check(c, status, out, "output")) rc = 1;
    else {
      if (index < 0) printf("==> %s-r%lld (job %lld) <==\n", name, i_of(r, "index"), i_of(r, "job_id"));
      const char *text = json_string_value(json_object_get(out, "lines"));
      if (text) fputs(text, stdout);
      else printf("(output unavailable: %s)\n", s_of(out, "unavailable"));
      shown++;
    }
    json_decref(out);
  }
  if (!shown && !rc) {
    px_cmd_error(c, "%s: no replica%s running", name, index >= 0 ? " with that index" : "");
    rc = 1;
  }
  json_decref(svc);
  return rc;
}

static int run(struct px_cmd *c, int argc, char **argv) {
  const char *op = argc > 0 ? argv[0] : "", *a = argc > 1 ? argv[1] : NULL, *b = argc > 2 ? argv[2] : NULL;
  char *end = NULL;
  if (!strcmp(op, "apply") && a && argc == 2) return apply(c, a);
  if (!strcmp(op, "list") && argc == 1) return list(c);
  if (!strcmp(op, "delete") && a && argc == 2) {
    int rc = one(c, "DELETE", a, "", NULL, NULL);
    if (!rc) printf("service %s: deleting (its replicas drain, then stop)\n", a);
    return rc;
  }
  if (!strcmp(op, "show") && a && argc == 2) {
    json_t *o = NULL;
    if (one(c, "GET", a, "", NULL, &o)) return 1;
    if (c->json) px_cmd_print_json(o);
    else print_show(o);
    json_decref(o);
    return 0;
  }
  long n = b ? strtol(b, &end, 10) : -1;
  if (!strcmp(op, "scale") && a && argc == 3 && !*end && n >= 0) {
    json_t *o = NULL, *body = json_pack("{sI}", "replicas", (json_int_t)n);
    int rc = one(c, "POST", a, "/scale", body, &o);
    json_decref(body);
    if (rc) return 1;
    printf("service %s: %lld replicas wanted\n", a, (long long)n);
    json_decref(o);
    return 0;
  }
  if (!strcmp(op, "logs") && a && argc <= 3 && (!b || (!*end && n >= 0))) return logs(c, a, b ? n : -1);
  px_cmd_error(c, USAGE);
  return 2;
}

int px_verb_service(int argc, char **argv) {
  struct px_cmd c;
  px_cmd_init(&c, "phalanx service", false);
  char **args = calloc((size_t)argc + 1, sizeof *args);
  int n = 0;
  for (int i = 1; args && i < argc; i++) {
    if (!strcmp(argv[i], "--json")) c.json = true;
    else args[n++] = argv[i];
  }
  int rc = args ? run(&c, n, args) : 1;
  free(args);
  px_cmd_fini(&c);
  return rc;
}
