/*
 * servers.h - the controllers an agent knows (issue 16): `--server` takes a
 * comma-separated list, as Slurm's nodes know every SlurmctldHost. An
 * agent talks to one at a time; when it cannot reach it, or it is a
 * standby (503 with X-Phalanx-Leader), or does not answer in time (a
 * paused or hung leader), the agent moves to the leader it names, or else
 * to the next in the list. Which one is current is shared by the whole
 * process, so that its long polls leave a controller that its other
 * requests have left (servers.h users abort a transfer whose controller is
 * no longer current).
 *
 * Fencing: every answer of a controller with --ha carries its term
 * (X-Phalanx-Term). The agent remembers the highest term it has heard, in
 * the whole process (one agent process serves one cluster), and refuses
 * orders of a lower term: a deposed leader that wakes up cannot start a
 * job on a node that has already heard its successor.
 */
#ifndef PX_AGENT_SERVERS_H
#define PX_AGENT_SERVERS_H

#include <stddef.h>

#include <stdbool.h>
#include <stdint.h>

#define PX_SERVERS_MAX 8
/* How soon an agent asks again after a standby's 503 (no doubling: the
 * takeover it waits for ends within a lease). */
#define PX_TAKEOVER_RETRY_MS 250

struct px_servers {
  char base[PX_SERVERS_MAX][256];
  int n;
};

/* "http://a:1,http://b:2" (or one address). PX_EINVAL naming the problem in
 * why when empty, too many or too long. */
int px_servers_parse(struct px_servers *l, const char *list, char *why, size_t size);
/* The index of the current controller, and its address. */
int px_servers_cur(const struct px_servers *l);
const char *px_servers_base(const struct px_servers *l);
/* Controller `from` failed: move to hint (the leader a standby named) when
 * it is in the list, else to the next; nothing when another request has
 * moved away from `from` already. */
void px_servers_next(const struct px_servers *l, int from, const char *hint);

/* Records a term heard in an answer (0: none, a controller without --ha);
 * false when it is lower than one heard before (the answer must be refused). */
bool px_servers_term_ok(uint64_t term);
uint64_t px_servers_term(void);

/* The headers of an answer that matter here (CURLOPT_HEADERFUNCTION
 * px_servers_header, CURLOPT_HEADERDATA a struct px_ha_hdr). */
struct px_ha_hdr {
  uint64_t term;
  char leader[256];
};
size_t px_servers_header(char *data, size_t size, size_t n, void *hdr);

#endif
