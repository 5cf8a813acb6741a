/*
 * client_tls.c - the CLI's requests to a server reached over TLS (https://),
 * through libcurl (client.h says why only here). Built into phalanxd only:
 * the lean front end has no TLS library, and main.c hands it such commands.
 *
 * The server's certificate is verified against c->ca_file (PHALANX_CA_FILE
 * or the config's TLSCAFile=), or the system's CAs; a certificate another CA
 * signed is one error line that names the CA file (agent/http.h).
 */
#include "cli/client.h"

#ifdef PX_FRONT_END

int px_client_tls_request(struct px_client *c, const char *method, const char *path,
                          const char *body, size_t blen, struct px_http_reply *r,
                          struct px_diag *d) {
  return px_diag_set(d, PX_EUNSUPPORTED, -1, "cannot reach the server at %s: this binary has no "
                     "TLS (phalanxd has)", c->where);
}

void px_client_tls_fini(struct px_client *c) {}

#else

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/http.h"

static struct curl_slist *request_headers(bool body) {
  const char *token = getenv("PHALANX_TOKEN");
  char auth[4096];
  struct curl_slist *l = NULL, *t;
  if ((t = curl_slist_append(l, "Accept: application/json"))) l = t;
  if (body && (t = curl_slist_append(l, "Content-Type: application/json"))) l = t;
  if ((t = curl_slist_append(l, "Expect:"))) l = t; /* no 100-continue round trip */
  if (token && *token) {
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    if ((t = curl_slist_append(l, auth))) l = t;
  }
  return l;
}

static void set_method(CURL *h, const char *method, const char *body, size_t blen) {
  if (body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
  }
  if (strcmp(method, "GET") && (strcmp(method, "POST") || !body))
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
}

/* The answer's head, line by line, into one buffer that px_http_head reads
 * at the end (the leader a standby names, the term; http1.c), so that https
 * answers are read as the plain ones. A new status line starts it again. */
struct head_buf {
  char text[4096];
  size_t len;
};

static size_t on_header(char *data, size_t size, size_t n, void *ud) {
  struct head_buf *b = ud;
  size_t len = size * n;
  if (len >= 5 && !memcmp(data, "HTTP/", 5)) b->len = 0;
  if (b->len + len < sizeof b->text) {
    memcpy(b->text + b->len, data, len);
    b->len += len;
  }
  return len;
}

int px_client_tls_request(struct px_client *c, const char *method, const char *path,
                          const char *body, size_t blen, struct px_http_reply *r,
                          struct px_diag *d) {
  struct head_buf hb = {.len = 0};
  memset(&c->tls_head, 0, sizeof c->tls_head);
  c->tls_unsent = false;
  if (!c->curl && !(c->curl = curl_easy_init()))
    return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  CURL *h = c->curl;
  char url[1024], errbuf[CURL_ERROR_SIZE] = "";
  bool v6 = strchr(c->host, ':') != NULL;
  snprintf(url, sizeof url, "https://%s%s%s:%s%s", v6 ? "[" : "", c->host, v6 ? "]" : "", c->port,
           path);
  struct curl_slist *hl = request_headers(body != NULL);
  struct px_http_body b = {0};
  curl_easy_reset(h); /* the connection stays in the handle's cache */
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, px_http_collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &hb);
  px_http_tls(h, c->ca_file);
  set_method(h, method, body, blen);
  CURLcode rc = curl_easy_perform(h);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL);
  curl_slist_free_all(hl);
  if (rc != CURLE_OK) {
    c->tls_unsent = rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST;
    char why[768];
    px_http_failure(rc, errbuf, c->ca_file, why, sizeof why);
    free(b.p);
    return px_diag_set(d, rc == CURLE_OPERATION_TIMEDOUT ? PX_ETIMEOUT : PX_ECONNECT, -1,
                       "cannot reach the server at %s: %s", c->where, why);
  }
  if (!b.p && !(b.p = calloc(1, 1))) return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r->status);
  if (px_http_head(hb.text, hb.len, &c->tls_head) <= 0) memset(&c->tls_head, 0, sizeof c->tls_head);
  r->body = b.p;
  r->len = b.len;
  return 0;
}

void px_client_tls_fini(struct px_client *c) {
  if (c->curl) curl_easy_cleanup(c->curl);
  c->curl = NULL;
}

#endif
