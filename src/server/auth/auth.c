/*
 * auth.c - who is calling (auth/auth.h). Three ways in:
 *   - the Unix socket: the kernel says who is at the other end (SO_PEERCRED),
 *     nothing to forge;
 *   - "Authorization: MUNGE <credential>" on TCP: munged vouches for the uid;
 *     an agent puts its node name in the credential's payload, which binds
 *     the credential to that node (a root credential without a payload is an
 *     administrator, not an agent);
 *   - "Authorization: Bearer <JWT>" on TCP: an HS256 token minted by
 *     `phalanx token` with the server's key; claims sub (user), uid, exp and,
 *     for agent tokens, node.
 * Roles come from the configuration: root and Administrators= are admins,
 * Operators= are operators, account coordinators come from the accounts.
 */
#include <errno.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "server/auth/auth.h"
#ifdef PX_HAVE_JWT
#include <jansson.h>
#include <jwt.h>
#endif
#ifdef PX_HAVE_MUNGE
#include <munge.h>
#endif

/* uid -> user name, remembered for NAME_TTL_NS: getpwuid_r reads
 * /etc/nsswitch.conf and /etc/passwd (six system calls) on every call, and
 * every request on the Unix socket needs the caller's name. A renamed user
 * shows under the new name within NAME_TTL_NS. */
#define NAME_SLOTS 32
#define NAME_TTL_NS 30000000000LL
struct name_cache {
  pthread_mutex_t lock;
  struct {
    uint32_t uid;
    int64_t at_ns; /* CLOCK_MONOTONIC when looked up; 0: empty */
    char name[64];
  } e[NAME_SLOTS];
  unsigned next;   /* the slot a new name replaces (round robin) */
};

struct px_auth {
  const struct px_conf *conf;
  unsigned char *jwt_key;
  size_t jwt_key_len;
  char *munge_socket;
  struct name_cache *names; /* behind a pointer: lookups through a const px_auth fill it */
};

int px_auth_new(const struct px_conf *conf, const unsigned char *jwt_key, size_t jwt_key_len,
                const char *munge_socket, struct px_auth **out) {
  struct px_auth *a = calloc(1, sizeof *a);
  if (!a) return PX_ENOMEM;
  a->conf = conf;
  if (!(a->names = calloc(1, sizeof *a->names))) goto fail;
  pthread_mutex_init(&a->names->lock, NULL);
  if (jwt_key && jwt_key_len) {
    if (!(a->jwt_key = malloc(jwt_key_len))) goto fail;
    memcpy(a->jwt_key, jwt_key, jwt_key_len);
    a->jwt_key_len = jwt_key_len;
  }
  if (munge_socket && !(a->munge_socket = strdup(munge_socket))) goto fail;
  *out = a;
  return 0;
fail:
  px_auth_free(a);
  return PX_ENOMEM;
}

void px_auth_free(struct px_auth *a) {
  if (!a) return;
  free(a->jwt_key);
  free(a->munge_socket);
  if (a->names) pthread_mutex_destroy(&a->names->lock);
  free(a->names);
  free(a);
}

static int64_t mono_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static bool cached_name(struct name_cache *c, uint32_t uid, int64_t now, char *out, size_t len) {
  bool hit = false;
  pthread_mutex_lock(&c->lock);
  for (unsigned i = 0; !hit && i < NAME_SLOTS; i++) {
    if (!c->e[i].at_ns || c->e[i].uid != uid || now - c->e[i].at_ns > NAME_TTL_NS) continue;
    snprintf(out, len, "%s", c->e[i].name);
    hit = true;
  }
  pthread_mutex_unlock(&c->lock);
  return hit;
}

static void remember_name(struct name_cache *c, uint32_t uid, int64_t now, const char *name) {
  pthread_mutex_lock(&c->lock);
  unsigned i = 0;
  while (i < NAME_SLOTS && c->e[i].at_ns && c->e[i].uid != uid) i++;
  if (i == NAME_SLOTS) i = c->next++ % NAME_SLOTS;
  c->e[i].uid = uid;
  c->e[i].at_ns = now;
  snprintf(c->e[i].name, sizeof c->e[i].name, "%s", name);
  pthread_mutex_unlock(&c->lock);
}

