/*
 * fuzz_views_json.c - libFuzzer target for the decoders of the client views
 * (proto/views_json.h: job, node, partition, share records) and for the
 * CLI's own lenient decoders of the same records (cli/cli_json.h), which is
 * what squeue/sinfo/sshare actually run on server answers.
 *
 * The first input byte picks the decoder, the rest is the JSON text (any
 * JSON value, so non-objects reach the decoders too). Properties:
 *   - proto decoders: a failure leaves the struct as a fresh one (zeroed, the
 *     job's spec initialised); a success re-encodes and decodes to an equal
 *     struct, every field compared, and the second encoding is identical;
 *   - CLI decoders: a failure leaves no string behind; a decoded job or node
 *     survives the CLI's encoder and decoder unchanged.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_json.h"
#include "fuzz_eq.h"
#include "proto/views_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define SE(f) fuzz_str_eq(a->f, b->f)
#define NE(f) (a->f == b->f)
#define CE(f) (strncmp(a->f, b->f, sizeof a->f) == 0)

/* Doubles compare by value: the codec must give back the same number. */
static bool job_eq(const struct px_job_info *a, const struct px_job_info *b) {
  return NE(job_id) && NE(array_job_id) && NE(array_task_id) && SE(array_pending) &&
         fuzz_spec_eq(&a->spec, &b->spec) && CE(state) && CE(reason) && SE(why) && NE(priority) &&
         NE(submit_time) && NE(eligible_time) && NE(start_time) && NE(end_time) &&
         NE(expected_start) && SE(nodelist) && NE(nnodes) && NE(ncpus) && NE(ngpus) &&
         NE(mem_mib) && SE(gpus_by_node) && NE(exit_code) && NE(term_signal) && NE(restarts) &&
         SE(cancelled_by) && NE(billable_tres_s) && NE(peak_mem_mib) && NE(cpu_time_ms) &&
         NE(prio_age) && NE(prio_fairshare) && NE(prio_jobsize) && NE(prio_partition) &&
         NE(prio_qos) && NE(prio_site) && NE(prio_assoc);
}

static bool node_eq(const struct px_node_info *a, const struct px_node_info *b) {
  return SE(name) && SE(addr) && SE(partitions) && CE(state) && SE(reason) && NE(cpus) &&
         NE(cpus_alloc) && NE(gpus) && NE(gpus_alloc) && SE(gpu_type) && SE(features) &&
         NE(mem_mib) && NE(mem_alloc_mib) && NE(last_heartbeat);
}

static bool part_eq(const struct px_partition_info *a, const struct px_partition_info *b) {
  return SE(name) && SE(nodelist) && NE(is_default) && NE(up) && NE(max_time_s) &&
         NE(default_time_s) && NE(nnodes) && NE(ngpus) && NE(gpus_alloc) && NE(max_nodes) &&
         NE(priority_tier) && NE(nodes_idle) && NE(nodes_alloc) && NE(nodes_mixed) &&
         NE(nodes_down) && NE(nodes_drained);
}

static bool share_eq(const struct px_share_info *a, const struct px_share_info *b) {
  return SE(account) && SE(user) && NE(depth) && NE(raw_shares) && NE(norm_shares) &&
         NE(raw_usage) && NE(norm_usage) && NE(effective_usage) && NE(fairshare) && NE(level_fs);
}

/* An all-zero struct of type T. */
#define IS_ZERO(x) is_zero(&(x), sizeof(x))
static bool is_zero(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return false;
  return true;
}

static void fuzz_job(const char *text) {
  struct px_job_info a, b, fresh;
  struct px_diag d = {0};
  px_job_info_init(&fresh);
  if (px_job_info_decode(text, &a, &d)) {
    FUZZ_CHECK(job_eq(&a, &fresh));
    return;
  }
  char *once = px_job_info_encode(&a);
  FUZZ_CHECK(once != NULL);
  int rc = px_job_info_decode(once, &b, &d);
  if (rc) fprintf(stderr, "re-decode of %s failed: %s\n", once, d.msg);
  FUZZ_CHECK(rc == 0 && job_eq(&a, &b));
  char *twice = px_job_info_encode(&b);
  FUZZ_CHECK(twice != NULL && strcmp(once, twice) == 0);
  free(once);
  free(twice);
  px_job_info_fini(&a);
  px_job_info_fini(&b);
}

