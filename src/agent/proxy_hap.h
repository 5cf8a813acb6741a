/*
 * proxy_hap.h - one HAProxy in master-worker mode, run and driven by
 * `phalanx proxy`: started as our child (`haproxy -W -S MASTER -f CFG`),
 * reloaded gracefully through its master CLI ("reload": a new worker takes
 * the listeners, the old one finishes its requests), changed at run time
 * through the worker's admin socket, and its statistics read there.
 */
#ifndef PX_AGENT_PROXY_HAP_H
#define PX_AGENT_PROXY_HAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct px_hap {
  char bin[256];                /* the haproxy program */
  char dir[256];                /* haproxy.cfg, master.sock, admin.sock */
  char cfg[300], master[300], admin[300];
  pid_t pid;                    /* the master */
  long worker;                  /* the serving worker's pid (show info) */
};

/* Starts argv[0] (searched on PATH) with stdin /dev/null and stdout and
 * stderr appended to log, signals unblocked, in a process group of its own
 * when own_group. 0 with *pid, or an errno value. (Also `phalanx dev`'s
 * start of the proxy.) */
int px_spawn_logged(char *const *argv, const char *log, bool own_group, pid_t *pid);

void px_hap_init(struct px_hap *h, const char *bin, const char *dir);
/* Writes cfg_text and starts HAProxy; 0 once its worker answers (up to 10 s). */
int px_hap_start(struct px_hap *h, const char *cfg_text, char *why, size_t size);
/* Writes cfg_text and reloads; 0 once a new worker answers. */
int px_hap_reload(struct px_hap *h, const char *cfg_text, char *why, size_t size);
/* Sends commands (";"-separated) to the admin socket; *resp malloc'd (may be NULL). */
int px_hap_cmd(const char *sock, const char *cmd, char **resp);
/* True while the master runs (reaps it when it ended). */
bool px_hap_alive(struct px_hap *h);
void px_hap_stop(struct px_hap *h);

/* One backend's load from "show stat": sessions now and requests so far. */
struct px_hap_load {
  char backend[72];
  uint64_t scur, req_tot;
};
/* Parses "show stat" CSV into the BACKEND rows whose names start with prefix. */
uint32_t px_hap_stat_parse(const char *csv, const char *prefix, struct px_hap_load *out, uint32_t cap);

#endif
