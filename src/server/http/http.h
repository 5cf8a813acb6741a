/*
 * http.h - what the HTTP group (src/server/http/) offers the server's
 * start-up: the listeners (http.c) and the per-user rate limits they apply
 * (ratelimit.c). The endpoints are api.h. HTTP depends on the main loop
 * (loop/loop.h: requests, snapshots), never the other way round.
 */
#ifndef PX_SERVER_HTTP_HTTP_H
#define PX_SERVER_HTTP_HTTP_H

#include <stdbool.h>
#include <stdint.h>

struct px_server;
struct px_diag;

/* ---- per-user rate limits (ratelimit.c): token buckets ---- */

struct px_ratelimit;
struct px_ratelimit *px_ratelimit_new(double rate_per_s, double burst);
void px_ratelimit_free(struct px_ratelimit *r);
/* true when uid may make one more request at now_s (monotonic seconds). */
bool px_ratelimit_take(struct px_ratelimit *r, uint32_t uid, double now_s);

/* ---- the relay of interactive streams (relay.c, docs/interactive.md) ---- */

#define PX_RELAY_PROTOCOL "phalanx-pty"
#define PX_RELAY_ID_LEN 32      /* hex characters */
#define PX_RELAY_SECRET_LEN 64

/* Opens a session: its id and the two one-time credentials (the CLI's, the
 * node's), each PX_RELAY_*_LEN + 1 bytes. 0 or PX_ENOMEM / PX_EIO. */
int px_relay_open(char *id, char *client_secret, char *node_secret);
/* Forgets a session nobody has come for yet (its step was refused). */
void px_relay_drop(const char *id);
/* Ends every relay (the server is stopping); waits a few seconds at most. */
void px_relay_stop(void);

/* ---- web sessions' reverse proxy (api_session.c) ---- */

/* A web application's answer, raw[0..n) (NUL-terminated at n): 0 with
 * *status, *body (where its body starts) and header() called for each
 * header that is not hop-by-hop; -1 when it is not an HTTP/1.x answer. Cuts
 * raw's head up. Exposed for the fuzzer (tests/fuzz/fuzz_session_answer.c). */
int px_session_answer_parse(char *raw, size_t n, int *status, size_t *body,
                            void (*header)(void *ud, const char *k, const char *v), void *ud);
struct px_api_call;
/* A connection to the application (blocking, with time-outs), or -1. */
int px_session_dial(const char *host, unsigned port);
/* The request as the application gets it (malloc'd, *n bytes): HTTP/1.0,
 * or with upgrade (the Upgrade header's value) HTTP/1.1 asking for it. */
char *px_session_request(struct px_api_call *c, const char *addr, unsigned port, const char *upgrade, size_t *n);
bool px_session_send_all(int fd, const char *p, size_t n);
/* An upgrade (a WebSocket) passed to the application and, once it answers
 * 101, spliced until either side closes (session_ws.c). */
void px_session_tunnel(struct px_api_call *c, const char *addr, unsigned port, const char *upgrade);
/* Ends every tunnel (the server is stopping); waits a few seconds at most. */
void px_session_stop(void);

/* ---- HTTP (http.c) ---- */
int px_http_start(struct px_server *s, struct px_diag *d);
/* Does this thread serve listings at the lowered priority? */
bool px_http_thread_lowered(void);
void px_http_stop(struct px_server *s);

#endif
