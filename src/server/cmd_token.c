/*
 * cmd_token.c - `phalanx token`: mint an HS256 JWT with the server's key
 * (<state dir>/jwt.key, readable by the administrator only). Clients send it
 * as "Authorization: Bearer TOKEN"; agent tokens carry --node.
 */
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "server/server.h"

static void usage(void) {
  fprintf(stderr, "usage: phalanx server token --state-dir DIR --user NAME [--uid N] [--node NODE]\n"
                  "                            [--lifetime SECONDS]   (default 86400)\n");
}

int px_cmd_token(int argc, char **argv) {
  static const struct option longopts[] = {
      {"state-dir", required_argument, 0, 'd'}, {"user", required_argument, 0, 'u'},
      {"uid", required_argument, 0, 'i'},       {"node", required_argument, 0, 'n'},
      {"lifetime", required_argument, 0, 'l'},  {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  const char *dir = NULL, *user = NULL, *node = NULL;
  long long uid = -1, life = 86400;
  char *end;
  int ch;
  optind = 1;
  while ((ch = getopt_long(argc, argv, "d:u:i:n:l:h", longopts, NULL)) != -1) {
    switch (ch) {
      case 'd': dir = optarg; break;
      case 'u': user = optarg; break;
      case 'n': node = optarg; break;
      case 'i':
        uid = strtoll(optarg, &end, 10);
        if (*end || uid < 0 || uid >= UINT32_MAX) return usage(), 2;
        break;
      case 'l':
        life = strtoll(optarg, &end, 10);
        if (*end || life <= 0) return usage(), 2;
        break;
      default: usage(); return ch == 'h' ? 0 : 2;
    }
  }
  if (!dir || !user) return usage(), 2;
  if (uid < 0) {
    struct passwd *pw = getpwnam(user);
    if (!pw) {
      fprintf(stderr, "phalanx token: unknown user %s (give --uid)\n", user);
      return 1;
    }
    uid = pw->pw_uid;
  }
  unsigned char key[256];
  size_t len = sizeof key;
  if (px_server_jwt_key(dir, false, key, &len)) {
    fprintf(stderr, "phalanx token: cannot read %s/jwt.key (start the server once)\n", dir);
    return 1;
  }
  char *tok = px_auth_mint_jwt(key, len, user, (uint32_t)uid, node, time(NULL), life);
  if (!tok) {
    fprintf(stderr, "phalanx token: cannot mint a token\n");
    return 1;
  }
  printf("%s\n", tok);
  free(tok);
  return 0;
}
