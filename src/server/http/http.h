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

/* ---- HTTP (http.c) ---- */
int px_http_start(struct px_server *s, struct px_diag *d);
/* Does this thread serve listings at the lowered priority? */
bool px_http_thread_lowered(void);
void px_http_stop(struct px_server *s);

#endif
