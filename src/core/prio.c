/*
 * prio.c - the order stages and the stage table.
 *
 * multifactor: Slurm's formula (docs/scheduling.md):
 *   priority = Wage*age + Wfs*fairshare + Wsize*jobsize + Wpart*partition
 *            + Wqos*qos + Wtres*tres - nice,  truncated, clamped to [1, 2^32-1]
 * with every factor in [0,1]: age = eligible time / PriorityMaxAge (capped),
 * fair share = the Fair Tree rank factor of the job's association, job size
 * = (nodes/cluster nodes + CPUs/cluster CPUs) / 2 (1 minus that with
 * PriorityFavorSmall), partition = PriorityJobFactor / the largest, QoS =
 * Priority / the largest, TRES = the job's GPUs / its partition's GPUs. The
 * queue is sorted by partition PriorityTier, then priority, then submit time,
 * then job id. fifo: tier, submit time, job id. las: below.
 *
 * Also the default reserve stage ("block": a job that cannot be placed holds
 * back its partition, as Slurm's builtin scheduler does) and the empty
 * victims stage; backfill and preemption (issue 4) replace them.
 */
#include <math.h>

#include "core/core_int.h"

void pxc_prio_factors(const struct px_core *c, const struct pxc_job *j, int64_t now,
                      struct px_prio_factors *f) {
  const struct px_conf_sched *w = &c->sched;
  const struct pxc_part *part = &c->parts[j->part];
  *f = (struct px_prio_factors){0};
  if (j->eligible_s && now > j->eligible_s)
    f->age = w->max_age_s > 0 ? fmin(1.0, (double)(now - j->eligible_s) / (double)w->max_age_s) : 1.0;
  f->fairshare = c->assoc[j->assoc].fairshare;
  double nodes = j->shape.per_node_max == 1 ? j->shape.nmin : 1;
  double cpus = (double)pxc_job_ncpu(j);
  double js = 0.5 * (nodes / (double)(c->total_nodes ? c->total_nodes : 1) +
                     cpus / (double)(c->total_cpus ? c->total_cpus : 1));
  js = fmin(1.0, fmax(0.0, js));
  f->jobsize = w->favor_small ? 1.0 - js : js;
  f->partition = c->max_part_factor ? (double)part->job_factor / c->max_part_factor : 0;
  f->qos = c->max_qos_prio ? (double)c->qos[j->qos].priority / c->max_qos_prio : 0;
  f->tres = part->ngpu ? fmin(1.0, (double)pxc_job_ngpu(j) / part->ngpu) : 0;
  f->nice = j->nice;
  f->admin_set = j->flags & PXC_F_ADMIN_PRIO;
  f->w_age = w->weight_age * f->age;
  f->w_fairshare = w->weight_fairshare * f->fairshare;
  f->w_jobsize = w->weight_jobsize * f->jobsize;
  f->w_partition = w->weight_partition * f->partition;
  f->w_qos = w->weight_qos * f->qos;
  f->w_tres = w->weight_tres * f->tres;
  double sum = f->w_age + f->w_fairshare + f->w_jobsize + f->w_partition + f->w_qos + f->w_tres -
               (double)j->nice;
  sum = floor(sum);
  uint32_t p = sum < 1 ? 1 : sum > (double)UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
  if (f->admin_set) p = j->admin_priority;
  if (j->flags & (PXC_F_HELD_USER | PXC_F_HELD_ADMIN)) p = 0;
  f->priority = p;
}

static uint64_t tier_key(const struct px_core *c, const struct pxc_job *j) { return pxc_tier_key(c, j->part); }

void pxc_prio_in_of(const struct pxc_job *j, struct pxc_prio_in *in) {
  *in = (struct pxc_prio_in){j->eligible_s, j->assoc, j->admin_priority, j->nice, j->part, j->qos, j->flags};
}

