/* conf.c - life cycle of struct px_conf. The parser lives in parse*.c. */
#include "conf/conf.h"

#include <stdlib.h>

void px_conf_free(struct px_conf *c) {
  if (!c) return;
  px_arena_fini(&c->arena);
  free(c);
}
