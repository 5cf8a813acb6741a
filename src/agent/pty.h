/*
 * pty.h - interactive work on the node (docs/interactive.md): terminal
 * steps (srun --pty, phalanx exec) and web sessions' hosts. A step order with a relay session (pty_session) is
 * run by the pty host (pty_host.c) instead of its command directly: the
 * agent rewrites the order's command to `<its own binary> pty-host -- CMD`
 * and adds where the server is (pty_order.c); the supervisor gives the
 * task the PHALANX_PTY_* variables the pty host reads.
 */
#ifndef PX_AGENT_PTY_H
#define PX_AGENT_PTY_H

#include <stddef.h>

#include "proto/agent_msg.h"

/* The order as the supervisor should read it (malloc'd JSON, NULL on
 * ENOMEM): the command behind the pty host, the agent's server and CA. */
char *px_pty_order_encode(const struct px_step_order *o, const char *server, const char *ca_file);
/* Appends the PHALANX_PTY_* variables of o to env[*n..cap) ("K=V",
 * malloc'd). 0 or PX_ENOMEM / PX_ERANGE. */
int px_pty_step_env(const struct px_step_order *o, char **env, size_t *n, size_t cap);

/* `phalanxd pty-host -- CMD ARGS...` (pty_host.c). */
int px_cmd_pty_host(int argc, char **argv);
/* `phalanxd session-host --port P --idle-s N -- CMD ARGS...`: a web
 * session's task (session_host.c). */
int px_cmd_session_host(int argc, char **argv);

#endif
