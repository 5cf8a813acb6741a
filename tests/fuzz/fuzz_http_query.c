/*
 * fuzz_http_query.c - libFuzzer target for the server's request parsers
 * that are pure functions: the route matcher (px_api_route: method and path
 * into an endpoint and its {id} argument) and the Authorization header
 * (px_auth_header with a JWT key; query strings themselves are split by
 * libmicrohttpd, not by us). The first input byte picks the mode:
 *   0: "METHOD URL"  - a route found has that method and its pattern with
 *                      {} replaced by the argument is exactly the URL;
 *   1: a raw header  - refused with a reason, the identity left zeroed,
 *                      unless it is a valid token (it never is: no key);
 *   2: JSON claims   - signed with the server's key so that the claim
 *                      checks themselves are reached: an accepted token
 *                      names a user that fits, a uid in range, an exp not
 *                      past, and the roles the configuration gives.
 * MUNGE headers are skipped: decoding them needs the munged daemon.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "conf/conf.h"
#include "fuzz_eq.h"
#include "server/api.h"

#ifdef PX_HAVE_JWT
#include <jwt.h>
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const unsigned char key[] = "fuzz-key-0123456789abcdef0123456789";
static struct px_conf *conf;
static struct px_auth *auth;

static void setup(void) {
  if (auth) return;
  static const char text[] = "NodeName=n1 CPUs=4\nPartitionName=p Nodes=ALL Default=YES\n"
                             "Operators=op\nAdministrators=boss\n";
  struct px_conf_diags d = {0};
  FUZZ_CHECK(px_conf_parse_string(text, "fuzz.conf", &conf, &d) == 0);
  px_conf_diags_fini(&d);
  FUZZ_CHECK(px_auth_new(conf, key, sizeof key - 1, "/nonexistent/munge.socket", &auth) == 0);
}

static void fuzz_route(char *text) {
  char *sp = strchr(text, ' ');
  if (!sp) return;
  *sp = '\0';
  const char *method = text, *url = sp + 1;
  struct px_api_call c;
  memset(&c, 0, sizeof c);
  const struct px_route *r = px_api_route(method, url, &c);
  if (!r) return;
  FUZZ_CHECK(strcmp(r->method, method) == 0); /* method_mismatch: meaningful only on NULL */
  const char *hole = strstr(r->pattern, "{}");
  if (!hole) {
    FUZZ_CHECK(strcmp(r->pattern, url) == 0);
    return;
  }
  FUZZ_CHECK(c.arg[0] && !strchr(c.arg, '/') && strlen(c.arg) < sizeof c.arg);
  char rebuilt[512];
  snprintf(rebuilt, sizeof rebuilt, "%.*s%s%s", (int)(hole - r->pattern), r->pattern, c.arg,
           hole + 2);
  FUZZ_CHECK(strcmp(rebuilt, url) == 0);
}

static void check_auth(const char *header, const json_t *claims) {
  struct px_ident who, zero;
  char why[256] = "";
  memset(&zero, 0, sizeof zero);
  int rc = px_auth_header(auth, header, &who, why, sizeof why);
  if (rc) {
    FUZZ_CHECK(rc < 0 && why[0] && memcmp(&who, &zero, sizeof who) == 0);
    return;
  }
  FUZZ_CHECK(claims != NULL); /* a forged signature must never pass */
  const char *sub = json_string_value(json_object_get(claims, "sub"));
  json_t *uid = json_object_get(claims, "uid"), *exp = json_object_get(claims, "exp");
  FUZZ_CHECK(sub && strcmp(sub, who.user) == 0 && strlen(who.user) < sizeof who.user);
  FUZZ_CHECK(json_is_integer(uid) && json_integer_value(uid) == (json_int_t)who.uid);
  FUZZ_CHECK(json_is_integer(exp) && json_integer_value(exp) >= (json_int_t)time(NULL) - 5);
  bool admin = who.uid == 0 || strcmp(who.user, "boss") == 0;
  FUZZ_CHECK(admin == ((who.roles & PX_ROLE_ADMIN) != 0));
}

#ifdef PX_HAVE_JWT
static void fuzz_claims(const char *text) {
  json_t *claims = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
  jwt_t *jwt = NULL;
  char *tok = NULL;
  if (!json_is_object(claims) || jwt_new(&jwt) || jwt_add_grants_json(jwt, text) ||
      jwt_set_alg(jwt, JWT_ALG_HS256, key, (int)(sizeof key - 1)) || !(tok = jwt_encode_str(jwt)))
    goto out;
  size_t n = strlen(tok) + 8;
  char *header = malloc(n);
  if (header) {
    snprintf(header, n, "Bearer %s", tok);
    check_auth(header, claims);
    free(header);
  }
out:
  free(tok);
  jwt_free(jwt);
  json_decref(claims);
}
#else
static void fuzz_claims(const char *text) { (void)text; }
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  setup();
  char *text = fuzz_text(data + 1, size - 1);
  if (!text) return 0;
  switch (data[0] % 3) {
    case 0: fuzz_route(text); break;
    case 1:
      if (strncmp(text, "MUNGE ", 6) != 0) check_auth(text, NULL);
      break;
    default: fuzz_claims(text); break;
  }
  free(text);
  return 0;
}
