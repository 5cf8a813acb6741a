/*
 * cmd_reports.c - `sshare` and `sprio` (and the native `share`): fetch the
 * fair-share tree or pending jobs, filter as Slurm does, print with the
 * formatters or as JSON (`sacct`: cmd_sacct.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cmd_common.h"

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
    if (c.json) px_cmd_print_jobs_json(v, n, "jobs");
    else px_fmt_sprio(stdout, v, n, long_list, noheader);
  }
  px_cli_jobs_free(v, n);
  px_cmd_fini(&c);
  return rc;
}
