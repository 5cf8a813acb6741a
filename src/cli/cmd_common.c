/*
 * cmd_common.c - helpers every CLI command shares; see cmd_common.h.
 */
#include "cli/cmd_common.h"

#include <ctype.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

void px_cmd_init(struct px_cmd *c, const char *prog, bool slurm) {
  memset(c, 0, sizeof *c);
  c->prog = prog;
  c->slurm = slurm;
  c->now = (int64_t)time(NULL);
}

void px_cmd_fini(struct px_cmd *c) {
  if (c->connected) px_client_fini(&c->client);
  c->connected = false;
}

void px_cmd_error(const struct px_cmd *c, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fprintf(stderr, "%s: %s%s\n", c->prog, c->slurm ? "error: " : "", msg);
}

int px_cmd_option_error(const struct px_cmd *c, const struct px_cli_extra *x, const char *msg) {
  const char *kind = !c->slurm ? "" : x->fatal ? "fatal: " : "error: ";
  for (bool first = true; msg; first = false) { /* one line each; Slurm's some are two */
    const char *nl = strchr(msg, '\n');
    int len = nl ? (int)(nl - msg) : (int)strlen(msg);
    if (first && x->bare_first && c->slurm) fprintf(stderr, "%.*s\n", len, msg);
    else fprintf(stderr, "%s: %s%.*s\n", c->prog, kind, len, msg);
    msg = nl ? nl + 1 : NULL;
  }
  return x->exit_status ? x->exit_status : 1;
}

/* The client is made on the first call; a failure is the user's one line. */
static int connect_once(struct px_cmd *c) {
  struct px_diag d;
  px_diag_clear(&d);
  if (c->connected) return 0;
  if (px_client_init(&c->client, &d)) {
    px_cmd_error(c, "%s", d.msg);
    return 1;
  }
  c->connected = true;
  return 0;
}

int px_cmd_call(struct px_cmd *c, const char *method, const char *path, json_t *body,
                long *status, json_t **resp) {
  struct px_diag d;
  px_diag_clear(&d);
  if (connect_once(c)) return 1;
  if (px_client_call(&c->client, method, path, body, status, resp, &d)) {
    /* The one line a user sees when the server is down; not Slurm's voice,
     * since no Slurm message says where we looked. */
    fprintf(stderr, "phalanx: %s\n", d.msg);
    return 1;
  }
  return 0;
}

/* GET and check for 2xx; prints the server's message otherwise. */
static int get_ok(struct px_cmd *c, const char *path, json_t **resp) {
  long status = 0;
  if (px_cmd_call(c, "GET", path, NULL, &status, resp)) return 1;
  if (status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, *resp, msg, sizeof msg);
    px_cmd_error(c, "%s", msg);
    json_decref(*resp);
    *resp = NULL;
    return 1;
  }
  return 0;
}

#define GET_LIST(fn, T, key, dec)                                                              \
  int fn(struct px_cmd *c, const char *path, T **v, size_t *n) {                               \
    json_t *resp;                                                                              \
    if (get_ok(c, path, &resp)) return 1;                                                      \
    const json_t *arr = json_is_array(resp) ? resp : json_object_get(resp, key);               \
    int rc = dec(arr, v, n);                                                                   \
    json_decref(resp);                                                                         \
    if (rc) px_cmd_error(c, "the server's reply to %s could not be read (%s)", path,           \
                         px_strerror(rc));                                                     \
    return rc ? 1 : 0;                                                                         \
  }

static GET_LIST(get_nodes, struct px_node_info, "nodes", px_cli_nodes_from_json)
static GET_LIST(get_parts, struct px_partition_info, "partitions", px_cli_partitions_from_json)
static GET_LIST(get_shares, struct px_share_info, "shares", px_cli_shares_from_json)

/* Job lists can be long (squeue over 10,000 jobs): the reply's text goes
 * straight into the structs (cli_jobscan.c), with no jansson tree between. */
int px_cmd_get_text(struct px_cmd *c, const char *path, char **text, size_t *len) {
  struct px_diag d;
  px_diag_clear(&d);
  *text = NULL, *len = 0;
  if (connect_once(c)) return 1;
  struct px_http_reply r;
  if (px_client_request(&c->client, "GET", path, NULL, 0, &r, &d)) {
    fprintf(stderr, "phalanx: %s\n", d.msg);
    return 1;
  }
  if (r.status / 100 != 2) {
    char msg[512];
    json_t *err = r.len ? json_loadb(r.body, r.len, 0, NULL) : NULL;
    px_client_error_text(r.status, err, msg, sizeof msg);
    json_decref(err);
    px_cmd_error(c, "%s", msg);
    free(r.body);
    return 1;
  }
  *text = r.body, *len = r.len;
  return 0;
}

int px_cmd_jobs_from_text(struct px_cmd *c, const char *path, const char *text, size_t len,
                          struct px_job_info **v, size_t *n) {
  int rc = px_cli_jobs_from_text(text, len, v, n);
  if (rc) px_cmd_error(c, "the server's reply to %s could not be read (%s)", path, px_strerror(rc));
  return rc ? 1 : 0;
}