static uint32_t prio_value(const struct px_core *c, const struct pxc_job *j, int64_t now) {
  const struct px_conf_sched *w = &c->sched;
  if (j->flags & (PXC_F_HELD_USER | PXC_F_HELD_ADMIN)) return 0;
  if (j->flags & PXC_F_ADMIN_PRIO) return j->admin_priority;
  if (w->weight_jobsize || w->weight_tres) {
    struct px_prio_factors f;
    pxc_prio_factors(c, j, now, &f);
    return f.priority;
  }
  struct pxc_prio_in in;
  pxc_prio_in_of(j, &in);
  return pxc_prio_simple(c, &in, now);
}

static void multifactor_key(struct px_core *c, struct pxc_job *j, int64_t now, uint64_t *k1, uint64_t *k2) {
  uint32_t prio = prio_value(c, j, now);
  j->priority = prio;
  *k1 = tier_key(c, j) | (UINT32_MAX - prio);
  *k2 = (uint64_t)j->submit_s ^ (1ULL << 63);
}

static void fifo_key(struct px_core *c, struct pxc_job *j, int64_t now, uint64_t *k1, uint64_t *k2) {
  /* shown only (sprio, the job view), and read by a victims stage's choice;
   * with lazy reasons and no victims stage (the simulator) nobody reads it */
  if (!c->lazy_s || c->victims->find) j->priority = prio_value(c, j, now);
  *k1 = tier_key(c, j);
  *k2 = (uint64_t)j->submit_s ^ (1ULL << 63);
}

/*
 * las: Tiresias' discretised two-dimensional least-attained-service order
 * (Gu et al., NSDI 2019). A job's attained service is GPUs x seconds it has
 * run (earlier runs before a requeue plus the current one; a fraction of a
 * shared GPU counts its share: 0.5 GPU for an hour is 1,800 GPU-s); K thresholds
 * cut it into K + 1 queues, queue 0 first; within a queue, FIFO by submit
 * time. A running job that crosses a threshold is demoted and, with a
 * PreemptMode, may be preempted by a job of a higher queue (preempt.c).
 *
 * Starvation (LasStarveLimit=F, Tiresias' STARVELIMIT): a pending job that
 * has waited since it last entered the queue (its eligible time: the
 * submit, or the requeue) at least F times its attained run time (attained
 * GPU-s / GPUs: the time it ran, so that a gang is not promoted later than
 * a single-GPU job that ran as long) goes back to queue 0: its queue counts
 * service from now (las_base_gpu_s), and it is demoted again as it runs.
 * The wait it needs counts all its runs, so a job preempted again and again
 * waits longer each time before it may preempt back: a gang demoted within
 * seconds of a promotion cannot ping-pong with the jobs it displaced. Jobs
 * that never ran are in queue 0 already.
 */
static const int64_t las_default_gpu_s[] = {3600, 36000}; /* 1 and 10 GPU-hours */

double pxc_las_gpus(const struct pxc_job *j) { return (double)pxc_job_cgpu(j) / PXC_SHARE_UNITS; }

/* The GPUs a run time is measured in: a job without GPUs counts as one. */
static double ran_gpus(const struct pxc_job *j) {
  double g = pxc_las_gpus(j);
  return g > 0 ? g : 1;
}

uint32_t pxc_las_queue(const struct px_core *c, const struct pxc_job *j, int64_t now) {
  const int64_t *t = c->sched.las_nthresholds ? c->sched.las_thresholds_gpu_s : las_default_gpu_s;
  uint32_t n = c->sched.las_nthresholds ? c->sched.las_nthresholds : 2;
  double s = j->attained_gpu_s - j->las_base_gpu_s;
  /* past the last threshold already: the current run (>= 0) adds nothing to
   * the answer, and reading its GPUs walks its allocation */
  if (s >= (double)t[n - 1]) return n;
  if (j->state == PX_JOB_RUNNING && now > j->start_s) s += pxc_las_gpus(j) * (double)(now - j->start_s);
  uint32_t q = 0;
  while (q < n && s >= (double)t[q]) q++;
  return q;
}

bool pxc_las_promoted(const struct pxc_job *j, int64_t now) {
  if (!(j->las_base_gpu_s > 0 && j->las_base_gpu_s == j->attained_gpu_s)) return false;
  return (double)(now - j->start_s) * ran_gpus(j) < j->attained_gpu_s;
}

