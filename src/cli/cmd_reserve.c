/*
 * cmd_reserve.c - making an advance reservation: `phalanx reserve --name N
 * ...` and Slurm's `scontrol create reservation ReservationName=N ...`. Both
 * fill one struct resv_args and send the same body to POST /v1/reservations
 * (whose shape api_misc.c checks): name, start_s, duration_s or end_s, nodes
 * (the hostlist expanded) or ngpus with a partition, account, maintenance.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/cmd_common.h"

struct resv_args {
  const char *name, *nodes, *accounts, *partition, *start, *duration, *end, *gpus, *users, *flags, *tres;
};

/* Flags=MAINT[,...]: the only flag the server knows; others are refused by
 * name rather than ignored (a reservation that behaves unlike the one asked
 * for is worse than none). */
static int resv_flags(struct px_cmd *c, const char *flags, json_t *body) {
  char *copy = strdup(flags), *save = NULL;
  int rc = copy ? 0 : 1;
  for (char *f = copy ? strtok_r(copy, ",", &save) : NULL; f && !rc; f = strtok_r(NULL, ",", &save)) {
    if (!strcasecmp(f, "MAINT")) json_object_set_new(body, "maintenance", json_true());
    else px_cmd_error(c, "Flags=%s: only MAINT is supported", f), rc = 1;
  }
  free(copy);
  return rc;
}

static int resv_nodes(struct px_cmd *c, const char *list, json_t *body) {
  char **names = NULL;
  size_t n = 0;
  if (px_cli_hostlist_expand(list, &names, &n) || !n) {
    px_cmd_error(c, "Nodes=%s: not a hostlist", list);
    return 1;
  }
  json_t *arr = json_array();
  for (size_t i = 0; i < n; i++) json_array_append_new(arr, json_string(names[i]));
  json_object_set_new(body, "nodes", arr);
  px_cli_strv_free(names, n);
  return 0;
}

static int resv_times(struct px_cmd *c, const struct resv_args *a, json_t *body) {
  int64_t t;
  if (a->start && px_cli_time_parse(a->start, c->now, &t))
    return px_cmd_error(c, "StartTime=%s: not a time (now, now+1hour, 2026-12-24T08:00, ...)", a->start), 1;
  if (a->start) json_object_set_new(body, "start_s", json_integer(t));
  if (a->end && a->duration)
    return px_cmd_error(c, "EndTime and Duration: give one of them"), 1;
  if (a->end && px_cli_time_parse(a->end, c->now, &t))
    return px_cmd_error(c, "EndTime=%s: not a time", a->end), 1;
  if (a->end) json_object_set_new(body, "end_s", json_integer(t));
  if (a->duration && (px_cli_duration_parse(a->duration, &t) || t == PX_CLI_UNLIMITED || t <= 0))
    return px_cmd_error(c, "Duration=%s: a time limit such as 120 (minutes), 4:00:00 or 2-00:00:00", a->duration), 1;
  if (a->duration) json_object_set_new(body, "duration_s", json_integer(t));
  if (!a->end && !a->duration) return px_cmd_error(c, "Duration: missing (or EndTime)"), 1;
  return 0;
}

/* TRES=gres/gpu=N (or gres/gpu:N): the GPU count of a partition's reservation. */
static int resv_tres(struct px_cmd *c, struct resv_args *a) {
  if (!a->tres) return 0;
  if (strncasecmp(a->tres, "gres/gpu", 8) || (a->tres[8] != '=' && a->tres[8] != ':'))
    return px_cmd_error(c, "TRES=%s: only gres/gpu=N is supported", a->tres), 1;
  a->gpus = a->tres + 9;
  return 0;
}

static int resv_body(struct px_cmd *c, struct resv_args *a, json_t *body) {
  if (resv_tres(c, a)) return 1;
  if (!a->name) return px_cmd_error(c, "ReservationName: missing"), 1;
  if (a->users)
    return px_cmd_error(c, "Users=%s: reservations are made for an account (Accounts=)", a->users), 1;
  if (a->accounts && strchr(a->accounts, ','))
    return px_cmd_error(c, "Accounts=%s: one account per reservation", a->accounts), 1;
  char *end = NULL;
  long gpus = a->gpus ? strtol(a->gpus, &end, 10) : 0;
  if (a->gpus && (*end || end == a->gpus || gpus <= 0 || gpus > 1000000))
    return px_cmd_error(c, "GPU count %s: a whole number from 1", a->gpus), 1;
  json_object_set_new(body, "name", json_string(a->name));
  if (a->gpus) json_object_set_new(body, "ngpus", json_integer(gpus));
  if (a->accounts) json_object_set_new(body, "account", json_string(a->accounts));
  if (a->partition) json_object_set_new(body, "partition", json_string(a->partition));
  if (a->nodes && resv_nodes(c, a->nodes, body)) return 1;
  if (a->flags && resv_flags(c, a->flags, body)) return 1;
  return resv_times(c, a, body);
}

/* Sends the reservation; prints Slurm's "Reservation created: NAME" (or the
 * answer with --json). */
