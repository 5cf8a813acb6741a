/*
 * emu_int.h - the emulating agent's state, shared by emulate.c (the loop
 * and each node's protocol) and emu_jobs.c (jobs: simulated ends, real
 * child processes, the state log).
 */
#ifndef PX_AGENT_EMU_INT_H
#define PX_AGENT_EMU_INT_H

#include <stdio.h>
#include <sys/types.h>

#include "agent/emu_net.h"
#include "agent/emulate.h"
#include "proto/agent_msg.h"
#include "util/map.h"

struct ejob {
  uint64_t job_id;
  uint32_t restart;
  uint32_t node;
  int64_t start_wall;     /* Unix seconds */
  int64_t end_wall_ms;    /* sim: when it ends (Unix ms) */
  pid_t pid;              /* real: its process (0 for sim) */
  bool foreign;           /* real, found in the log after a restart: not our child */
  bool in_heap, ended, released;
  char stop_reason[32];   /* the last stop order's reason */
  struct px_task_report end;
};

struct enode {
  char name[64];
  char *auth;             /* "Authorization: Bearer ..." or NULL */
  bool registered, reg_busy, hb_busy, rep_busy, polling, silent, dirty;
  int64_t next_hb_ms, reg_at_ms, poll_at_ms, rep_at_ms;
  int backoff_ms;
  uint64_t seq;
  /* queued reports, oldest first; the first nsent are in flight */
  char **rq;
  struct ejob **rq_job;   /* the job whose end each one reports, or NULL */
  uint32_t nrq, caprq, nsent;
  struct ejob **jobs;     /* launched here, end not yet acknowledged */
  uint32_t njobs, capjobs;
};

struct emu {
  const struct px_emu_opts *o;
  struct enode *nodes;
  uint32_t nnodes;
  struct px_emnet *net;
  int64_t since;              /* of the state directory (since.h) */
  int epfd, sfd;
  int heartbeat_s;
  struct ejob **heap;     /* sim jobs by end time */
  uint32_t nheap, capheap;
  struct px_map pids;     /* real: pid -> job */
  struct px_map done;     /* px_emu_done_key -> 1: ends the server acknowledged */
  uint32_t *dirty;        /* nodes with reports to send */
  uint32_t ndirty;
  FILE *log;
  int gfd;                /* STATE_DIR/agent.sock: injected GPU faults, -1 when none */
  uint64_t launched, ended; /* counters, for the log line at exit */
};

static inline uint64_t px_emu_done_key(uint64_t job_id, uint32_t restart) {
  return job_id << 16 | (restart & 0xffff);
}

int64_t px_emu_mono_ms(void);
int64_t px_emu_wall_ms(void);

/* emu_jobs.c */
void px_emu_launch(struct emu *e, uint32_t node, const struct px_launch *l);
void px_emu_signal(struct emu *e, uint32_t node, const struct px_signal_order *s);
/* Ends of simulated jobs due by now; returns the next due time (Unix ms) or INT64_MAX. */
int64_t px_emu_sim_due(struct emu *e, int64_t now_wall_ms);
void px_emu_reap(struct emu *e);
void px_emu_check_foreign(struct emu *e);
/* The server acknowledged the end of j. */
void px_emu_acked(struct emu *e, struct ejob *j);
int px_emu_log_open(struct emu *e);
void px_emu_stop_jobs(struct emu *e);
void px_emu_jobs_free(struct emu *e);
/* Replays text as a state log into a throwaway 4-node emulator (the fuzz
 * target's entry: the log is a file a crash may leave half written). */
void px_emu_replay_text(const char *text, size_t len);

/* emulate.c */
void px_emu_queue_report(struct emu *e, uint32_t node, char *json, struct ejob *j);

#endif
