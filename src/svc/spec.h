/*
 * spec.h - a service's specification: what `phalanx service apply FILE` and
 * POST /v1/services carry (docs/services.md has the schema with an example).
 *
 * One parser (spec.c, libyaml) reads the YAML file and, since YAML's flow
 * style is a superset of JSON, the API's JSON body too. It is strict: an
 * unknown field, a value of the wrong type or out of range, two ports of one
 * name, a health check on a port not listed are refused, and the message
 * names the line and the field ("line 7: replicas: must be 0 or more, not
 * -1"). Checks that need the cluster's configuration (a partition, GPUs per
 * replica over what its nodes have) are px_svc_spec_check_conf.
 *
 * The journal keeps a spec as its canonical JSON (px_svc_spec_json), which
 * the same parser reads back (PX_SVC_SPEC_INTERNAL also accepts the owner's
 * identity, which the server fills in and a client may not set).
 */
#ifndef PX_SVC_SPEC_H
#define PX_SVC_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"
#include "util/error.h"

#define PX_SVC_NAME_MAX 40    /* a replica's job name is NAME-r<index> */
#define PX_SVC_MAX_PORTS 8
#define PX_SVC_MAX_REPLICAS 1000

enum px_svc_health_type { PX_SVC_HEALTH_NONE, PX_SVC_HEALTH_HTTP, PX_SVC_HEALTH_TCP, PX_SVC_HEALTH_COMMAND };

struct px_svc_health {
  enum px_svc_health_type type;
  char port[32];              /* http/tcp: a name from ports */
  char path[256];             /* http */
  char **command;             /* command: NULL-terminated argv */
  uint32_t interval_s, timeout_s, failure_threshold, startup_grace_s;
};

struct px_svc_spec {
  char name[PX_SVC_NAME_MAX + 1];
  char account[64], partition[64], qos[64];  /* "" = the default */
  char user[64];                             /* the owner: filled by the server */
  uint32_t uid, gid;
  uint32_t replicas;                         /* wanted (fixed, or the autoscaler's start) */
  bool autoscale;
  uint32_t min, max, target_in_flight;       /* autoscale */
  int64_t scale_up_window_s, scale_down_window_s;
  uint32_t gpus, cpus;                       /* per replica */
  uint64_t mem_mib;                          /* per replica, 0 = the partition's default */
  char constraint[256];
  char **argv;                               /* command, or NULL with script */
  char *script;
  char **env;                                /* "K=V", NULL-terminated, or NULL */
  char *workdir;
  char ports[PX_SVC_MAX_PORTS][32];
  uint32_t nports;
  struct px_svc_health health;
  int64_t backoff_s, max_backoff_s;          /* restart */
  bool spread;                               /* at most one replica per node */
  uint32_t max_surge, max_unavailable;       /* update */
  int64_t progress_deadline_s;               /* a new generation not ready by then rolls back */
  int64_t drain_s;                           /* out of the endpoints this long before the stop */
  /* where fields were (1-based lines) for the checks against the configuration */
  int line_partition, line_gpus, line_account, line_name;
};

#define PX_SVC_SPEC_INTERNAL 1u /* accept user/uid/gid (the journal's copy) */

/* Parses text[0..len) (YAML or JSON) into out (initialised here). 0, or
 * PX_EINVAL / PX_EPARSE / PX_ERANGE with d naming the line and the field
 * (out is then empty). */
int px_svc_spec_parse(const char *text, size_t len, unsigned flags, struct px_svc_spec *out,
                      struct px_diag *d);
/* The partition exists (default one when not named), its nodes have the
 * GPUs, CPUs and memory one replica asks for. 0 or PX_EINVAL with d. */
int px_svc_spec_check_conf(const struct px_svc_spec *s, const struct px_conf *conf,
                           struct px_diag *d);
/* Canonical JSON (malloc'd), which px_svc_spec_parse reads back equal. */
char *px_svc_spec_json(const struct px_svc_spec *s);
/* Do a and b run the same replicas (everything but the count, autoscaling,
 * update strategy and drain)? A change of it is a new generation. */
bool px_svc_spec_same_template(const struct px_svc_spec *a, const struct px_svc_spec *b);
void px_svc_spec_init(struct px_svc_spec *s);
void px_svc_spec_fini(struct px_svc_spec *s);
int px_svc_spec_copy(struct px_svc_spec *dst, const struct px_svc_spec *src);
const char *px_svc_health_type_name(enum px_svc_health_type t);

#endif
