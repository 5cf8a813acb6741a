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

#include <curl/curl.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct px_http;

/* base: "http://host:port", "https://host:port", or the path of the
 * server's Unix socket; ca_file: the CA that
 * signed an https server's certificate (NULL or "": the system's CAs).
 * 0 or a PX_E* code (token unreadable, ...). */
int px_http_new(const char *base, const char *ca_file, const char *token_file, bool munge,
                const char *node, struct px_http **out);
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

/* An https:// transfer verifies the server: its certificate chains to
 * ca_file (or the system's CAs when NULL or "") and names the host it was
 * reached at. Harmless on http://. Every client of the server calls it. */
void px_http_tls(CURL *h, const char *ca_file);

/* Why a transfer failed, in words an operator can act on: a certificate
 * the CA does not vouch for, an unreadable CA file, a host name the
 * certificate does not carry, or libcurl's own text (errbuf, may be ""). */
void px_http_failure(CURLcode rc, const char *errbuf, const char *ca_file, char *buf, size_t n);

#endif
