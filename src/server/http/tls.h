/*
 * tls.h - transport security of the server's TCP listener (tls.c).
 *
 * Listen= serves HTTPS when the configuration names a certificate and key
 * (TLSCertFile=, TLSKeyFile=; libmicrohttpd with GnuTLS). Plain TCP is
 * allowed only where nobody else can listen in: bound to loopback. A plain
 * listener elsewhere is refused at start unless AllowPlainTCP=YES, and even
 * then (and on any plain listener) a credential — bearer token or MUNGE —
 * from a peer that is not loopback is refused: a token sent in clear over a
 * network is a token given away, so it is never accepted, whatever the
 * configuration says. The Unix socket is not concerned (SO_PEERCRED).
 */
#ifndef PX_SERVER_HTTP_TLS_H
#define PX_SERVER_HTTP_TLS_H

#include <stdbool.h>
#include <sys/socket.h>

#include "conf/conf.h"
#include "util/error.h"

/* The listener's certificate and key, read into memory (PEM). */
struct px_tls_files {
  char *cert, *key; /* NULL when the listener is plain TCP */
};

/* Reads TLSCertFile= and TLSKeyFile= when set (both or neither). 0, or an
 * error naming the key and the file. */
int px_tls_load(const struct px_conf_phalanx *p, struct px_tls_files *t, struct px_diag *d);
void px_tls_fini(struct px_tls_files *t);

/* 127.0.0.0/8, ::1, and IPv4-mapped 127.0.0.0/8. */
bool px_tls_is_loopback(const struct sockaddr *sa);

/* Whether a listener bound at `bound` may start: TLS, loopback, or
 * AllowPlainTCP=YES. 0, or PX_EPERM with a message naming the keys. */
int px_tls_check_listen(const char *listen, const struct sockaddr *bound, bool tls,
                        bool allow_plain, struct px_diag *d);

/* Whether a credential may be taken from this peer on this listener; when
 * not, why (for the 401's message). */
bool px_tls_credential_ok(bool tls, const struct sockaddr *peer, char *why, size_t n);

#endif
