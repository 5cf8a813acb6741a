/*
 * tls.c - the TCP listener's certificate and the plain-TCP rules (tls.h).
 */
#include "server/http/tls.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

#define PX_TLS_PEM_MAX (1 << 20) /* a certificate chain is a few KiB */

/* The whole of a small file, NUL-terminated (libmicrohttpd takes PEM as a string). */
static int read_pem(const char *key, const char *path, char **out, struct px_diag *d) {
  FILE *f = fopen(path, "re");
  if (!f) return px_diag_set(d, PX_EIO, -1, "%s=%s: %s", key, path, strerror(errno));
  char *buf = malloc(PX_TLS_PEM_MAX + 1);
  size_t n = buf ? fread(buf, 1, PX_TLS_PEM_MAX, f) : 0;
  bool err = ferror(f) != 0, more = !feof(f);
  fclose(f);
  if (!buf) return px_diag_set(d, PX_ENOMEM, -1, "%s: out of memory", key);
  buf[n] = '\0';
  const char *why = err                          ? "read error"
                    : more                       ? "larger than 1 MiB"
                    : !strstr(buf, "-----BEGIN ") ? "not a PEM file"
                                                 : NULL;
  if (why) {
    free(buf);
    return px_diag_set(d, PX_EINVAL, -1, "%s=%s: %s", key, path, why);
  }
  *out = buf;
  return 0;
}

int px_tls_load(const struct px_conf_phalanx *p, struct px_tls_files *t, struct px_diag *d) {
  t->cert = t->key = NULL;
  if (!p->tls_cert_file && !p->tls_key_file) return 0;
  if (!p->tls_cert_file || !p->tls_key_file)
    return px_diag_set(d, PX_EINVAL, -1, "%s: TLS needs both TLSCertFile= and TLSKeyFile=",
                       p->tls_cert_file ? "TLSKeyFile" : "TLSCertFile");
  int rc = read_pem("TLSCertFile", p->tls_cert_file, &t->cert, d);
  if (!rc) rc = read_pem("TLSKeyFile", p->tls_key_file, &t->key, d);
  if (rc) px_tls_fini(t);
  return rc;
}

void px_tls_fini(struct px_tls_files *t) {
  free(t->cert);
  if (t->key) memset(t->key, 0, strlen(t->key)); /* the private key does not linger in freed memory */
  free(t->key);
  t->cert = t->key = NULL;
}

bool px_tls_is_loopback(const struct sockaddr *sa) {
  if (!sa) return false;
  if (sa->sa_family == AF_INET)
    return (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
  if (sa->sa_family != AF_INET6) return false;
  const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
  return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

int px_tls_check_listen(const char *listen, const struct sockaddr *bound, bool tls,
                        bool allow_plain, struct px_diag *d) {
  if (tls || px_tls_is_loopback(bound)) return 0;
  if (allow_plain) {
    px_warn("Listen=%s is plain TCP off loopback (AllowPlainTCP=YES): it serves only what needs "
            "no credential; tokens and MUNGE credentials sent to it are refused", listen);
    return 0;
  }
  return px_diag_set(d, PX_EPERM, -1,
                     "Listen=%s: plain TCP on an address other than loopback would carry tokens in "
                     "clear; set TLSCertFile= and TLSKeyFile= (TLS), or listen on 127.0.0.1",
                     listen);
}

bool px_tls_credential_ok(bool tls, const struct sockaddr *peer, char *why, size_t n) {
  if (tls || px_tls_is_loopback(peer)) return true;
  char host[INET6_ADDRSTRLEN] = "?";
  if (peer && peer->sa_family == AF_INET)
    inet_ntop(AF_INET, &((const struct sockaddr_in *)peer)->sin_addr, host, sizeof host);
  else if (peer && peer->sa_family == AF_INET6)
    inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)peer)->sin6_addr, host, sizeof host);
  snprintf(why, n, "credentials are not accepted over plain TCP from %s (not loopback); the "
           "server needs TLS (TLSCertFile=, TLSKeyFile=)", host);
  return false;
}