int px_cmd_get_jobs(struct px_cmd *c, const char *path, struct px_job_info **v, size_t *n) {
  char *text;
  size_t len;
  if (px_cmd_get_text(c, path, &text, &len)) return 1;
  int rc = px_cmd_jobs_from_text(c, path, text, len, v, n);
  free(text);
  return rc;
}
int px_cmd_get_nodes(struct px_cmd *c, struct px_node_info **v, size_t *n) {
  return get_nodes(c, "/v1/nodes", v, n);
}
int px_cmd_get_partitions(struct px_cmd *c, struct px_partition_info **v, size_t *n) {
  return get_parts(c, "/v1/partitions", v, n);
}
int px_cmd_get_shares(struct px_cmd *c, struct px_share_info **v, size_t *n) {
  return get_shares(c, "/v1/shares", v, n);
}

void px_cmd_print_json(const json_t *v) {
  char *s = json_dumps(v, JSON_INDENT(2) | JSON_SORT_KEYS);
  if (s) printf("%s\n", s);
  free(s);
}

void px_cmd_print_jobs_json(const struct px_job_info *v, size_t n, const char *key) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(arr, px_cli_job_to_json(&v[i]));
  json_t *top = json_pack("{s:o}", key, arr);
  px_cmd_print_json(top);
  json_decref(top);
}

int px_cmd_term_width(void) {
  struct winsize ws;
  if (!isatty(STDOUT_FILENO) || ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || !ws.ws_col) return 0;
  return ws.ws_col;
}

/* The server's name for the caller (GET /v1/whoami, on a connection of its
 * own), for when this host's passwd lookup knows none: the front end built
 * against musl reads /etc/passwd (and nscd) but not sssd's or LDAP's modules,
 * while the server resolves names through the system's NSS. */
static bool user_from_server(char *name, size_t n) {
  struct px_client cl;
  struct px_diag d;
  long status = 0;
  json_t *resp = NULL;
  bool ok = false;
  px_diag_clear(&d);
  if (!px_client_init(&cl, &d) && !px_client_call(&cl, "GET", "/v1/whoami", NULL, &status, &resp, &d) &&
      status == 200) {
    const char *u = json_string_value(json_object_get(resp, "user"));
    if (u && *u && strlen(u) < n) snprintf(name, n, "%s", u), ok = true;
  }
  json_decref(resp);
  px_client_fini(&cl);
  return ok;
}

const char *px_cmd_user(void) {
  static char name[64];
  if (name[0]) return name;
  struct passwd pw, *res = NULL;
  char buf[4096];
  if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res)
    snprintf(name, sizeof name, "%s", pw.pw_name);
  else if (!user_from_server(name, sizeof name))
    snprintf(name, sizeof name, "%u", (unsigned)getuid());
  return name;
}

const char *px_cmd_bad_state(const char *list, char *buf, size_t n) {
  char *save = NULL, name[32], up[32];
  snprintf(buf, n, "%s", list ? list : "");
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    size_t k = 0;
    for (; t[k] && k + 1 < sizeof up; k++) up[k] = (char)toupper((unsigned char)t[k]);
    up[k] = '\0';
    if (strcasecmp(t, "all") && !px_cli_state_normalise(t, name, sizeof name) &&
        !px_cmd_list_has(PX_SLURM_JOB_STATES, up))
      return t;
  }
  return NULL;
}

const char *px_cmd_bad_job_id(const char *list, bool steps, char *buf, size_t n) {
  char *save = NULL;
  snprintf(buf, n, "%s", list ? list : "");
  for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    char *e;
    if (!isdigit((unsigned char)*t)) return t;
    strtoull(t, &e, 10);
    if (*e == '_') { /* an array task, or a bracketed range of them */
      if (isdigit((unsigned char)e[1])) strtoul(e + 1, &e, 10);
      else if (e[1] == '[' && strchr(e, ']')) e = strchr(e, ']') + 1;
      else return t;
    }
    if (steps && *e == '.' && e[1]) e += strlen(e);
    if (*e) return t;
  }
  return NULL;
}

bool px_cmd_list_has(const char *list, const char *item) {
  size_t len = strlen(item);
  for (const char *p = list; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == len && !strncmp(p, item, len)) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

int px_cmd_parse_since(const struct px_cmd *c, const char *since, int64_t *t) {
  size_t digits = strspn(since, "0123456789");
  bool span = digits > 0 && digits < 9 && strchr("dhm", since[digits]) && since[digits] && !since[digits + 1];
  if (span) { /* 30d, 12h, 90m: a span back from now */
    int64_t n = strtoll(since, NULL, 10);
    *t = c->now - n * (since[digits] == 'd' ? 86400 : since[digits] == 'h' ? 3600 : 60);
    return 0;
  }
  if (!px_cli_time_parse(since, c->now, t)) return 0;
  px_cmd_error(c, "--since %s: not a time (try 30d, 12h, 2026-11-01 or now-7days)", since);
  return 2;
}
