/*
 * cmd_sacctmgr_event.c - `sacctmgr show event [Start=T] [End=T] [Nodes=LIST]`:
 * the nodes' down and drain periods from accounting (GET
 * /v1/accounting/events; the server writes them, server/nodes/node_acct.c),
 * in Slurm 22.05's table (checked on the real one): Cluster, NodeName,
 * TimeStart, TimeEnd ("Unknown" while open), State, Reason, User ("name(uid)").
 * An event is listed when it overlaps [Start, End): still open or ended at
 * or after Start, begun before End. Start defaults, as Slurm's, to midnight
 * starting the previous day; End to none. Nodes= is a hostlist. With -n, -p,
 * -P as the other tables; --json prints the server's rows. A time that does
 * not parse is refused with Slurm's message (Slurm then lists anyway; here
 * nothing is listed and the exit status is 1).
 */
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cmd_common.h"
#include "util/hostlist.h"

struct event_conds {
  int64_t start, end;
  struct px_strvec nodes; /* empty: any */
  bool any_node;
};

/* Midnight starting the day before now, local time (Slurm's default Start). */
static int64_t yesterday_midnight(int64_t now) {
  time_t t = (time_t)(now - 86400);
  struct tm tm;
  if (!localtime_r(&t, &tm)) return 0;
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return (int64_t)mktime(&tm);
}

static bool key_is(const char *w, size_t n, const char *const *names) {
  for (; *names; names++)
    if (strlen(*names) == n && !strncasecmp(w, *names, n)) return true;
  return false;
}

/* One COND=VALUE word; 0, or 1 after saying why. */
static int cond(struct px_cmd *c, const char *w, struct event_conds *ec) {
  static const char *const starts[] = {"start", "starttime", NULL}, *const ends[] = {"end", "endtime", NULL};
  static const char *const nodes[] = {"nodes", "node", "nodelist", "nodename", NULL};
  const char *eq = strchr(w, '=');
  size_t n = eq ? (size_t)(eq - w) : 0;
  if (eq && (key_is(w, n, starts) || key_is(w, n, ends))) {
    int64_t *dst = key_is(w, n, starts) ? &ec->start : &ec->end;
    if (!px_cli_time_parse(eq + 1, c->now, dst)) return 0;
    fprintf(stderr, "Invalid time specification (pos=0): %s\n", eq + 1);
    return 1;
  }
  if (eq && key_is(w, n, nodes)) {
    struct px_diag d;
    px_diag_clear(&d);
    if (!px_hostlist_expand(eq + 1, 0, &ec->nodes, &d)) return ec->any_node = false, 0;
    fprintf(stderr, " Bad Nodes= list %s: %s\n", eq + 1, d.msg);
    return 1;
  }
  fprintf(stderr, " Unknown condition: %s\n", w);
  return 1;
}

static bool wanted(const struct event_conds *ec, const char *node) {
  if (ec->any_node) return true;
  for (size_t i = 0; i < ec->nodes.len; i++)
    if (!strcmp(ec->nodes.v[i], node)) return true;
  return false;
}

/* "name(uid)" as Slurm prints the event's user; the name alone when this
 * host does not know it. */
