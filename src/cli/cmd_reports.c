/*
 * cmd_reports.c - `sacct`, `sshare` and `sprio` (and the native `usage`,
 * `share`): fetch accounting records, the fair-share tree or pending jobs,
 * filter as Slurm does, print with the formatters or as JSON.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"

static void print_jobs_json(const struct px_job_info *v, size_t n, const char *key) {
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(arr, px_cli_job_to_json(&v[i]));
  json_t *top = json_pack("{s:o}", key, arr);
  px_cmd_print_json(top);
  json_decref(top);
}

/* Midnight today, sacct's default start when no job ids are given. */
static int64_t today_midnight(int64_t now) {
  time_t t = (time_t)now;
  struct tm tm;
  localtime_r(&t, &tm);
  tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
  tm.tm_isdst = -1;
  return (int64_t)mktime(&tm);
}

struct sacct_args {
  struct px_sacct_opts o;
  struct px_job_filter f;
  int64_t since, until;
  bool all_users;
};

static int sacct_parse(int argc, char **argv, struct sacct_args *a, struct px_cmd *c) {
  static const struct option longopts[] = {
      {"jobs", required_argument, 0, 'j'},     {"user", required_argument, 0, 'u'},
      {"accounts", required_argument, 0, 'A'}, {"starttime", required_argument, 0, 'S'},
      {"endtime", required_argument, 0, 'E'},  {"allocations", no_argument, 0, 'X'},
      {"format", required_argument, 0, 'o'},   {"parsable2", no_argument, 0, 'P'},
      {"parsable", no_argument, 0, 'p'},       {"noheader", no_argument, 0, 'n'},
      {"state", required_argument, 0, 's'},    {"allusers", no_argument, 0, 'a'},
      {"partition", required_argument, 0, 'r'}, {"name", required_argument, 0, 1000},
      {"duplicates", no_argument, 0, 'D'},     {"json", no_argument, 0, 'J'},
      {"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "j:u:A:S:E:Xo:Ppns:ar:Dh", longopts, NULL)) != -1) {
    switch (opt) {
    case 'j': a->f.jobs = optarg; break;
    case 'u': a->f.users = optarg; break;
    case 'A': a->f.accounts = optarg; break;
    case 'S': case 'E':
      if (px_cli_time_parse(optarg, c->now, opt == 'S' ? &a->since : &a->until)) {
        px_cmd_error(c, "Invalid time specification %s", optarg);
        return 1;
      }
      break;
    case 'X': a->o.allocations = true; break;
    case 'o': a->o.format = optarg; break;
    case 'P': a->o.parsable2 = true; break;
    case 'p': a->o.parsable = true; break;
    case 'n': a->o.noheader = true; break;
    case 's': a->f.states = optarg; break;
    case 'a': a->all_users = true; break;
    case 'r': a->f.partitions = optarg; break;
    case 1000: a->f.names = optarg; break;
    case 'D': break;
    case 'J': c->json = true; break;
    case 'h':
      printf("Usage: sacct [-j JOBS] [-u USERS | -a] [-A ACCOUNTS] [-S START] [-E END] [-s STATES]\n"
             "             [-X] [-o FIELDS] [-P | -p] [-n] [--json]\n");
      return -1;
    default: return 1;
    }
  }
  if (!a->f.users && !a->all_users && getuid() != 0) a->f.users = px_cmd_user();
  if (!a->since && !a->f.jobs) a->since = today_midnight(c->now);
  if (!a->f.states) a->f.states = "all";
  return 0;
}

static int by_job_attempt(const void *a, const void *b) {
  const struct px_job_info *x = a, *y = b;
  if (x->job_id != y->job_id) return x->job_id < y->job_id ? -1 : 1;
  return x->restarts < y->restarts ? -1 : x->restarts > y->restarts;
}

/* Accounting keeps one record per attempt of a requeued job; like Slurm's
 * sacct without -D, keep only the latest, where it was recorded. The rows
 * come sorted by job and attempt (the server's order; sorted again to be
 * sure), so the latest is the last of its run: linear in the rows. */
static size_t latest_attempts(struct px_job_info *v, size_t n) {
  qsort(v, n, sizeof *v, by_job_attempt);
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (i + 1 < n && v[i + 1].job_id == v[i].job_id) px_cli_job_fini(&v[i]);
    else v[k++] = v[i];
  }
  return k;
}

/* The accounting row of job id among v[0..n) (sorted, one per job), or NULL. */
static struct px_job_info *find_row(struct px_job_info *v, size_t n, uint64_t id) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (v[mid].job_id < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && v[lo].job_id == id ? &v[lo] : NULL;
}

/* Slurm's sacct lists pending and running jobs too: add the server's live
 * jobs that have no accounting record yet. A job still in the server's table
 * lends its record what accounting rows do not keep: who cancelled it, and
 * its end reason (until it leaves the table, sacct's Reason is then None). */