static void uid_name(const struct px_auth *a, uint32_t uid, char *out, size_t len) {
  int64_t now = mono_ns();
  if (cached_name(a->names, uid, now, out, len)) return;
  struct passwd pw, *res = NULL;
  char buf[1024];
  if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res)
    snprintf(out, len, "%s", pw.pw_name);
  else
    snprintf(out, len, "%u", uid); /* unknown to this host: the number stands in */
  remember_name(a->names, uid, now, out);
}

static bool in_list(const char *name, const char **list, uint32_t n) {
  for (uint32_t i = 0; i < n; i++)
    if (list[i] && strcmp(list[i], name) == 0) return true;
  return false;
}

void px_auth_roles(const struct px_auth *a, struct px_ident *who) {
  const struct px_conf_phalanx *p = &a->conf->phalanx;
  who->roles = 0;
  if (who->uid == 0 || in_list(who->user, p->administrators, p->nadministrators))
    who->roles = PX_ROLE_ADMIN | PX_ROLE_OPERATOR;
  else if (in_list(who->user, p->operators, p->noperators))
    who->roles = PX_ROLE_OPERATOR;
}

bool px_auth_is_coordinator(const struct px_auth *a, const struct px_ident *who,
                            const char *account) {
  const struct px_conf *c = a->conf;
  if (!account) return false;
  uint32_t i = 0;
  while (i < c->naccounts &&
         (c->accounts[i].is_user || c->accounts[i].deleted || strcmp(c->accounts[i].name, account)))
    i++;
  /* A coordinator of an account also coordinates its sub-accounts. */
  for (uint32_t hops = 0; i < c->naccounts && hops < c->naccounts; hops++) {
    if (in_list(who->user, c->accounts[i].coordinators, c->accounts[i].ncoordinators))
      return true;
    i = c->accounts[i].parent;
  }
  return false;
}

int px_auth_peercred(const struct px_auth *a, int fd, struct px_ident *who) {
  struct ucred cred;
  socklen_t len = sizeof cred;
  memset(who, 0, sizeof *who);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return PX_EAUTH;
  who->method = PX_AUTH_PEERCRED;
  who->uid = cred.uid;
  who->gid = cred.gid;
  uid_name(a, cred.uid, who->user, sizeof who->user);
  px_auth_roles(a, who);
  return 0;
}

#ifdef PX_HAVE_JWT
/* The uid claim, or -1 when missing or not a JSON integer. libjwt's
 * jwt_get_grant_int() reads a string, real, bool or null claim as 0 without
 * setting errno, which would make {"uid":"1001"} root: read its JSON. */
static long claim_uid(jwt_t *jwt) {
  char *text = jwt_get_grants_json(jwt, "uid");
  json_t *v = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
  long uid = json_is_integer(v) ? (long)json_integer_value(v) : -1;
  json_decref(v);
  free(text);
  return uid;
}

static int auth_jwt(const struct px_auth *a, const char *token, struct px_ident *who, char *why,
                    size_t whylen) {
  jwt_t *jwt = NULL;
  if (!a->jwt_key) return snprintf(why, whylen, "JWT authentication is not enabled"), PX_EAUTH;
  if (jwt_decode(&jwt, token, a->jwt_key, (int)a->jwt_key_len) != 0 || !jwt) {
    snprintf(why, whylen, "invalid token (malformed or bad signature)");
    return PX_EAUTH;
  }
  int rc = PX_EAUTH;
  const char *sub = jwt_get_grant(jwt, "sub"), *node = jwt_get_grant(jwt, "node");
  long exp = jwt_get_grant_int(jwt, "exp");
  long uid = claim_uid(jwt); /* a missing or non-integer uid must not read as 0 (root) */
  if (jwt_get_alg(jwt) != JWT_ALG_HS256)
    snprintf(why, whylen, "token algorithm must be HS256");
  else if (!sub || !*sub || strlen(sub) >= sizeof who->user)
    snprintf(why, whylen, "token has no valid 'sub' claim");
  else if (exp <= 0 || exp < (long)time(NULL))
    snprintf(why, whylen, "token expired or has no 'exp' claim");
  else if (uid < 0 || uid > (long)UINT32_MAX - 1)
    snprintf(why, whylen, "token has an invalid 'uid' claim");
  else {
    who->method = PX_AUTH_JWT;
    who->uid = (uint32_t)uid;
    who->gid = (uint32_t)uid;
    snprintf(who->user, sizeof who->user, "%s", sub);
    snprintf(who->node, sizeof who->node, "%s", node ? node : "");
    rc = 0;
  }
  jwt_free(jwt);
  return rc;
}

