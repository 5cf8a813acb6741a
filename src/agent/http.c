/* http.c - the agent's HTTP client over libcurl (http.h). */
#include "agent/http.h"

#include <curl/curl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef PX_HAVE_MUNGE
#include <munge.h>
#endif

#include "agent/servers.h"
#include "util/error.h"
#include "util/log.h"

struct px_http {
  CURL *h;
  struct px_servers list;       /* the controllers (servers.h) */
  atomic_int at;                /* the one the transfer in progress goes to */
  char ca_file[PATH_MAX];
  char last_failure[512]; /* logged once until it changes: a down server is not news every second */
  char token[512];
  bool munge;
  char node[64];
  atomic_bool abort;
};

size_t px_http_collect(char *data, size_t size, size_t n, void *body) {
  struct px_http_body *b = body;
  size_t add = size * n;
  char *np = realloc(b->p, b->len + add + 1);
  if (!np) return 0;
  memcpy(np + b->len, data, add);
  b->len += add;
  np[b->len] = '\0';
  b->p = np;
  return add;
}

static int on_progress(void *ud, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d) {
  struct px_http *h = ud;
  /* a controller the process has left (servers.h): give up this transfer too */
  return atomic_load(&h->abort) || atomic_load(&h->at) != px_servers_cur(&h->list) ? 1 : 0;
}

