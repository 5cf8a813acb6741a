/*
 * devcert.c - a throwaway CA and server certificate (devcert.h), made with
 * GnuTLS's API in the process: GnuTLS is already here (libmicrohttpd's TLS
 * is GnuTLS, and libmicrohttpd-dev brings its headers), where the `openssl`
 * or `certtool` command would be one more package and one more process.
 * ECDSA P-256 keys: generated in a millisecond, and accepted by both ends
 * (GnuTLS in the server, libcurl's OpenSSL in the agents and the CLI).
 */
#include "agent/devcert.h"

#include <fcntl.h>
#include <stdbool.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "util/error.h"

#define DEVCERT_LIFETIME_S (30 * 86400)

/* Fields both certificates share: version, a random serial, the validity, the name, the key. */
static int fill_common(gnutls_x509_crt_t c, gnutls_x509_privkey_t key, const char *cn) {
  unsigned char serial[16];
  if (getrandom(serial, sizeof serial, 0) != (ssize_t)sizeof serial) return GNUTLS_E_RANDOM_FAILED;
  serial[0] &= 0x7f; /* a positive number */
  time_t now = time(NULL);
  int rc = gnutls_x509_crt_set_version(c, 3);
  if (!rc) rc = gnutls_x509_crt_set_serial(c, serial, sizeof serial);
  if (!rc) rc = gnutls_x509_crt_set_activation_time(c, now - 3600); /* a clock a little behind */
  if (!rc) rc = gnutls_x509_crt_set_expiration_time(c, now + DEVCERT_LIFETIME_S);
  if (!rc) rc = gnutls_x509_crt_set_dn_by_oid(c, GNUTLS_OID_X520_COMMON_NAME, 0, cn, strlen(cn));
  if (!rc) rc = gnutls_x509_crt_set_key(c, key);
  unsigned char id[64];
  size_t idlen = sizeof id;
  if (!rc) rc = gnutls_x509_crt_get_key_id(c, 0, id, &idlen);
  if (!rc) rc = gnutls_x509_crt_set_subject_key_id(c, id, idlen);
  return rc;
}

static int make_key(gnutls_x509_privkey_t *key) {
  int rc = gnutls_x509_privkey_init(key);
  if (!rc)
    rc = gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA,
                                      GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0);
  return rc;
}

static int make_ca(gnutls_x509_crt_t ca, gnutls_x509_privkey_t key) {
  int rc = fill_common(ca, key, "phalanx dev CA");
  if (!rc) rc = gnutls_x509_crt_set_basic_constraints(ca, 1, 0);
  if (!rc) rc = gnutls_x509_crt_set_key_usage(ca, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN);
  if (!rc) rc = gnutls_x509_crt_sign2(ca, ca, key, GNUTLS_DIG_SHA256, 0);
  return rc;
}

static int make_server(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, gnutls_x509_crt_t ca,
                       gnutls_x509_privkey_t ca_key) {
  static const unsigned char v4[4] = {127, 0, 0, 1}, v6[16] = {[15] = 1};
  int rc = fill_common(crt, key, "localhost");
  if (!rc) rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1);
  if (!rc) rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE);
  if (!rc) rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0);
  if (!rc)
    rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, "localhost", 9, GNUTLS_FSAN_APPEND);
  if (!rc) rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, v4, 4, GNUTLS_FSAN_APPEND);
  if (!rc) rc = gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, v6, 16, GNUTLS_FSAN_APPEND);
  unsigned char id[64];
  size_t idlen = sizeof id;
  if (!rc) rc = gnutls_x509_crt_get_subject_key_id(ca, id, &idlen, NULL);
  if (!rc) rc = gnutls_x509_crt_set_authority_key_id(crt, id, idlen);
  if (!rc) rc = gnutls_x509_crt_sign2(crt, ca, ca_key, GNUTLS_DIG_SHA256, 0);
  return rc;
}

/* DIR/name with the datum's bytes, created with mode. */
static int write_pem(const char *dir, const char *name, const gnutls_datum_t *pem, mode_t mode) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path); /* a file of an earlier run may have another mode */
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) return -1;
  bool ok = write(fd, pem->data, pem->size) == (ssize_t)pem->size;
  return close(fd) == 0 && ok ? 0 : -1;
}

static int export_all(const char *dir, gnutls_x509_crt_t ca, gnutls_x509_crt_t crt,
                      gnutls_x509_privkey_t key) {
  gnutls_datum_t ca_pem = {0}, crt_pem = {0}, key_pem = {0};
  int rc = gnutls_x509_crt_export2(ca, GNUTLS_X509_FMT_PEM, &ca_pem);
  if (!rc) rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &crt_pem);
  if (!rc) rc = gnutls_x509_privkey_export2(key, GNUTLS_X509_FMT_PEM, &key_pem);
  if (!rc && (write_pem(dir, "ca.pem", &ca_pem, 0644) || write_pem(dir, "server.pem", &crt_pem, 0644) ||
              write_pem(dir, "server.key", &key_pem, 0600)))
    rc = GNUTLS_E_FILE_ERROR;
  gnutls_free(ca_pem.data);
  gnutls_free(crt_pem.data);
  if (key_pem.data) memset(key_pem.data, 0, key_pem.size);
  gnutls_free(key_pem.data);
  return rc;
}

int px_devcert_make(const char *dir, char *err, size_t errlen) {
  gnutls_x509_privkey_t ca_key = NULL, key = NULL;
  gnutls_x509_crt_t ca = NULL, crt = NULL;
  int rc = make_key(&ca_key);
  if (!rc) rc = make_key(&key);
  if (!rc) rc = gnutls_x509_crt_init(&ca);
  if (!rc) rc = gnutls_x509_crt_init(&crt);
  if (!rc) rc = make_ca(ca, ca_key);
  if (!rc) rc = make_server(crt, key, ca, ca_key);
  if (!rc) rc = export_all(dir, ca, crt, key);
  if (rc) snprintf(err, errlen, "certificates in %s: %s", dir, gnutls_strerror(rc));
  if (crt) gnutls_x509_crt_deinit(crt);
  if (ca) gnutls_x509_crt_deinit(ca);
  if (key) gnutls_x509_privkey_deinit(key);
  if (ca_key) gnutls_x509_privkey_deinit(ca_key);
  return rc ? PX_EIO : 0;
}