char *px_auth_mint_jwt(const unsigned char *key, size_t key_len, const char *user, uint32_t uid,
                       const char *node, int64_t now, int64_t lifetime_s) {
  jwt_t *jwt = NULL;
  char *out = NULL;
  if (jwt_new(&jwt)) return NULL;
  if (!jwt_add_grant(jwt, "sub", user) && !jwt_add_grant_int(jwt, "uid", uid) &&
      !jwt_add_grant_int(jwt, "iat", (long)now) &&
      !jwt_add_grant_int(jwt, "exp", (long)(now + lifetime_s)) &&
      (!node || !jwt_add_grant(jwt, "node", node)) &&
      !jwt_set_alg(jwt, JWT_ALG_HS256, key, (int)key_len))
    out = jwt_encode_str(jwt);
  jwt_free(jwt);
  return out;
}
#else
static int auth_jwt(const struct px_auth *a, const char *token, struct px_ident *who, char *why,
                    size_t whylen) {
  snprintf(why, whylen, "built without JWT support (libjwt)");
  return PX_EAUTH;
}
char *px_auth_mint_jwt(const unsigned char *key, size_t key_len, const char *user, uint32_t uid,
                       const char *node, int64_t now, int64_t lifetime_s) {
  return NULL;
}
#endif

#ifdef PX_HAVE_MUNGE
static int auth_munge(const struct px_auth *a, const char *cred, struct px_ident *who, char *why,
                      size_t whylen) {
  munge_ctx_t ctx = munge_ctx_create(); /* one per call: contexts are not thread-safe */
  void *payload = NULL;
  int len = 0;
  uid_t uid;
  gid_t gid;
  if (!ctx) return PX_ENOMEM;
  if (a->munge_socket) munge_ctx_set(ctx, MUNGE_OPT_SOCKET, a->munge_socket);
  munge_err_t e = munge_decode(cred, ctx, &payload, &len, &uid, &gid);
  int rc = PX_EAUTH;
  if (e != EMUNGE_SUCCESS) {
    snprintf(why, whylen, "MUNGE credential refused: %s", munge_strerror(e));
  } else if (len >= (int)sizeof who->node) {
    snprintf(why, whylen, "MUNGE payload too long for a node name");
  } else {
    who->method = PX_AUTH_MUNGE;
    who->uid = uid;
    who->gid = gid;
    uid_name(a, uid, who->user, sizeof who->user);
    if (len > 0) memcpy(who->node, payload, (size_t)len);
    who->node[len > 0 ? len : 0] = '\0';
    rc = 0;
  }
  free(payload);
  munge_ctx_destroy(ctx);
  return rc;
}
#else
static int auth_munge(const struct px_auth *a, const char *cred, struct px_ident *who, char *why,
                      size_t whylen) {
  snprintf(why, whylen, "built without MUNGE support (libmunge)");
  return PX_EAUTH;
}
#endif

int px_auth_header(const struct px_auth *a, const char *header, struct px_ident *who, char *why,
                   size_t whylen) {
  memset(who, 0, sizeof *who);
  int rc;
  if (!header || !*header) {
    snprintf(why, whylen, "authentication required (Authorization: Bearer or MUNGE)");
    return PX_EAUTH;
  }
  if (strncmp(header, "Bearer ", 7) == 0)
    rc = auth_jwt(a, header + 7, who, why, whylen);
  else if (strncmp(header, "MUNGE ", 6) == 0)
    rc = auth_munge(a, header + 6, who, why, whylen);
  else {
    snprintf(why, whylen, "unknown authorization scheme (use Bearer or MUNGE)");
    return PX_EAUTH;
  }
  if (rc == 0) px_auth_roles(a, who);
  return rc;
}
