/*
 * client.h - the CLI's HTTP client of the server's API (libcurl), over the
 * local Unix socket or TCP.
 *
 * The server is found from PHALANX_SERVER ("unix:/path" or
 * "http://host:port"), else from the SocketPath= / Listen= lines of the
 * config (PHALANX_CONF, default /etc/phalanx/phalanx.conf; scanned, not
 * parsed, so a client command stays cheap to start), else the default local
 * socket. Every call has bounded time-outs: a server that is down or hung
 * gives one clear error, never a hang.
 */
#ifndef PX_CLI_CLIENT_H
#define PX_CLI_CLIENT_H

#include <jansson.h>

#include "util/error.h"

#define PX_CLI_DEFAULT_SOCKET "/run/phalanx/phalanx.sock"
#define PX_CLI_DEFAULT_CONF "/etc/phalanx/phalanx.conf"

struct px_client {
  void *curl;                 /* CURL *, reused across calls (keep-alive) */
  char where[600];            /* "unix:/run/phalanx/phalanx.sock" or "http://h:p", for messages */
  char base[512];             /* URL prefix */
  char socket_path[512];      /* empty for TCP */
  long connect_timeout_ms, timeout_ms;
};

/* Finds the server (no I/O beyond reading the config's two lines). */
int px_client_init(struct px_client *c, struct px_diag *d);
void px_client_fini(struct px_client *c);

/*
 * One request. body: JSON to send or NULL. On an HTTP answer returns 0 with
 * *status and *resp (parsed JSON or NULL when the body is empty; the caller
 * decrefs). When the server cannot be reached returns PX_ECONNECT (or
 * PX_ETIMEOUT) with d->msg "cannot reach the server at WHERE: WHY".
 */
int px_client_call(struct px_client *c, const char *method, const char *path, json_t *body,
                   long *status, json_t **resp, struct px_diag *d);

/* For a non-2xx answer: the server's {"error":{"message":..}} text, or a
 * generic line with the status. */
void px_client_error_text(long status, const json_t *resp, char *buf, size_t n);

#endif