static int add_live_jobs(struct px_cmd *c, struct px_job_info **v, size_t *n) {
  struct px_job_info *live = NULL;
  size_t nl = 0;
  if (px_cmd_get_jobs(c, "/v1/jobs", &live, &nl)) return 1;
  struct px_job_info *all = realloc(*v, (*n + nl + 1) * sizeof *all);
  if (!all) {
    px_cli_jobs_free(live, nl);
    return 1;
  }
  size_t rows = *n; /* sorted (latest_attempts); live jobs go after them */
  for (size_t i = 0; i < nl; i++) {
    struct px_job_info *row = find_row(all, rows, live[i].job_id);
    if (row && !row->cancelled_by) { /* an accounting row does not name who cancelled: the job does */
      row->cancelled_by = live[i].cancelled_by;
      live[i].cancelled_by = NULL;
    }
    /* nor why a start failed ("ContainerImage: ..."): the live job's, for its own attempt */
    if (row && !strcmp(row->reason, "None") && row->restarts == live[i].restarts)
      snprintf(row->reason, sizeof row->reason, "%s", live[i].reason);
    if (row) px_cli_job_fini(&live[i]);
    else all[(*n)++] = live[i];
  }
  free(live);
  *v = all;
  return 0;
}

/* One value of a comma list that the server can filter on itself ("12",
 * "alice"), else NULL: the rest of the filter is applied here. */
static const char *single(const char *list, bool numeric) {
  if (!list || !*list || strchr(list, ',')) return NULL;
  for (const char *p = list; numeric && *p; p++)
    if (*p < '0' || *p > '9') return NULL;
  for (const char *p = list; *p; p++)
    if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || strchr("._-", *p)))
      return NULL; /* not a plain name: no escaping in the query string */
  return list;
}

/* Accounting's rows in pages (the API answers at most `limit` rows a
 * request), each after the last whole job of the one before: a page that
 * ends inside a job's attempts gives them back and the next starts there. */
#define SACCT_PAGE 50000
static int get_accounting(struct px_cmd *c, const struct sacct_args *a, struct px_job_info **v, size_t *n) {
  char base[256];
  int len = snprintf(base, sizeof base, "/v1/accounting?since=%lld&limit=%d", (long long)a->since, SACCT_PAGE);
  if (a->until) len += snprintf(base + len, sizeof base - (size_t)len, "&until=%lld", (long long)a->until);
  const char *id = single(a->f.jobs, true), *user = single(a->f.users, false);
  if (id) len += snprintf(base + len, sizeof base - (size_t)len, "&id=%s", id);
  if (user) snprintf(base + len, sizeof base - (size_t)len, "&user=%s", user);
  uint64_t after = 0;
  for (;;) {
    char path[320];
    struct px_job_info *page = NULL;
    size_t np = 0;
    if (after) snprintf(path, sizeof path, "%s&after=%llu", base, (unsigned long long)after);
    else snprintf(path, sizeof path, "%s", base);
    if (px_cmd_get_jobs(c, path, &page, &np)) return 1;
    bool more = np == SACCT_PAGE;
    uint64_t last = np ? page[np - 1].job_id : 0;
    while (more && np > 1 && page[np - 1].job_id == last) px_cli_job_fini(&page[--np]);
    struct px_job_info *all = realloc(*v, (*n + np + 1) * sizeof *all);
    if (!all) return px_cli_jobs_free(page, np), 1;
    memcpy(all + *n, page, np * sizeof *page);
    *v = all, *n += np;
    free(page);
    if (!more) return 0;
    after = last - 1;
  }
}

static int sacct_run(struct px_cmd *c, struct sacct_args *a) {
  struct px_job_info *v = NULL;
  size_t n = 0;
  if (get_accounting(c, a, &v, &n)) return px_cli_jobs_free(v, n), 1;
  n = latest_attempts(v, n);
  if (add_live_jobs(c, &v, &n)) return 1;
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    bool keep = px_cmd_job_filter(&v[i], &a->f);
    int64_t end = v[i].end_time ? v[i].end_time : c->now;
    if (a->since && end < a->since) keep = false;
    if (a->until && v[i].submit_time > a->until) keep = false;
    if (keep) v[k++] = v[i];
    else px_cli_job_fini(&v[i]);
  }
  int rc = 0;
  a->o.now = c->now;
  if (c->json) {
    print_jobs_json(v, k, "jobs");
  } else {
    struct px_diag d;
    if (px_fmt_sacct(stdout, v, k, &a->o, &d)) {
      px_cmd_error(c, "%s", d.msg);
      rc = 1;
    }
  }
  px_cli_jobs_free(v, k);
  return rc;
}

int px_cmd_sacct(int argc, char **argv, bool native) {
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx jobs" : "sacct", !native);
  struct sacct_args a = {0};
  int rc = sacct_parse(argc, argv, &a, &c);
  if (!rc) rc = sacct_run(&c, &a);
  px_cmd_fini(&c);
  return rc < 0 ? 0 : rc;
}

