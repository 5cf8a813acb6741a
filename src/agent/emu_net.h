/*
 * emu_net.h - the emulating agent's HTTP client: many requests in flight
 * from one thread over libcurl's multi interface, driven by the caller's
 * epoll loop (curl_multi_socket_action), so that 10,000 long polls cost
 * 10,000 idle sockets, not 10,000 threads, and an event costs work for its
 * own transfer only.
 *
 * Requests other than long polls are throttled (at most max_inflight at
 * once, the rest wait in order): 10,000 nodes registering together would
 * otherwise open 10,000 connections at once and overflow the server's
 * listen backlog. Connections are reused across nodes (the multi's cache):
 * a credential is a header, not a connection.
 */
#ifndef PX_AGENT_EMU_NET_H
#define PX_AGENT_EMU_NET_H

#include <stdbool.h>
#include <stdint.h>

struct px_emnet;

/* rc: 0 when an answer came (status set), PX_ECONNECT/PX_ETIMEOUT otherwise;
 * body: the answer (malloc'd, the callee frees it; may be NULL). */
typedef void (*px_emnet_done_fn)(void *ud, int rc, long status, char *body);

/* base "http://host:port"; epfd: the caller's epoll set, which gets the
 * transfers' sockets (their epoll data is a u64 whose high half is not 0;
 * hand it back to px_emnet_socket). */
int px_emnet_new(const char *base, const char *ca_file, int epfd, uint32_t max_sockets,
                 struct px_emnet **out);
void px_emnet_free(struct px_emnet *n);

/* Starts a request. key: the caller's (its node), to spread transfers
 * over several connection caches (emu_net.c); auth: a whole "Authorization: ..." header line or NULL;
 * body: POSTed when not NULL (copied). A long poll is not throttled.
 * done runs from px_emnet_socket / px_emnet_timeout, never from here. */
int px_emnet_request(struct px_emnet *n, uint32_t key, const char *method, const char *path, const char *auth,
                     const char *body, long timeout_ms, bool long_poll, px_emnet_done_fn done, void *ud);

/* The caller's loop: an epoll event on a transfer's socket, and the time
 * (monotonic ms, or -1) when curl wants px_emnet_timeout called. */
void px_emnet_socket(struct px_emnet *n, uint64_t epoll_data, uint32_t epoll_events);
void px_emnet_timeout(struct px_emnet *n, int64_t now_ms);
int64_t px_emnet_due_ms(const struct px_emnet *n);
/* Requests in flight or waiting (long polls included). */
uint32_t px_emnet_busy(const struct px_emnet *n);

#endif
