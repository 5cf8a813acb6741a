/*
 * client.c - the CLI's HTTP client (see client.h). One curl handle per
 * command, reused across its requests; no TLS initialisation unless the
 * server URL is https, which keeps a `sbatch --wrap true` process cheap.
 */
#include "cli/client.h"

#include <ctype.h>
#include <stdbool.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int set_where(struct px_client *c, const char *spec, struct px_diag *d) {
  if (!strncmp(spec, "unix:", 5)) {
    snprintf(c->socket_path, sizeof c->socket_path, "%s", spec + 5);
    snprintf(c->base, sizeof c->base, "http://localhost");
    snprintf(c->where, sizeof c->where, "unix:%s", c->socket_path);
    return 0;
  }
  if (!strncmp(spec, "http://", 7) || !strncmp(spec, "https://", 8)) {
    snprintf(c->base, sizeof c->base, "%s", spec);
    size_t n = strlen(c->base);
    if (n && c->base[n - 1] == '/') c->base[n - 1] = '\0';
    snprintf(c->where, sizeof c->where, "%s", c->base);
    return 0;
  }
  return px_diag_set(d, PX_EINVAL, -1,
                     "server address '%s' is neither unix:/path nor http://host:port", spec);
}

/* Reads SocketPath= (preferred: local, identifies us by SO_PEERCRED) or
 * Listen= from the config without parsing the rest. */
static bool from_config(struct px_client *c, struct px_diag *d) {
  const char *path = getenv("PHALANX_CONF");
  FILE *f = fopen(path ? path : PX_CLI_DEFAULT_CONF, "r");
  if (!f) return false;
  char line[1024], sock[600] = "", listen[600] = "";
  while (fgets(line, sizeof line, f)) {
    char *p = line;
    while (isspace((unsigned char)*p)) p++;
    char *val = strchr(p, '=');
    if (!val) continue;
    val++;
    val[strcspn(val, " \t\r\n#")] = '\0';
    if (!strncasecmp(p, "SocketPath=", 11)) snprintf(sock, sizeof sock, "unix:%s", val);
    if (!strncasecmp(p, "Listen=", 7)) snprintf(listen, sizeof listen, "http://%s", val);
  }
  fclose(f);
  if (*sock) return set_where(c, sock, d) == 0;
  if (*listen) return set_where(c, listen, d) == 0;
  return false;
}

int px_client_init(struct px_client *c, struct px_diag *d) {
  memset(c, 0, sizeof *c);
  c->connect_timeout_ms = 3000;
  c->timeout_ms = 30000;
  const char *t = getenv("PHALANX_TIMEOUT");
  long secs = t ? strtol(t, NULL, 10) : 0;
  if (secs > 0 && secs < 86400) c->timeout_ms = secs * 1000;
  const char *env = getenv("PHALANX_SERVER");
  int rc = 0;
  if (env && *env) {
    if (env[0] == '/') {
      char spec[600];
      snprintf(spec, sizeof spec, "unix:%s", env);
      rc = set_where(c, spec, d);
    } else {
      rc = set_where(c, env, d);
    }
  } else if (!from_config(c, d)) {
    rc = set_where(c, "unix:" PX_CLI_DEFAULT_SOCKET, d);
  }
  if (rc) return rc;
  long flags = strncmp(c->base, "https:", 6) ? CURL_GLOBAL_NOTHING : CURL_GLOBAL_DEFAULT;
  if (curl_global_init(flags) != CURLE_OK || !(c->curl = curl_easy_init()))
    return px_diag_set(d, PX_ENOMEM, -1, "cannot initialise the HTTP client");
  return 0;
}

void px_client_fini(struct px_client *c) {
  if (c->curl) curl_easy_cleanup(c->curl);
  c->curl = NULL;
}

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata) {
  FILE *f = userdata;
  return fwrite(ptr, size, nmemb, f);
}

int px_client_call(struct px_client *c, const char *method, const char *path, json_t *body,
                   long *status, json_t **resp, struct px_diag *d) {
  CURL *h = c->curl;
  char url[1024], *text = NULL, *got = NULL;
  size_t glen = 0;
  struct curl_slist *hdr = NULL;
  int rc = 0;
  *resp = NULL;
  snprintf(url, sizeof url, "%s%s", c->base, path);
  FILE *sink = open_memstream(&got, &glen);
  if (!sink) return PX_ENOMEM;
  curl_easy_reset(h);
  curl_easy_setopt(h, CURLOPT_URL, url);
  if (c->socket_path[0]) curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, c->socket_path);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_timeout_ms);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, c->timeout_ms);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, sink);
  hdr = curl_slist_append(hdr, "Accept: application/json");
  const char *token = getenv("PHALANX_TOKEN");
  if (token && *token) {
    char auth[4096];
    snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
    hdr = curl_slist_append(hdr, auth);
  }
  if (body) {
    text = json_dumps(body, JSON_COMPACT);
    if (!text) {
      rc = PX_ENOMEM;
      goto fail;
    }
    hdr = curl_slist_append(hdr, "Content-Type: application/json");
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, text);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
  CURLcode cc = curl_easy_perform(h);
  fclose(sink);
  sink = NULL;
  if (cc != CURLE_OK) {
    rc = px_diag_set(d, cc == CURLE_OPERATION_TIMEDOUT ? PX_ETIMEOUT : PX_ECONNECT, -1,
                     "cannot reach the server at %s: %s", c->where, curl_easy_strerror(cc));
    goto fail;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  if (glen) {
    json_error_t je;
    *resp = json_loadb(got, glen, 0, &je);
    if (!*resp) {
      rc = px_diag_set(d, PX_EPROTO, -1, "the server at %s sent a reply that is not JSON (%s)",
                       c->where, je.text);
      goto fail;
    }
  }
fail:
  if (sink) fclose(sink);
  curl_slist_free_all(hdr);
  free(text);
  free(got);
  return rc;
}

void px_client_error_text(long status, const json_t *resp, char *buf, size_t n) {
  const char *msg = json_string_value(json_object_get(json_object_get(resp, "error"), "message"));
  if (msg)
    snprintf(buf, n, "%s", msg);
  else
    snprintf(buf, n, "the server answered HTTP %ld", status);
}
