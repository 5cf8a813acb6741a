/*
 * pty_dial.h - the pty host's connection to the server's relay
 * (docs/interactive.md): one outgoing HTTP/1.1 request upgraded to a raw
 * stream, "GET /v1/terminals/ID" with "Upgrade: phalanx-pty" and the
 * session's one-time credential. libcurl makes the connection (a Unix
 * socket, plain TCP or TLS, verified against the agent's CA file, exactly
 * as the agent's own requests) and then only carries bytes
 * (CURLOPT_CONNECT_ONLY), so the node never opens a port.
 */
#ifndef PX_AGENT_PTY_DIAL_H
#define PX_AGENT_PTY_DIAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct px_dial {
  void *curl;
  int fd;                       /* the socket, for poll */
  unsigned char left[4096];     /* stream bytes that came with the answer's head */
  size_t nleft;
};

/* server: "https://h:p", "http://h:p" or a Unix socket path; ca_file NULL
 * or "" for the system's CAs. 0, or -1 with err saying why. */
int px_dial_open(struct px_dial *d, const char *server, const char *ca_file, const char *path,
                 const char *secret, char *err, size_t errlen);
/* Up to n bytes: > 0 read, 0 the server closed, -1 an error, -2 nothing now. */
ssize_t px_dial_recv(struct px_dial *d, void *buf, size_t n);
/* All of buf (waits for room); 0 or -1. */
int px_dial_send(struct px_dial *d, const void *buf, size_t n);
void px_dial_close(struct px_dial *d);

#endif
