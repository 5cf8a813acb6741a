/*
 * http1.c - the framing half of the CLI's HTTP/1.1 client (client.h): a
 * response head, and chunked bodies decoded in place. Pure functions over a
 * buffer, so the unit tests feed them split and broken inputs; client.c does
 * the I/O.
 *
 * Only what our own server (libmicrohttpd) and the tests' Python stand-in
 * send is needed: a status line, Content-Length or chunked or read-to-close
 * bodies, Connection: close. Anything else that is not HTTP is an error.
 */
#include "cli/client.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HEAD_MAX 65536    /* a head longer than this is not our server */
#define CHUNK_LINE_MAX 1024

/* The value of one header line (name already matched), trimmed, into out. */
static void header_value(const char *v, const char *end, char *out, size_t n) {
  while (v < end && (*v == ' ' || *v == '\t')) v++;
  while (end > v && isspace((unsigned char)end[-1])) end--;
  size_t k = (size_t)(end - v) < n - 1 ? (size_t)(end - v) : n - 1;
  memcpy(out, v, k);
  out[k] = '\0';
}

static void header_line(const char *p, const char *end, struct px_http_head *h) {
  const char *colon = memchr(p, ':', (size_t)(end - p));
  if (!colon) return;
  size_t nlen = (size_t)(colon - p);
  char v[128];
  header_value(colon + 1, end, v, sizeof v);
  if (nlen == 14 && !strncasecmp(p, "content-length", 14)) {
    char *e;
    long long len = strtoll(v, &e, 10);
    h->content_length = (*v && !*e && len >= 0) ? len : -2; /* -2: garbled */
  } else if (nlen == 17 && !strncasecmp(p, "transfer-encoding", 17)) {
    h->chunked = strcasestr(v, "chunked") != NULL;
  } else if (nlen == 14 && !strncasecmp(p, "x-phalanx-term", 14)) {
    h->ha = true;
  } else if (nlen == 16 && !strncasecmp(p, "x-phalanx-leader", 16)) {
    snprintf(h->leader, sizeof h->leader, "%s", v);
  } else if (nlen == 10 && !strncasecmp(p, "connection", 10)) {
    if (strcasestr(v, "close")) h->close = true;
    else if (strcasestr(v, "keep-alive")) h->close = false;
  }
}

long px_http_head(const char *buf, size_t n, struct px_http_head *h) {
  const char *end = memmem(buf, n, "\r\n\r\n", 4);
  if (!end) return n > HEAD_MAX ? -1 : 0;
  if (n < 12 || memcmp(buf, "HTTP/1.", 7) || buf[8] != ' ' || !isdigit((unsigned char)buf[9]) ||
      !isdigit((unsigned char)buf[10]) || !isdigit((unsigned char)buf[11]))
    return -1;
  memset(h, 0, sizeof *h);
  h->status = (buf[9] - '0') * 100 + (buf[10] - '0') * 10 + (buf[11] - '0');
  h->content_length = -1;
  h->close = buf[7] == '0'; /* HTTP/1.0 closes unless it says keep-alive */
  const char *p = (const char *)memchr(buf, '\n', (size_t)(end + 2 - buf)) + 1;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end + 2 - p));
    if (!eol) break;
    header_line(p, eol, h);
    p = eol + 1;
  }
  if (h->content_length == -2) return -1;
  return (long)(end - buf) + 4;
}

/* The size line of a chunk: hex digits, then an optional ";extension". */
static int chunk_size(const char *p, const char *eol, size_t *size) {
  size_t v = 0;
  int digits = 0;
  for (; p < eol && isxdigit((unsigned char)*p); p++, digits++) {
    if (v > (SIZE_MAX >> 8)) return -1;
    v = v * 16 + (size_t)(isdigit((unsigned char)*p) ? *p - '0' : (tolower((unsigned char)*p) - 'a' + 10));
  }
  if (!digits || (p < eol && *p != ';' && *p != '\r' && *p != ' ' && *p != '\t')) return -1;
  *size = v;
  return 0;
}

int px_http_dechunk(char *buf, size_t n, struct px_http_chunks *st) {
  for (;;) {
    if (st->in_data) {
      size_t avail = n - st->scan, k = avail < st->left ? avail : st->left;
      memmove(buf + st->out, buf + st->scan, k);
      st->out += k, st->scan += k, st->left -= k;
      if (st->left || n - st->scan < 2) return 0;
      if (buf[st->scan] != '\r' || buf[st->scan + 1] != '\n') return -1;
      st->scan += 2;
      st->in_data = false;
      continue;
    }
    const char *nl = memchr(buf + st->scan, '\n', n - st->scan);
    if (!nl) return n - st->scan > CHUNK_LINE_MAX ? -1 : 0;
    const char *line = buf + st->scan;
    st->scan = (size_t)(nl - buf) + 1;
    if (st->in_trailer) {
      if (nl == line || (nl == line + 1 && *line == '\r')) return 1; /* the blank line */
      continue;
    }
    size_t size;
    if (chunk_size(line, nl, &size)) return -1;
    if (!size) st->in_trailer = true;
    else st->left = size, st->in_data = true;
  }
}
