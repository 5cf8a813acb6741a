/*
 * The plain-TCP rules of the server's listener (server/http/tls.h): which
 * addresses count as loopback, which listeners may start, from which peers
 * a credential is taken; and reading the certificate files with errors that
 * name the key.
 */
#include "px_test.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "server/http/tls.h"

static struct sockaddr_storage addr(const char *text) {
  struct sockaddr_storage ss = {0};
  struct sockaddr_in *v4 = (struct sockaddr_in *)&ss;
  struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)&ss;
  if (inet_pton(AF_INET, text, &v4->sin_addr) == 1) v4->sin_family = AF_INET;
  else if (inet_pton(AF_INET6, text, &v6->sin6_addr) == 1) v6->sin6_family = AF_INET6;
  return ss;
}

static bool loopback(const char *text) {
  struct sockaddr_storage ss = addr(text);
  return px_tls_is_loopback((struct sockaddr *)&ss);
}

static void loopback_addresses(void **state) {
  assert_true(loopback("127.0.0.1"));
  assert_true(loopback("127.255.0.9"));
  assert_true(loopback("::1"));
  assert_true(loopback("::ffff:127.0.0.1"));
  assert_false(loopback("0.0.0.0"));
  assert_false(loopback("10.0.0.1"));
  assert_false(loopback("128.0.0.1"));
  assert_false(loopback("::"));
  assert_false(loopback("::ffff:10.0.0.1"));
  assert_false(px_tls_is_loopback(NULL));
}

static void plain_listener_only_on_loopback(void **state) {
  struct px_diag d = {0};
  struct sockaddr_storage lo = addr("127.0.0.1"), any = addr("0.0.0.0");
  assert_int_equal(px_tls_check_listen("127.0.0.1:1", (struct sockaddr *)&lo, false, false, &d), 0);
  assert_int_equal(px_tls_check_listen("0.0.0.0:1", (struct sockaddr *)&any, true, false, &d), 0);
  assert_int_equal(px_tls_check_listen("0.0.0.0:1", (struct sockaddr *)&any, false, false, &d), PX_EPERM);
  assert_non_null(strstr(d.msg, "Listen=0.0.0.0:1"));
  assert_non_null(strstr(d.msg, "TLSCertFile= and TLSKeyFile="));
  assert_int_equal(px_tls_check_listen("0.0.0.0:1", (struct sockaddr *)&any, false, true, &d), 0);
}

static void credentials_need_tls_or_loopback(void **state) {
  char why[256] = "";
  struct sockaddr_storage lo = addr("::1"), far = addr("10.1.2.3");
  assert_true(px_tls_credential_ok(false, (struct sockaddr *)&lo, why, sizeof why));
  assert_true(px_tls_credential_ok(true, (struct sockaddr *)&far, why, sizeof why));
  assert_false(px_tls_credential_ok(false, (struct sockaddr *)&far, why, sizeof why));
  assert_non_null(strstr(why, "plain TCP from 10.1.2.3"));
  assert_false(px_tls_credential_ok(false, NULL, why, sizeof why)); /* unknown peer: no */
}

static void certificate_files_named_in_errors(void **state) {
  struct px_conf_phalanx p = {0};
  struct px_tls_files t;
  struct px_diag d = {0};
  assert_int_equal(px_tls_load(&p, &t, &d), 0); /* neither: plain TCP */
  assert_null(t.cert);
  p.tls_cert_file = "/nonexistent/cert.pem";
  assert_int_equal(px_tls_load(&p, &t, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "TLSKeyFile"));
  char path[] = "/tmp/px-tls-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "not pem\n", 8), 8);
  close(fd);
  p.tls_key_file = path;
  assert_int_equal(px_tls_load(&p, &t, &d), PX_EIO);
  assert_non_null(strstr(d.msg, "TLSCertFile=/nonexistent/cert.pem"));
  p.tls_cert_file = path;
  assert_int_equal(px_tls_load(&p, &t, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "not a PEM file"));
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(loopback_addresses),
      cmocka_unit_test(plain_listener_only_on_loopback),
      cmocka_unit_test(credentials_need_tls_or_loopback),
      cmocka_unit_test(certificate_files_named_in_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
