/* since.h - since when an agent's state holds every job it was given (since.c). */
#ifndef PX_AGENT_SINCE_H
#define PX_AGENT_SINCE_H

#include <stdbool.h>
#include <stdint.h>

/* The time recorded in DIR/since (written now when absent); 0 when it
 * cannot be kept. */
int64_t px_agent_since(const char *dir);

#endif