/* The flat records: decode, round-trip through to_json, compare. */
#define FLAT(fn, T, pfx, eq)                                                   \
  static void fn(const json_t *v) {                                           \
    struct T a, b;                                                            \
    struct px_diag d = {0};                                                   \
    memset(&a, 0x5a, sizeof a); /* the decoder must zero it either way */     \
    if (pfx##_from_json(v, &a, &d)) {                                         \
      FUZZ_CHECK(IS_ZERO(a));                                                 \
      return;                                                                 \
    }                                                                         \
    json_t *o = pfx##_to_json(&a);                                            \
    FUZZ_CHECK(o != NULL);                                                    \
    int rc = pfx##_from_json(o, &b, &d);                                      \
    if (rc) fprintf(stderr, "re-decode failed: %s\n", d.msg);                 \
    FUZZ_CHECK(rc == 0 && eq(&a, &b));                                        \
    json_decref(o);                                                           \
    pfx##_fini(&a);                                                           \
    pfx##_fini(&b);                                                           \
  }
FLAT(fuzz_node, px_node_info, px_node_info, node_eq)
FLAT(fuzz_part, px_partition_info, px_partition_info, part_eq)
FLAT(fuzz_share, px_share_info, px_share_info, share_eq)

/* The CLI's decoders: lenient (unknown keys skipped), so only the job and
 * node records, which the CLI can also encode, get the round trip. */
static void fuzz_cli(int which, const json_t *v) {
  if (which == 0) {
    struct px_job_info a, b;
    if (px_cli_job_from_json(v, &a)) {
      FUZZ_CHECK(!a.why && !a.nodelist && !a.array_pending && !a.gpus_by_node &&
                 !a.cancelled_by && !a.spec.name && !a.spec.argv && !a.spec.env);
      return;
    }
    json_t *o = px_cli_job_to_json(&a);
    FUZZ_CHECK(o != NULL && px_cli_job_from_json(o, &b) == 0 && job_eq(&a, &b));
    json_decref(o);
    px_cli_job_fini(&a);
    px_cli_job_fini(&b);
  } else if (which == 1) {
    struct px_node_info a, b;
    if (px_cli_node_from_json(v, &a)) return;
    json_t *o = px_cli_node_to_json(&a);
    FUZZ_CHECK(o != NULL && px_cli_node_from_json(o, &b) == 0 && node_eq(&a, &b));
    json_decref(o);
    px_cli_node_fini(&a);
    px_cli_node_fini(&b);
  } else if (which == 2) {
    struct px_partition_info *p = NULL;
    size_t n = 0;
    if (!px_cli_partitions_from_json(v, &p, &n)) px_cli_partitions_free(p, n);
  } else {
    struct px_share_info *s = NULL;
    size_t n = 0;
    if (!px_cli_shares_from_json(v, &s, &n)) px_cli_shares_free(s, n);
    struct px_job_info *j = NULL;
    if (!px_cli_jobs_from_json(v, &j, &n)) px_cli_jobs_free(j, n);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  char *text = fuzz_text(data + 1, size - 1);
  if (!text) return 0;
  int which = data[0] % 8;
  if (which == 0) {
    fuzz_job(text);
  } else {
    json_t *v = json_loads(text, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, NULL);
    if (v) {
      if (which == 1) fuzz_node(v);
      else if (which == 2) fuzz_part(v);
      else if (which == 3) fuzz_share(v);
      else fuzz_cli(which - 4, v);
      json_decref(v);
    }
  }
  free(text);
  return 0;
}
