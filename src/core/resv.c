/*
 * resv.c - advance reservations: nodes, or a GPU count of a partition, held
 * for a time window for one account, or for maintenance (nobody).
 *
 * A job may not start on a reserved node when its time limit reaches into
 * the window, unless the reservation is its account's (or an ancestor's).
 * When the placer's choice touches such a node, the reserved nodes are
 * hidden from the free-capacity index and the job is placed again, so it
 * runs elsewhere if it can. Backfill's plan blocks the window's cells on
 * those nodes, so reservations are planned around like any other. A GPU
 * count becomes whole nodes taken from the partition's end (highest node
 * index first: packing fills from the start), chosen when the reservation is
 * added. The list is short (administrators create them): checks are
 * O(reservations) per node looked at.
 */
#include <string.h>

#include "core/policy.h"

static bool has_node(const struct pxc_resv *r, uint32_t node) { return (r->nodes[node / 64] >> (node % 64)) & 1; }

static bool overlaps(const struct pxc_resv *r, const struct pxc_job *j, int64_t now) {
  int64_t end = j->time_limit_s >= INT64_MAX - now ? INT64_MAX : now + j->time_limit_s;
  return r->start_s < end && r->end_s > now;
}

static bool owner(const struct px_core *c, const struct pxc_resv *r, const struct pxc_job *j) {
  if (r->account == PX_NONE) return false;
  for (uint32_t a = j->assoc; a != PX_NONE; a = c->assoc[a].parent)
    if (a == r->account) return true;
  return false;
}

bool pxc_resv_allows(const struct px_core *c, const struct pxc_job *j, uint32_t node, int64_t now,
                     enum px_reason *why) {
  const struct pxc_policy *pol = c->pol;
  for (size_t i = 0; pol && i < pol->nresv_adv; i++) {
    const struct pxc_resv *r = &pol->resv[i];
    if (!has_node(r, node) || !overlaps(r, j, now) || owner(c, r, j)) continue;
    *why = r->account == PX_NONE ? PX_REASON_RESV_MAINT : PX_REASON_RESV_ACCOUNT;
    return false;
  }
  return true;
}

static size_t find(const struct px_core *c, uint32_t name);

bool pxc_resv_holds(const struct px_core *c, uint32_t name, uint32_t node) {
  size_t i = c->pol ? find(c, name) : SIZE_MAX;
  return i != SIZE_MAX && has_node(&c->pol->resv[i], node);
}

/* A job that asked for its reservation waits for the window to open, and
 * (like Slurm's) may not start once the rest of its limit would outlast it. */
static bool window_open(const struct px_core *c, const struct pxc_job *j, int64_t now) {
  size_t i = c->pol ? find(c, j->resv) : SIZE_MAX;
  if (i == SIZE_MAX) return false;
  const struct pxc_resv *r = &c->pol->resv[i];
  return r->start_s <= now && now < r->end_s;
}

int pxc_resv_check_use(const struct px_core *c, const struct pxc_job *j, const char *name, struct px_diag *d) {
  uint32_t id = pxc_lookup(c, name);
  size_t i = id == PX_NONE || !c->pol ? SIZE_MAX : find(c, id);
  if (i == SIZE_MAX) return px_diag_set(d, PX_ENOENT, -1, "reservation: no reservation named %.64s", name);
  if (!owner(c, &c->pol->resv[i], j))
    return px_diag_set(d, PX_EPERM, -1, "reservation: %.64s is %s", name,
                       c->pol->resv[i].account == PX_NONE ? "for maintenance: no job may use it"
                                                          : "another account's");
  return 0;
}

/* Hides (hide) or restores the usable nodes of reservations j may not use. */
static uint32_t hide(struct px_core *c, const struct pxc_job *j, int64_t now, uint32_t *list, uint32_t n,
                     bool on) {
  const struct pxc_policy *pol = c->pol;
  if (!on) {
    for (uint32_t i = 0; i < n; i++) {
      c->nodes[list[i]].drain = false;
      pxc_index_node_add(c, list[i]);
    }
    return 0;
  }
  for (size_t i = 0; i < pol->nresv_adv; i++) {
    const struct pxc_resv *r = &pol->resv[i];
    if (!overlaps(r, j, now) || owner(c, r, j)) continue;
    for (uint32_t k = 0; k < r->nlist; k++) {
      struct pxc_node *nd = &c->nodes[r->list[k]];
      if (!pxc_node_usable(nd)) continue;
      pxc_index_node_remove(c, r->list[k]);
      nd->drain = true; /* restored below, before anything else looks */
      list[n++] = r->list[k];
    }
  }
  return n;
}

enum px_reason pxc_resv_filter(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res,
                               int64_t now) {
  struct pxc_policy *pol = c->pol;
  if (j->resv != PX_NONE && !window_open(c, j, now)) return PX_REASON_RESERVATION;
  if (!pol || !pol->nresv_adv) return PX_REASON_NONE;
  enum px_reason why = PX_REASON_NONE;
  for (uint32_t i = 0; i < res->nnodes && why == PX_REASON_NONE; i++)
    pxc_resv_allows(c, j, res->nodes[i], now, &why);
  if (why == PX_REASON_NONE) return why;
  uint32_t n = hide(c, j, now, pol->hidden, 0, true);
  int rc = pxc_place_find(c, j, res);
  hide(c, j, now, pol->hidden, n, false);
  return rc == 0 ? PX_REASON_NONE : why;
}

