/*
 * node_check.h - the site's node health check and reboot program on the
 * agent (docs/gpus.md), as slurm.conf names them and the server passes on
 * in its register answer:
 *
 *   HealthCheckProgram=   run (by /bin/sh -c, as root, in a session of its
 *                         own) first right after registration, then every
 *                         HealthCheckInterval= seconds while the node's
 *                         state suits HealthCheckNodeState= (ANY; ALLOC and
 *                         MIXED: some job runs here; IDLE, NONDRAINED_IDLE:
 *                         none does; CYCLE: each node starts at its own
 *                         offset within the interval). Killed after 60 s.
 *                         Its result is reported when it changes: exit 0
 *                         is healthy, anything else fails with the first
 *                         line of its output as the message.
 *   RebootProgram=        run detached when the server's heartbeat answer
 *                         orders the reboot (`scontrol reboot`).
 *
 * The main loop owns the child: its reap() hands every pid it does not know
 * to px_node_check_reaped.
 */
#ifndef PX_AGENT_NODE_CHECK_H
#define PX_AGENT_NODE_CHECK_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PX_NODE_CHECK_TIMEOUT_MS 60000

struct px_node_check {
  char node[64];
  char program[PATH_MAX];   /* "" when none is configured */
  int64_t interval_ms;      /* 0: only the first run */
  unsigned states;          /* PX_HC_* bits of conf.h (0: ANY) */
  pid_t pid;                /* the running check, 0 when none */
  int fd;                   /* its output, -1 when none */
  char out[512];
  size_t len;
  int64_t started_ms, next_ms;
  int last;                 /* last reported: -1 none, 0 failed, 1 healthy */
  char last_msg[256];
};

void px_node_check_init(struct px_node_check *h, const char *node);
/* The server's settings (register answer); the first run is due at now. */
void px_node_check_config(struct px_node_check *h, const char *program, int64_t interval_s, unsigned states,
                          int64_t now_ms);
/* Starts the program when due and the node's state suits (busy: a job
 * runs here); kills one that ran past the timeout. */
void px_node_check_tick(struct px_node_check *h, int64_t now_ms, bool busy);
/* When the next tick is needed (INT64_MAX: never). */
int64_t px_node_check_due(const struct px_node_check *h);
/* A child ended. true when it was the check: then *report is the JSON to
 * post to /v1/agent/health (malloc'd) when the result changed, else NULL. */
bool px_node_check_reaped(struct px_node_check *h, pid_t pid, int status, int64_t now_ms, char **report);
void px_node_check_fini(struct px_node_check *h);

/* RebootProgram=, detached in a session of its own. 0 or PX_EIO. */
int px_node_reboot(const char *program);

#endif