void px_http_tls(CURL *h, const char *ca_file) {
  if (ca_file && *ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
}

void px_http_failure(CURLcode rc, const char *errbuf, const char *ca_file, char *buf, size_t n) {
  const char *ca = ca_file && *ca_file ? ca_file : "the system's CA bundle";
  const char *detail = errbuf && *errbuf ? errbuf : curl_easy_strerror(rc);
  if (rc == CURLE_PEER_FAILED_VERIFICATION && strstr(detail, "subject"))
    snprintf(buf, n, "the server's certificate does not name the host in the URL (%s)", detail);
  else if (rc == CURLE_PEER_FAILED_VERIFICATION)
    snprintf(buf, n, "the server's certificate is not signed by the CA in %s (%s)", ca, detail);
  else if (rc == CURLE_SSL_CACERT_BADFILE)
    snprintf(buf, n, "cannot use the CA file %s (%s)", ca, detail);
  else if (rc == CURLE_SSL_CONNECT_ERROR)
    snprintf(buf, n, "TLS handshake failed (%s); does the server speak TLS?", detail);
  else
    snprintf(buf, n, "%s", detail);
}

int px_http_new(const char *base, const char *ca_file, const char *token_file, bool munge,
                const char *node, struct px_http **out) {
  struct px_http *c = calloc(1, sizeof *c);
  char why[128];
  if (!c) return PX_ENOMEM;
  if (px_servers_parse(&c->list, base, why, sizeof why)) {
    px_error("%s", why);
    free(c);
    return PX_EINVAL;
  }
  snprintf(c->ca_file, sizeof c->ca_file, "%s", ca_file ? ca_file : "");
  c->munge = munge;
  snprintf(c->node, sizeof c->node, "%s", node ? node : "");
  if (token_file && *token_file) {
    FILE *f = fopen(token_file, "re");
    if (!f || !fgets(c->token, sizeof c->token, f)) {
      if (f) fclose(f);
      free(c);
      return PX_EAUTH;
    }
    fclose(f);
    c->token[strcspn(c->token, "\r\n")] = '\0';
  }
#ifndef PX_HAVE_MUNGE
  if (munge) {
    free(c);
    return PX_EUNSUPPORTED;
  }
#endif
  if (!(c->h = curl_easy_init())) {
    free(c);
    return PX_ENOMEM;
  }
  *out = c;
  return 0;
}

void px_http_free(struct px_http *c) {
  if (!c) return;
  curl_easy_cleanup(c->h);
  free(c);
}

void px_http_abort(struct px_http *c) { atomic_store(&c->abort, true); }

/* A failure is logged when it differs from the last one (an aborted poll is not one). */
static void log_failure(struct px_http *c, CURLcode rc, const char *errbuf) {
  if (rc == CURLE_ABORTED_BY_CALLBACK) return;
  char why[512];
  px_http_failure(rc, errbuf, c->ca_file, why, sizeof why);
  if (!strcmp(why, c->last_failure)) return;
  snprintf(c->last_failure, sizeof c->last_failure, "%s", why);
  px_warn("server %s: %s", px_servers_base(&c->list), why);
}

static struct curl_slist *headers(struct px_http *c, bool json) {
  struct curl_slist *l = NULL, *t;
  char auth[1024] = "";
  if (c->token[0]) snprintf(auth, sizeof auth, "Authorization: Bearer %s", c->token);
#ifdef PX_HAVE_MUNGE
  char *cred = NULL;
  if (c->munge && munge_encode(&cred, NULL, c->node, (int)strlen(c->node)) == EMUNGE_SUCCESS)
    snprintf(auth, sizeof auth, "Authorization: MUNGE %s", cred);
  free(cred);
#endif
  if (auth[0] && (t = curl_slist_append(l, auth))) l = t;
  if (json && (t = curl_slist_append(l, "Content-Type: application/json"))) l = t;
  if ((t = curl_slist_append(l, "Expect:"))) l = t; /* no 100-continue round trip */
  return l;
}

/* One exchange with the current controller. */
static int perform(struct px_http *c, const char *method, const char *path, const char *body,
                   long timeout_ms, long *status, char **resp, struct px_ha_hdr *hdr) {
  char url[1024];
  atomic_store(&c->at, px_servers_cur(&c->list));
  const char *base = c->list.base[atomic_load(&c->at)];
  bool unix_sock = base[0] == '/'; /* a server's Unix socket (`phalanx dev`) */
  snprintf(url, sizeof url, "%s%s", unix_sock ? "http://localhost" : base, path);
  struct px_http_body b = {0};
  struct curl_slist *hl = headers(c, body != NULL);
  CURL *h = c->h;
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, url);
  if (unix_sock) curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, base);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, px_servers_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, hdr);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hl);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, px_http_collect);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &b);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms < 2000 ? timeout_ms : 2000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(h, CURLOPT_XFERINFODATA, c);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  px_http_tls(h, c->ca_file);
  if (strcmp(method, "POST") == 0) {
    curl_easy_setopt(h, CURLOPT_POST, 1L);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, body ? body : "");
  } else if (strcmp(method, "GET") != 0) {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  }
  CURLcode rc = curl_easy_perform(h);
  curl_slist_free_all(hl);
  *status = 0;
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, NULL); /* errbuf ends here */
  if (rc != CURLE_OK) {
    log_failure(c, rc, errbuf);
    free(b.p);
    if (resp) *resp = NULL;
    return rc == CURLE_OPERATION_TIMEDOUT ? PX_ETIMEOUT : PX_ECONNECT;
  }
  c->last_failure[0] = '\0';
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  if (resp) *resp = b.p;
  else free(b.p);
  return 0;
}

/* Moves to another controller when this one is gone or a standby (a 503
 * that names a leader or a term), or answered with a term lower than one
 * heard (fencing: the answer is refused, PX_ESTATE); each known one is
 * tried once per call. */
int px_http_do(struct px_http *c, const char *method, const char *path, const char *body,
               long timeout_ms, long *status, char **resp) {
  for (int attempt = 0;; attempt++) {
    struct px_ha_hdr hdr = {0};
    int rc = perform(c, method, path, body, timeout_ms, status, resp, &hdr);
    bool stale = !rc && *status < 300 && !px_servers_term_ok(hdr.term); /* orders: 2xx */
    bool away = rc == PX_ECONNECT || rc == PX_ETIMEOUT ||
                (!rc && *status == 503 && (hdr.leader[0] || hdr.term));
    if (stale) {
      if (resp) free(*resp), *resp = NULL;
      *status = 0;
      rc = PX_ESTATE;
    }
    if (!(stale || away) || c->list.n < 2 || atomic_load(&c->abort)) return rc;
    px_servers_next(&c->list, atomic_load(&c->at), hdr.leader);
    if (attempt + 1 >= c->list.n) return rc;
    if (resp) free(*resp), *resp = NULL;
  }
}