void pxc_resv_plan(struct px_core *c, struct pxc_tl *tl) {
  const struct pxc_policy *pol = c->pol;
  for (size_t i = 0; i < pol->nresv_adv; i++) {
    const struct pxc_resv *r = &pol->resv[i];
    if (r->end_s <= tl->now) continue;
    uint32_t k0 = r->start_s <= tl->now ? 0 : pxc_tl_slot_ceil(tl, r->start_s);
    if (k0 > 0 && pxc_tl_slot_time(tl, k0) > r->start_s) k0--; /* the slot the window starts in */
    uint32_t k1 = pxc_tl_slot_ceil(tl, r->end_s);
    for (uint32_t k = 0; k < r->nlist; k++) pxc_tl_block(c, tl, r->list[k], k0, k1);
  }
}

/* ---- events ------------------------------------------------------------- */


static size_t find(const struct px_core *c, uint32_t name) {
  for (size_t i = 0; i < c->pol->nresv_adv; i++)
    if (c->pol->resv[i].name == name) return i;
  return SIZE_MAX;
}

/* Resolves the node list (given, or whole nodes for a GPU count). */
static int resolve_nodes(struct px_core *c, const struct px_resv_spec *s, struct pxc_resv *r,
                         struct px_diag *d) {
  if (s->nodes) {
    for (uint32_t i = 0; i < s->nnodes; i++) {
      if (s->nodes[i] >= c->nnodes) return px_diag_set(d, PX_ENOENT, -1, "nodes: no node %u", s->nodes[i]);
      if (!has_node(r, s->nodes[i])) {
        r->nodes[s->nodes[i] / 64] |= 1ULL << (s->nodes[i] % 64);
        r->list[r->nlist++] = s->nodes[i];
      }
    }
    return r->nlist ? 0 : px_diag_set(d, PX_EINVAL, -1, "nodes: empty");
  }
  if (s->partition >= c->nparts) return px_diag_set(d, PX_ENOENT, -1, "partition: no partition %u", s->partition);
  if (!s->ngpus) return px_diag_set(d, PX_EINVAL, -1, "ngpus: give nodes or a GPU count");
  uint64_t got = 0;
  for (uint32_t node = c->nnodes; node-- > 0 && got < s->ngpus;) {
    if (!pxc_node_in_part(c, node, s->partition) || !c->nodes[node].ngpu) continue;
    r->nodes[node / 64] |= 1ULL << (node % 64);
    r->list[r->nlist++] = node;
    got += c->nodes[node].ngpu;
  }
  if (got < s->ngpus)
    return px_diag_set(d, PX_ERANGE, -1, "ngpus: partition %s has only %llu GPUs",
                       pxc_str(c, c->parts[s->partition].name), (unsigned long long)got);
  return 0;
}

int pxc_resv_add(struct px_core *c, const struct px_resv_spec *s, int64_t now, struct px_diag *d) {
  struct pxc_policy *pol = c->pol;
  (void)now;
  px_diag_clear(d);
  if (!s->name || !*s->name) return px_diag_set(d, PX_EINVAL, -1, "name: missing");
  if (s->end_s <= s->start_s) return px_diag_set(d, PX_EINVAL, -1, "end: not after start");
  if (!s->maintenance && (s->account == PX_NONE || s->account >= c->nassoc))
    return px_diag_set(d, PX_EINVAL, -1, "account: give an account or maintenance");
  uint32_t name = pxc_lookup(c, s->name);
  if (name != PX_NONE && find(c, name) != SIZE_MAX)
    return px_diag_set(d, PX_EEXIST, -1, "name: reservation %s exists", s->name);
  struct pxc_resv r = {.start_s = s->start_s, .end_s = s->end_s,
                       .account = s->maintenance ? PX_NONE : s->account};
  r.nodes = pxc_calloc(c, c->nnodes / 64 + 1, sizeof *r.nodes);
  r.list = pxc_calloc(c, c->nnodes + 1, sizeof *r.list);
  int rc = PX_ENOMEM;
  if (!r.nodes || !r.list || PXC_GROW(c, pol->resv, &pol->resv_cap, pol->nresv_adv + 1) ||
      pxc_intern(c, s->name, &r.name))
    goto fail;
  if ((rc = resolve_nodes(c, s, &r, d))) goto fail;
  pol->resv[pol->nresv_adv++] = r;
  return 0;
fail:
  if (rc == PX_ENOMEM) px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  pxc_free(c, r.nodes);
  pxc_free(c, r.list);
  return rc;
}

/* A live job (pending or running) that asked for reservation id, or NULL. */
static const struct pxc_job *resv_user(const struct px_core *c, uint32_t id) {
  for (size_t k = 0; k < c->njob_slots; k++)
    if (c->jobs[k].state != 0xff && c->jobs[k].resv == id) return &c->jobs[k];
  return NULL;
}

int pxc_resv_remove(struct px_core *c, const char *name, int64_t now, struct px_diag *d) {
  struct pxc_policy *pol = c->pol;
  (void)now;
  px_diag_clear(d);
  uint32_t id = name ? pxc_lookup(c, name) : PX_NONE;
  size_t i = id == PX_NONE ? SIZE_MAX : find(c, id);
  if (i == SIZE_MAX) return px_diag_set(d, PX_ENOENT, -1, "name: no reservation %s", name ? name : "");
  const struct pxc_job *user = resv_user(c, id);
  if (user) /* its jobs could never run: they go first (scancel), as Slurm refuses a busy reservation */
    return px_diag_set(d, PX_ESTATE, -1, "name: reservation %s is in use by job %llu", name,
                       (unsigned long long)user->id);
  pxc_free(c, pol->resv[i].nodes);
  pxc_free(c, pol->resv[i].list);
  memmove(&pol->resv[i], &pol->resv[i + 1], (pol->nresv_adv - i - 1) * sizeof *pol->resv);
  pol->nresv_adv--;
  return 0;
}
