/*
 * Regression tests for bugs the fuzz targets found in server/ (see
 * tests/fuzz/fuzz_http_query.c).
 *
 * JWT uid claim: libjwt's jwt_get_grant_int() reads a claim that is not a
 * JSON integer as 0 without an error, so a validly signed token carrying
 * "uid":"1001" (a string, as some token issuers write it), 10.1, true or
 * null authenticated as uid 0, i.e. root with the admin role. Such tokens
 * must be refused; an integer uid still works.
 */
#include "px_test.h"

#include <jwt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"
#include "server/server.h"

static const unsigned char key[] = "regression-key-0123456789abcdef01";

/* "Bearer <token>" for the claims, signed HS256 with key. */
static char *bearer(const char *claims) {
  jwt_t *jwt = NULL;
  assert_int_equal(jwt_new(&jwt), 0);
  assert_int_equal(jwt_add_grants_json(jwt, claims), 0);
  assert_int_equal(jwt_set_alg(jwt, JWT_ALG_HS256, key, (int)(sizeof key - 1)), 0);
  char *tok = jwt_encode_str(jwt);
  assert_non_null(tok);
  size_t n = strlen(tok) + 8;
  char *h = malloc(n);
  assert_non_null(h);
  snprintf(h, n, "Bearer %s", tok);
  free(tok);
  jwt_free(jwt);
  return h;
}

static void jwt_uid_must_be_an_integer(void **state) {
  (void)state;
  struct px_conf *conf = NULL;
  struct px_conf_diags cd = {0};
  assert_int_equal(px_conf_parse_string("NodeName=n1 CPUs=4\nPartitionName=p Nodes=ALL\n",
                                        "t.conf", &conf, &cd), 0);
  struct px_auth *a = NULL;
  assert_int_equal(px_auth_new(conf, key, sizeof key - 1, NULL, &a), 0);
  /* exp 4102444800 is 2100-01-01: never expired while this test lives. */
  static const char *const bad[] = {
      "{\"sub\":\"alice\",\"uid\":\"1001\",\"exp\":4102444800}",
      "{\"sub\":\"alice\",\"uid\":10.1,\"exp\":4102444800}",
      "{\"sub\":\"alice\",\"uid\":true,\"exp\":4102444800}",
      "{\"sub\":\"alice\",\"uid\":null,\"exp\":4102444800}",
  };
  struct px_ident who;
  char why[256];
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *h = bearer(bad[i]);
    assert_int_equal(px_auth_header(a, h, &who, why, sizeof why), PX_EAUTH);
    assert_string_equal(why, "token has an invalid 'uid' claim");
    assert_int_equal(who.roles, 0);
    free(h);
  }
  char *h = bearer("{\"sub\":\"alice\",\"uid\":1001,\"exp\":4102444800}");
  assert_int_equal(px_auth_header(a, h, &who, why, sizeof why), 0);
  assert_int_equal(who.uid, 1001);
  assert_string_equal(who.user, "alice");
  assert_int_equal(who.roles, 0); /* alice is neither uid 0 nor an administrator */
  free(h);
  px_auth_free(a);
  px_conf_free(conf);
  px_conf_diags_fini(&cd);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(jwt_uid_must_be_an_integer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