bool pxc_las_promote(struct px_core *c, struct pxc_job *j, int64_t now) {
  double limit = c->sched.las_starve_limit;
  if (limit <= 0 || j->attained_gpu_s <= j->las_base_gpu_s || !j->eligible_s || now <= j->eligible_s) return false;
  double ran_s = j->attained_gpu_s / ran_gpus(j);
  if ((double)(now - j->eligible_s) < limit * ran_s) return false;
  j->las_base_gpu_s = j->attained_gpu_s;
  c->stats.las_promotions++;
  return true;
}

int64_t pxc_las_promote_from(const struct px_core *c, const struct pxc_job *j) {
  double limit = c->sched.las_starve_limit;
  if (!j->las_served || limit <= 0 || j->attained_gpu_s <= j->las_base_gpu_s || !j->eligible_s) return INT64_MAX;
  double wait = limit * (j->attained_gpu_s / ran_gpus(j));
  if (!(wait < 4e18)) return INT64_MAX; /* NaN or beyond any clock: the comparison never holds */
  int64_t w = (int64_t)wait - 1;        /* rounding: a second early at most, checked then */
  return j->eligible_s + (w > 1 ? w : 1);
}

/* A pending job that never ran (most of a deep queue) has attained nothing,
 * so no promotion base either: queue 0, read from its hot line without the
 * cold service fields (a cache miss per pending job per cycle). */
static void las_key(struct px_core *c, struct pxc_job *j, int64_t now, uint64_t *k1, uint64_t *k2) {
  uint32_t q = 0;
  if (j->las_served) {
    pxc_las_promote(c, j, now);
    q = pxc_las_queue(c, j, now);
  }
  j->priority = j->flags & (PXC_F_HELD_USER | PXC_F_HELD_ADMIN) ? 0 : PX_LAS_MAX_THRESHOLDS + 1 - q;
  if (j->flags & PXC_F_ADMIN_PRIO) j->priority = j->admin_priority;
  *k1 = tier_key(c, j) | q;
  *k2 = (uint64_t)j->submit_s ^ (1ULL << 63);
}

static void fs_prepare(struct px_core *c, int64_t now) { pxc_fs_update(c, now); }

static const struct pxc_order_stage order_multifactor = {"multifactor", fs_prepare, multifactor_key};
static const struct pxc_order_stage order_fifo = {"fifo", fs_prepare, fifo_key};
static const struct pxc_order_stage order_las = {"las", fs_prepare, las_key};

static const struct pxc_place_stage place_pack = {"pack", false};
static const struct pxc_place_stage place_spread = {"spread", true};

static void block_begin(struct px_core *c, int64_t now) { (void)c, (void)now; }
static bool block_blocked(struct px_core *c, struct pxc_job *j, int64_t now) {
  (void)c, (void)j, (void)now;
  return true;
}
static bool block_may_start(struct px_core *c, struct pxc_job *j, struct pxc_place_result *res,
                            int64_t now) {
  (void)c, (void)j, (void)res, (void)now;
  return true;
}
const struct pxc_reserve_stage pxc_reserve_block = {"block", block_begin, block_blocked, block_may_start};
static const struct pxc_victims_stage victims_none = {"none", NULL};

int pxc_stage_select(struct px_core *c) {
  const struct px_conf_sched *s = &c->sched;
  c->order = s->order == PX_ORDER_FIFO ? &order_fifo : s->order == PX_ORDER_LAS ? &order_las : &order_multifactor;
  if (s->las_nthresholds > PX_LAS_MAX_THRESHOLDS) return PX_EINVAL;
  for (uint32_t i = 0; i < s->las_nthresholds; i++) /* positive, strictly ascending */
    if (s->las_thresholds_gpu_s[i] <= (i ? s->las_thresholds_gpu_s[i - 1] : 0)) return PX_EINVAL;
  c->place = c->sched.placement == PX_PLACE_SPREAD ? &place_spread : &place_pack;
  c->reserve = &pxc_reserve_block;
  c->victims = &victims_none;
  return pxc_policy_select(c); /* issue 4: backfill and preemption stages */
}
