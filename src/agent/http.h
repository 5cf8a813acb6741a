/*
 * http.h - the agent's small HTTP client (libcurl): JSON requests to the
 * server with the agent's credential, one connection kept alive per
 * client. Each thread uses its own client. Tests point it at any server.
 *
 * Credentials: a bearer token read from a file ("Authorization: Bearer T"),
 * or a fresh MUNGE credential per request ("Authorization: MUNGE CRED")
 * whose payload is the node name, binding the credential to the node.
 */
#ifndef PX_AGENT_HTTP_H
#define PX_AGENT_HTTP_H

#include <stdbool.h>
#include <stddef.h>

struct px_http;

/* base: "http://host:port", or the path of the server's Unix socket. 0 or a PX_E* code (token unreadable, ...). */
int px_http_new(const char *base, const char *token_file, bool munge, const char *node,
                struct px_http **out);
void px_http_free(struct px_http *c);
/* Makes the next (or current) request give up: for stopping a long poll. */
void px_http_abort(struct px_http *c);

/* method "GET"/"POST"; body may be NULL. *status gets the HTTP status
 * (0 when no answer came), *resp the body (malloc'd, may be NULL).
 * Returns 0 when an answer came, PX_ECONNECT or PX_ETIMEOUT otherwise. */
int px_http_do(struct px_http *c, const char *method, const char *path, const char *body,
               long timeout_ms, long *status, char **resp);

/* A response body collected by libcurl (CURLOPT_WRITEFUNCTION
 * px_http_collect, CURLOPT_WRITEDATA a struct px_http_body): NUL-terminated,
 * malloc'd; the emulating agent's transfers use it too. */
struct px_http_body {
  char *p;
  size_t len;
};
size_t px_http_collect(char *data, size_t size, size_t n, void *body);

#endif
