/*
 * auth.h - who is calling (auth.c): the identity of a request and the
 * roles the configuration gives it. HTTP authenticates with it (SO_PEERCRED
 * on the Unix socket, MUNGE or a JWT on TCP); the request handlers on the
 * main thread authorise with it (an account's coordinators). Below every
 * other group of the server: it includes none of them.
 */
#ifndef PX_SERVER_AUTH_AUTH_H
#define PX_SERVER_AUTH_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "conf/conf.h"

/* ---- identity and roles (auth.c) ---- */

enum px_auth_method { PX_AUTH_NONE, PX_AUTH_PEERCRED, PX_AUTH_MUNGE, PX_AUTH_JWT };

#define PX_ROLE_OPERATOR 1u
#define PX_ROLE_ADMIN 2u

struct px_ident {
  enum px_auth_method method;
  uint32_t uid, gid;
  char user[64];
  char node[64];   /* the node an agent credential speaks for ("" = none) */
  unsigned roles;  /* PX_ROLE_*; an admin is also an operator */
};

struct px_auth;
/* jwt_key: HS256 secret (NULL: JWT disabled); munge_socket NULL: default. */
int px_auth_new(const struct px_conf *conf, const unsigned char *jwt_key, size_t jwt_key_len,
                const char *munge_socket, struct px_auth **out);
void px_auth_free(struct px_auth *a);
/* Unix socket: who is at the other end of fd. */
int px_auth_peercred(const struct px_auth *a, int fd, struct px_ident *who);
/* TCP: the Authorization header ("Bearer JWT" or "MUNGE CRED"). PX_EAUTH with
 * why filled on failure (missing, malformed, expired, bad signature). */
int px_auth_header(const struct px_auth *a, const char *header, struct px_ident *who,
                   char *why, size_t whylen);
/* Fills roles from the configuration (root and Administrators= are admins). */
void px_auth_roles(const struct px_auth *a, struct px_ident *who);
/* Is who a coordinator of account (or of one of its parents)? Reads the
 * accounts tree, which changes online: off the main thread, hold the
 * server's acct_lock (tables.h). */
bool px_auth_is_coordinator(const struct px_auth *a, const struct px_ident *who,
                            const char *account);
/* Mints an HS256 token for user (and node for agents, may be NULL) valid for
 * lifetime_s. malloc'd string or NULL. */
char *px_auth_mint_jwt(const unsigned char *key, size_t key_len, const char *user, uint32_t uid,
                       const char *node, int64_t now, int64_t lifetime_s);

#endif
