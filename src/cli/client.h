/*
 * client.h - the CLI's HTTP client of the server's API, over the local Unix
 * socket or plain TCP.
 *
 * It is a small hand-written HTTP/1.1 client (client.c, http1.c), not
 * libcurl, for the cost of starting a process: every `sbatch` or `squeue` is
 * one short process, and loading libcurl with its TLS, Kerberos and LDAP
 * dependencies cost more than the rest of the command (issue 8,
 * cli_sbatch_per_s). A server reached over TLS (https://) is the exception:
 * the lean front end hands the whole command to phalanxd (main.c), whose
 * client makes that request with libcurl (client_tls.c): a handshake costs
 * more than loading the library, and the local socket stays the fast path.
 *
 * The server is found from PHALANX_SERVER ("unix:/path", "/path",
 * "http://host:port" or "https://host:port"), else from the SocketPath= /
 * Listen= lines of the config (PHALANX_CONF, default
 * /etc/phalanx/phalanx.conf; scanned, not parsed, so a client command stays
 * cheap to start; Listen= is https:// when the config names TLSCertFile= or
 * TLSCAFile=), else the default local socket. An https server's certificate
 * is verified against PHALANX_CA_FILE, else the config's TLSCAFile=, else
 * the system's CAs. With several controllers (high availability) each
 * address is tried in turn, and a standby's answer names the leader. Every call has bounded time-outs (3 s to connect, PHALANX_TIMEOUT
 * or 30 s for the whole exchange): a server that is down or hung gives one
 * clear error, never a hang. One connection is kept alive across a
 * command's requests.
 */
#ifndef PX_CLI_CLIENT_H
#define PX_CLI_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define PX_CLI_DEFAULT_SOCKET "/run/phalanx/phalanx.sock"
#define PX_CLI_DEFAULT_CONF "/etc/phalanx/phalanx.conf"

/*
 * The HTTP/1.1 framing (http1.c), exposed for the unit tests.
 *
 * px_http_head parses a response head in buf[0..n): returns its length
 * (through the blank line) when complete, 0 when more bytes are needed, -1
 * when it is not HTTP.
 */
struct px_http_head {
  long status;
  long long content_length; /* -1: none given */
  bool chunked, close;      /* Transfer-Encoding: chunked; the server closes after */
  char leader[128];         /* X-Phalanx-Leader: a standby names the leader ("" none) */
  bool ha;                  /* X-Phalanx-Term: a controller of several */
};


struct px_client {
  int fd;                     /* the kept-alive connection, -1 when none */
  unsigned nreq;              /* requests answered on fd (a reused fd may be stale) */
  char where[600];            /* "unix:/run/phalanx/phalanx.sock" or "http://h:p", for messages */
  char socket_path[512];      /* empty for TCP */
  char host[256], port[16];   /* TCP */
  bool tls;                   /* https:// */
  char ca_file[512];          /* the CA of the server's certificate; "" = the system's */
  void *curl;                 /* https: libcurl's handle, kept alive (client_tls.c) */
  long connect_timeout_ms, timeout_ms;
  /* Every controller (issue 16): PHALANX_SERVER "URL1,URL2" or the config's
   * SlurmctldHost= lines. A request that could not be sent (no connection)
   * or that a standby refused (503 naming the leader) is sent to the leader
   * it named or the next address, until the request's deadline; so is a GET
   * that a controller died under (it changes nothing). */
  char addrs[8][128];
  int naddrs, cur;
  /* The last https answer's: the head's HA headers, and whether the request
   * certainly never left (no connection), for the list above. */
  struct px_http_head tls_head;
  bool tls_unsent;
};

/* A raw answer: status and body (NUL-terminated; the caller frees body). */
struct px_http_reply {
  long status;
  char *body;
  size_t len;
};

/* Finds the server (no I/O beyond reading the config's two lines). */
int px_client_init(struct px_client *c, struct px_diag *d);
void px_client_fini(struct px_client *c);

/*
 * One request, raw. body: bytes to send as application/json, or NULL. On an
 * HTTP answer returns 0 with *r filled. When the server cannot be reached
 * returns PX_ECONNECT (or PX_ETIMEOUT, or PX_EPROTO for a garbled answer)
 * with d->msg "cannot reach the server at WHERE: WHY".
 */
int px_client_request(struct px_client *c, const char *method, const char *path,
                      const char *body, size_t blen, struct px_http_reply *r, struct px_diag *d);

/* One request with a JSON body (or NULL); on an HTTP answer returns 0 with
 * *status and *resp (parsed JSON, or NULL when the body is empty; the
 * caller decrefs). Errors as px_client_request. */
int px_client_call(struct px_client *c, const char *method, const char *path, json_t *body,
                   long *status, json_t **resp, struct px_diag *d);

/* One https request (client_tls.c; in the lean front end an error: main.c
 * hands such commands to phalanxd). As px_client_request. */
int px_client_tls_request(struct px_client *c, const char *method, const char *path,
                          const char *body, size_t blen, struct px_http_reply *r,
                          struct px_diag *d);
void px_client_tls_fini(struct px_client *c);

/* A connection of its own (the caller closes *fd, non-blocking) to the
 * current address, for an upgraded stream (cmd_pty.c); plain sockets only
 * (https:// streams go through libcurl there). 0 or the errors of
 * px_client_request. */
int px_client_open_stream(struct px_client *c, int *fd, struct px_diag *d);

/* For a non-2xx answer: the server's {"error":{"message":..}} text, or a
 * generic line with the status. */
void px_client_error_text(long status, const json_t *resp, char *buf, size_t n);long px_http_head(const char *buf, size_t n, struct px_http_head *h);

/* Chunked decoding, in place and incremental: call again as bytes arrive.
 * Returns 1 when the last chunk (and trailers) are in, 0 for more, -1 when
 * the framing is broken. Decoded bytes are buf[0..st->out). */
struct px_http_chunks {
  size_t scan, out; /* next raw byte to read, end of the decoded bytes */
  size_t left;      /* bytes of the current chunk still to copy */
  bool in_data, in_trailer;
};
int px_http_dechunk(char *buf, size_t n, struct px_http_chunks *st);

#endif