static int resv_create(struct px_cmd *c, struct resv_args *a) {
  json_t *body = json_object(), *resp = NULL;
  long status = 0;
  int rc = resv_body(c, a, body);
  if (!rc) rc = px_cmd_call(c, "POST", "/v1/reservations", body, &status, &resp) ? 1 : 0;
  if (!rc && status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "Error creating the reservation: %s", msg);
    rc = 1;
  } else if (!rc && c->json) {
    px_cmd_print_json(resp);
  } else if (!rc) {
    printf("Reservation created: %s\n", json_string_value(json_object_get(resp, "name")));
  }
  json_decref(resp);
  json_decref(body);
  return rc;
}

/* scontrol create reservation KEY=VALUE...: Slurm's keys, case-insensitive. */
int px_scontrol_create_resv(struct px_cmd *c, int argc, char **argv) {
  static const struct { const char *key; size_t off; } keys[] = {
      {"ReservationName", offsetof(struct resv_args, name)},
      {"Reservation", offsetof(struct resv_args, name)},
      {"StartTime", offsetof(struct resv_args, start)},
      {"EndTime", offsetof(struct resv_args, end)},
      {"Duration", offsetof(struct resv_args, duration)},
      {"Nodes", offsetof(struct resv_args, nodes)},
      {"Accounts", offsetof(struct resv_args, accounts)},
      {"Account", offsetof(struct resv_args, accounts)},
      {"PartitionName", offsetof(struct resv_args, partition)},
      {"Partition", offsetof(struct resv_args, partition)},
      {"Users", offsetof(struct resv_args, users)},
      {"Flags", offsetof(struct resv_args, flags)},
      {"TRES", offsetof(struct resv_args, tres)},
  };
  struct resv_args a = {0};
  for (int i = 0; i < argc; i++) {
    const char *eq = strchr(argv[i], '=');
    size_t k = 0, klen = eq ? (size_t)(eq - argv[i]) : 0;
    while (k < sizeof keys / sizeof keys[0] &&
           (strlen(keys[k].key) != klen || strncasecmp(keys[k].key, argv[i], klen)))
      k++;
    if (!eq || k == sizeof keys / sizeof keys[0]) {
      px_cmd_error(c, "create reservation: '%s': expected one of ReservationName=, StartTime=, "
                   "EndTime=, Duration=, Nodes=, Accounts=, PartitionName=, TRES=gres/gpu=N, Flags=MAINT", argv[i]);
      return 1;
    }
    *(const char **)((char *)&a + keys[k].off) = eq + 1;
  }
  return resv_create(c, &a);
}

/* scontrol delete ReservationName=NAME: quiet on success, as Slurm's. */
int px_scontrol_delete_resv(struct px_cmd *c, int argc, char **argv) {
  const char *name = argc == 1 && !strncasecmp(argv[0], "ReservationName=", 16) ? argv[0] + 16 : NULL;
  if (!name || !*name) return px_cmd_error(c, "delete: expected ReservationName=NAME"), 1;
  char path[160];
  snprintf(path, sizeof path, "/v1/reservations/%.100s", name);
  long status = 0;
  json_t *resp = NULL;
  if (px_cmd_call(c, "DELETE", path, NULL, &status, &resp)) return 1;
  int rc = 0;
  if (status / 100 != 2) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "Error deleting the reservation: %s", msg);
    rc = 1;
  }
  json_decref(resp);
  return rc;
}

int px_verb_reserve(int argc, char **argv) {
  static const struct { const char *opt; size_t off; } opts[] = {
      {"--name", offsetof(struct resv_args, name)},
      {"--nodes", offsetof(struct resv_args, nodes)},
      {"--gpus", offsetof(struct resv_args, gpus)},
      {"--start", offsetof(struct resv_args, start)},
      {"--end", offsetof(struct resv_args, end)},
      {"--duration", offsetof(struct resv_args, duration)},
      {"--account", offsetof(struct resv_args, accounts)},
      {"--accounts", offsetof(struct resv_args, accounts)},
      {"--partition", offsetof(struct resv_args, partition)},
      {"--users", offsetof(struct resv_args, users)},
  };
  struct px_cmd c;
  px_cmd_init(&c, "phalanx reserve", false);
  struct resv_args a = {0};
  int rc = 0;
  for (int i = 1; i < argc && !rc; i++) {
    size_t k = 0;
    while (k < sizeof opts / sizeof opts[0] && strcmp(opts[k].opt, argv[i])) k++;
    if (!strcmp(argv[i], "--json")) c.json = true;
    else if (!strcmp(argv[i], "--maintenance")) a.flags = "MAINT";
    else if (k < sizeof opts / sizeof opts[0] && i + 1 < argc)
      *(const char **)((char *)&a + opts[k].off) = argv[++i];
    else rc = 2;
  }
  if (rc) {
    px_cmd_error(&c, "usage: phalanx reserve --name NAME (--nodes LIST | --gpus N --partition P) "
                 "[--start WHEN] (--duration D | --end WHEN) [--account A] [--maintenance] [--json]");
  } else {
    rc = resv_create(&c, &a);
  }
  px_cmd_fini(&c);
  return rc;
}