/* Keeps the root row, account rows, and user rows that pass the filters. */
static size_t share_filter(struct px_share_info *v, size_t n, const char *users,
                           const char *accounts, bool all) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    bool keep = true;
    if (accounts && v[i].depth > 0 && !px_cmd_list_has(accounts, v[i].account)) keep = false;
    if (v[i].user && !all && !px_cmd_list_has(users ? users : px_cmd_user(), v[i].user)) keep = false;
    if (keep) v[k++] = v[i];
    else px_cli_share_fini(&v[i]);
  }
  return k;
}

int px_cmd_sshare(int argc, char **argv, bool native) {
  static const struct option longopts[] = {
      {"all", no_argument, 0, 'a'},          {"long", no_argument, 0, 'l'},
      {"accounts", required_argument, 0, 'A'}, {"users", required_argument, 0, 'u'},
      {"noheader", no_argument, 0, 'n'},     {"parsable", no_argument, 0, 'p'},
      {"parsable2", no_argument, 0, 'P'},    {"json", no_argument, 0, 'J'},
      {"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx share" : "sshare", !native);
  struct px_sshare_opts o = {0};
  const char *users = NULL, *accounts = NULL;
  bool all = native;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "alA:u:npPh", longopts, NULL)) != -1) {
    switch (opt) {
    case 'a': all = true; break;
    case 'l': o.long_list = true; break;
    case 'A': accounts = optarg; break;
    case 'u': users = optarg; break;
    case 'n': o.noheader = true; break;
    case 'p': o.parsable = true; break;
    case 'P': o.parsable2 = true; break;
    case 'J': c.json = true; break;
    case 'h': printf("Usage: sshare [-a] [-l] [-A ACCOUNTS] [-u USERS] [-n] [-p|-P] [--json]\n"); return 0;
    default: return 1;
    }
  }
  if (users && !strcmp(users, "all")) all = true, users = NULL;
  struct px_share_info *v = NULL;
  size_t n = 0;
  int rc = px_cmd_get_shares(&c, &v, &n);
  if (!rc) {
    n = share_filter(v, n, users, accounts, all && !users);
    if (c.json) {
      json_t *arr = json_array();
      for (size_t i = 0; i < n; i++)
        json_array_append_new(arr, json_pack("{s:s,s:s?,s:i,s:i,s:f,s:f,s:f,s:f,s:f}", "account",
                                             v[i].account, "user", v[i].user, "depth", (int)v[i].depth,
                                             "raw_shares", (int)v[i].raw_shares, "norm_shares",
                                             v[i].norm_shares, "raw_usage", v[i].raw_usage,
                                             "effective_usage", v[i].effective_usage, "fairshare",
                                             v[i].fairshare, "level_fs", v[i].level_fs));
      json_t *top = json_pack("{s:o}", "shares", arr);
      px_cmd_print_json(top);
      json_decref(top);
    } else {
      px_fmt_sshare(stdout, v, n, &o);
    }
  }
  px_cli_shares_free(v, n);
  px_cmd_fini(&c);
  return rc;
}

int px_cmd_sprio(int argc, char **argv, bool native) {
  static const struct option longopts[] = {
      {"long", no_argument, 0, 'l'},         {"jobs", required_argument, 0, 'j'},
      {"user", required_argument, 0, 'u'},   {"partition", required_argument, 0, 'p'},
      {"noheader", no_argument, 0, 'h'},     {"json", no_argument, 0, 'J'},
      {"help", no_argument, 0, 'H'},         {0, 0, 0, 0}};
  struct px_cmd c;
  px_cmd_init(&c, native ? "phalanx prio" : "sprio", !native);
  struct px_job_filter f = {.states = "PENDING"};
  bool long_list = false, noheader = false;
  int opt;
  optind = 1;
  while ((opt = getopt_long(argc, argv, "lj:u:p:h", longopts, NULL)) != -1) {
    switch (opt) {
    case 'l': long_list = true; break;
    case 'j': f.jobs = optarg; break;
    case 'u': f.users = optarg; break;
    case 'p': f.partitions = optarg; break;
    case 'h': noheader = true; break;
    case 'J': c.json = true; break;
    case 'H': printf("Usage: sprio [-l] [-h] [-j JOBS] [-u USERS] [-p PARTITIONS] [--json]\n"); return 0;
    default: return 1;
    }
  }
  struct px_job_info *v = NULL;
  size_t n = 0;
  int rc = px_cmd_get_jobs(&c, "/v1/jobs?state=PENDING", &v, &n); /* filtered again below */
  if (!rc) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      if (px_cmd_job_filter(&v[i], &f)) v[k++] = v[i];
      else px_cli_job_fini(&v[i]);
    }
    n = k;
    if (c.json) print_jobs_json(v, n, "jobs");
    else px_fmt_sprio(stdout, v, n, long_list, noheader);
  }
  px_cli_jobs_free(v, n);
  px_cmd_fini(&c);
  return rc;
}
