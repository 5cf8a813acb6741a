/* pty_dial.c - the pty host's upgraded connection to the relay (pty_dial.h). */
#include "agent/pty_dial.h"

#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEAD_WAIT_MS 15000

static int wait_fd(int fd, short ev, int ms) {
  struct pollfd p = {.fd = fd, .events = ev};
  int r;
  while ((r = poll(&p, 1, ms)) < 0 && errno == EINTR) {}
  return r;
}

int px_dial_send(struct px_dial *d, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    size_t sent = 0;
    CURLcode rc = curl_easy_send(d->curl, p, n, &sent);
    if (rc == CURLE_AGAIN) {
      if (wait_fd(d->fd, POLLOUT, 30000) <= 0) return -1;
      continue;
    }
    if (rc != CURLE_OK) return -1;
    p += sent;
    n -= sent;
  }
  return 0;
}

ssize_t px_dial_recv(struct px_dial *d, void *buf, size_t n) {
  if (d->nleft) {
    size_t k = d->nleft < n ? d->nleft : n;
    memcpy(buf, d->left, k);
    memmove(d->left, d->left + k, d->nleft - k);
    d->nleft -= k;
    return (ssize_t)k;
  }
  size_t got = 0;
  CURLcode rc = curl_easy_recv(d->curl, buf, n, &got);
  if (rc == CURLE_AGAIN) return -2;
  if (rc != CURLE_OK) return -1;
  return (ssize_t)got;
}

/* Reads the answer's head; 0 on 101 (bytes after it kept), else -1. */
static int read_head(struct px_dial *d, char *err, size_t errlen) {
  char head[4096];
  size_t n = 0;
  for (;;) {
    size_t got = 0;
    CURLcode rc = curl_easy_recv(d->curl, head + n, sizeof head - 1 - n, &got);
    if (rc == CURLE_AGAIN) {
      if (wait_fd(d->fd, POLLIN, HEAD_WAIT_MS) <= 0) return snprintf(err, errlen, "no answer from the relay"), -1;
      continue;
    }
    if (rc != CURLE_OK || !got) return snprintf(err, errlen, "the relay closed the connection"), -1;
    n += got;
    head[n] = '\0';
    char *end = strstr(head, "\r\n\r\n");
    if (!end) {
      if (n == sizeof head - 1) return snprintf(err, errlen, "the relay's answer is too long"), -1;
      continue;
    }
    int status = 0;
    if (sscanf(head, "HTTP/1.%*d %d", &status) != 1 || status != 101) {
      char *body = end + 4;
      snprintf(err, errlen, "the relay answered %d: %.300s", status, body);
      return -1;
    }
    size_t used = (size_t)(end + 4 - head);
    d->nleft = n - used;
    memcpy(d->left, head + used, d->nleft);
    return 0;
  }
}

int px_dial_open(struct px_dial *d, const char *server, const char *ca_file, const char *path,
                 const char *secret, char *err, size_t errlen) {
  memset(d, 0, sizeof *d);
  d->fd = -1;
  CURL *h = curl_easy_init();
  if (!h) return snprintf(err, errlen, "cannot start libcurl"), -1;
  d->curl = h;
  char url[1024], host[300] = "localhost";
  bool unix_sock = server[0] == '/';
  if (unix_sock) {
    curl_easy_setopt(h, CURLOPT_UNIX_SOCKET_PATH, server);
    snprintf(url, sizeof url, "http://localhost%s", path);
  } else {
    snprintf(url, sizeof url, "%s%s", server, path);
    const char *s = strstr(server, "://");
    snprintf(host, sizeof host, "%s", s ? s + 3 : server);
  }
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_CONNECT_ONLY, 1L);
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_NODELAY, 1L);
  if (ca_file && *ca_file) curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
  CURLcode rc = curl_easy_perform(h);
  if (rc != CURLE_OK) {
    snprintf(err, errlen, "cannot reach the server at %s: %s", server, curl_easy_strerror(rc));
    goto fail;
  }
  curl_socket_t sock;
  if (curl_easy_getinfo(h, CURLINFO_ACTIVESOCKET, &sock) != CURLE_OK || sock == CURL_SOCKET_BAD) {
    snprintf(err, errlen, "no socket to the server");
    goto fail;
  }
  d->fd = (int)sock;
  char req[1400];
  int len = snprintf(req, sizeof req,
                     "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: Upgrade\r\nUpgrade: phalanx-pty\r\n"
                     "X-Phalanx-Secret: %s\r\n\r\n",
                     path, host, secret);
  if (len <= 0 || (size_t)len >= sizeof req || px_dial_send(d, req, (size_t)len)) {
    snprintf(err, errlen, "cannot send the request to the relay");
    goto fail;
  }
  if (read_head(d, err, errlen)) goto fail;
  return 0;
fail:
  px_dial_close(d);
  return -1;
}

void px_dial_close(struct px_dial *d) {
  if (d->curl) curl_easy_cleanup(d->curl);
  d->curl = NULL;
  d->fd = -1;
}