static void user_text(char *buf, size_t n, const char *user) {
  struct passwd pw, *res = NULL;
  char pwbuf[1024];
  if (*user && getpwnam_r(user, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
    snprintf(buf, n, "%s(%u)", user, (unsigned)pw.pw_uid);
  else
    snprintf(buf, n, "%s", user);
}

/* One cell: right-aligned in width (left for NodeName), cut with '+' when
 * longer, as sacctmgr; or the parsable forms. */
static void cell(FILE *f, const struct px_sacctmgr_opts *o, const char *v, int width, bool left, bool last) {
  if (o->parsable || o->parsable2) {
    fputs(v, f);
    if (!last || o->parsable) fputc('|', f);
    return;
  }
  if ((int)strlen(v) > width) fprintf(f, "%.*s+", width - 1, v);
  else fprintf(f, left ? "%-*s" : "%*s", width, v);
  fputc(' ', f);
}

static const struct {
  const char *name;
  int width;
  bool left;
} cols[] = {{"Cluster", 10, false}, {"NodeName", 15, true}, {"TimeStart", 19, false}, {"TimeEnd", 19, false},
            {"State", 6, false},    {"Reason", 30, false},  {"User", 10, false}};
#define NCOLS (sizeof cols / sizeof cols[0])

static void header(FILE *f, const struct px_sacctmgr_opts *o) {
  if (o->noheader) return;
  for (size_t k = 0; k < NCOLS; k++) cell(f, o, cols[k].name, cols[k].width, cols[k].left, k + 1 == NCOLS);
  fputc('\n', f);
  if (o->parsable || o->parsable2) return;
  for (size_t k = 0; k < NCOLS; k++) {
    for (int i = 0; i < cols[k].width; i++) fputc('-', f);
    fputc(' ', f);
  }
  fputc('\n', f);
}

static const char *str(const json_t *row, const char *key) {
  const char *v = json_string_value(json_object_get(row, key));
  return v ? v : "";
}

static void print_events(FILE *f, const json_t *doc, const struct event_conds *ec, const struct px_sacctmgr_opts *o) {
  const char *cluster = str(doc, "cluster");
  header(f, o);
  size_t i;
  json_t *row;
  json_array_foreach(json_object_get(doc, "events"), i, row) {
    if (!wanted(ec, str(row, "node"))) continue;
    char start[32], end[32], user[96];
    px_cli_fmt_iso(start, sizeof start, json_integer_value(json_object_get(row, "start")), "Unknown");
    px_cli_fmt_iso(end, sizeof end, json_integer_value(json_object_get(row, "end")), "Unknown");
    user_text(user, sizeof user, str(row, "user"));
    const char *vals[NCOLS] = {cluster, str(row, "node"), start, end, str(row, "state"), str(row, "reason"), user};
    for (size_t k = 0; k < NCOLS; k++) cell(f, o, vals[k], cols[k].width, cols[k].left, k + 1 == NCOLS);
    fputc('\n', f);
  }
}

/* The rows of the server's answer for --json (Nodes= applied). */
static void only_wanted(json_t *doc, const struct event_conds *ec) {
  json_t *rows = json_object_get(doc, "events");
  for (size_t i = json_array_size(rows); i-- > 0;)
    if (!wanted(ec, str(json_array_get(rows, i), "node"))) json_array_remove(rows, i);
}

int px_sacctmgr_show_event(struct px_cmd *c, int argc, char **argv, int first, const struct px_sacctmgr_opts *o) {
  struct event_conds ec = {.start = yesterday_midnight(c->now), .any_node = true};
  int rc = 0;
  for (int i = first; i < argc && !rc; i++)
    if (strcasecmp(argv[i], "where")) rc = cond(c, argv[i], &ec);
  char path[128];
  int len = snprintf(path, sizeof path, "/v1/accounting/events?start=%lld", (long long)ec.start);
  if (ec.end) snprintf(path + len, sizeof path - (size_t)len, "&end=%lld", (long long)ec.end);
  long status = 0;
  json_t *doc = NULL;
  if (!rc) rc = px_cmd_call(c, "GET", path, NULL, &status, &doc) ? 1 : 0;
  if (!rc && status != 200) {
    const char *msg = json_string_value(json_object_get(json_object_get(doc, "error"), "message"));
    px_cmd_error(c, "%s", msg ? msg : "the server refused the query");
    rc = 1;
  }
  if (!rc && c->json) {
    only_wanted(doc, &ec);
    px_cmd_print_json(json_object_get(doc, "events"));
  } else if (!rc) {
    print_events(stdout, doc, &ec, o);
  }
  json_decref(doc);
  px_strvec_free_all(&ec.nodes);
  return rc;
}
