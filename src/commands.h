/*
 * commands.h - the entry point of every command the `phalanx` binary answers
 * to. main.c dispatches on argv[0] (Slurm's names) or on the first word.
 * Each returns the process exit status. argv[0] is the command's own name
 * ("server", "sbatch", ...).
 */
#ifndef PX_COMMANDS_H
#define PX_COMMANDS_H

int px_cmd_server(int argc, char **argv);   /* server/ */
int px_cmd_token(int argc, char **argv);
int px_cmd_server_status(int argc, char **argv); /* server/ : `phalanx server status` (cmd_status.c) */    /* server/ : `phalanx server token` mints a JWT offline */
int px_cmd_agent(int argc, char **argv);    /* agent/ */
int px_cmd_dev(int argc, char **argv);      /* agent/ : server + N emulated agents */
int px_cmd_proxy(int argc, char **argv);    /* agent/ : HAProxy driven by the endpoints API */
int px_cmd_pty_host(int argc, char **argv); /* agent/ : a terminal step's task (agent/pty.h) */
int px_cmd_session_host(int argc, char **argv); /* agent/ : a web session's task (agent/pty.h) */
int px_cmd_sim(int argc, char **argv);      /* sim/ */
int px_cmd_config(int argc, char **argv);   /* conf/ : `phalanx config check FILE...` */

/* cli/ : the lean front end (`phalanx`, Slurm's names) runs the daemons and
 * tools above by exec'ing PX_DAEMON_BINARY from its own directory, with
 * argv = {"server", ...}. Returns only on failure (after one line on stderr). */
#define PX_DAEMON_BINARY "phalanxd"
int px_exec_daemon(int argc, char **argv);
/* cli/ : the same for a client command whose server is reached over TLS
 * (the front end has no TLS library; phalanxd has libcurl): argv whole, as
 * main() got it, so that Slurm's names still pick their command. */
int px_exec_full(char **argv);
/* cli/ : whether this command's server address is https:// (client.h). */
int px_cli_wants_tls(void);

/* cli/ : the native verbs (submit, queue, cancel, ...). Returns -1 when the verb is unknown. */
int px_cli_main(int argc, char **argv);
/* cli/ : Slurm's commands by name (sbatch, squeue, ...). Returns -1 when the name is unknown. */
int px_slurm_main(int argc, char **argv);
/* cli/ : one line per verb, for `phalanx help` */
void px_cli_usage(void);

#endif
