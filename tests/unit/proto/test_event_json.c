/*
 * The journal record of each event kind (proto/event_json.h): encoded,
 * decoded back to the same event, and encoded again to the same text;
 * records written before the version existed (v0, the shape of
 * tests/data/journal-v0) read the same; a newer version is refused; names
 * the configuration lacks are named in the error.
 */
#include "px_test.h"

#include <stdlib.h>
#include <string.h>

#include "core/testconf.h"
#include "proto/event_json.h"

struct fx {
  struct px_conf *conf;
  struct px_smap nodes;
  struct px_event_names names;
};

static void fx_open(struct fx *f) {
  struct px_testconf_spec s = {
      .nnodes = 3, .gpus_per_node = 8, .cpus_per_node = 64, .mem_mib = 1 << 20};
  f->conf = px_testconf_new(&s);
  uint32_t a = px_testconf_account(f->conf, "ml", 0, 1);
  px_testconf_user(f->conf, "alice", a, 1);
  memset(&f->nodes, 0, sizeof f->nodes);
  for (uint32_t i = 0; i < f->conf->nnodes; i++)
    assert_int_equal(px_smap_put(&f->nodes, f->conf->nodes[i].name, i), 0);
  f->names = (struct px_event_names){f->conf, &f->nodes};
}

static void fx_close(struct fx *f) {
  px_smap_fini(&f->nodes);
  px_conf_free(f->conf);
}

/* Encodes ev, decodes it into *back, and checks the second encoding. */
static void round_trip(struct fx *f, const struct px_event *ev, struct px_event_rec *back) {
  struct px_store_rec r = {0}, r2 = {0};
  struct px_event_result res = {.nids = 1};
  char *text = px_event_encode(f->conf, ev, &res, &r);
  assert_non_null(text);
  assert_non_null(strstr(text, "\"v\":1"));
  r.data = text;
  struct px_diag d;
  assert_int_equal(px_event_decode(&f->names, &r, back, &d), 0);
  assert_int_equal(back->version, 1);
  assert_int_equal(back->ev.kind, ev->kind);
  assert_int_equal(back->ev.job_id, ev->job_id);
  char *again = px_event_encode(f->conf, &back->ev, &res, &r2);
  assert_string_equal(again, text);
  assert_string_equal(r2.kind, r.kind);
  if (r.subject) assert_string_equal(r2.subject, r.subject);
  free(again);
  free(text);
}

static void every_kind_round_trips(void **state) {
  (void)state;
  struct fx f;
  fx_open(&f);
  struct px_event_rec b;
  struct px_jobspec spec;
  px_jobspec_init(&spec);
  spec.user = (char *)"alice";
  spec.gpus_per_node = 2;
  spec.array = (char *)"0-3%2";
  struct px_event ev = {.kind = PX_EV_SUBMIT, .job_id = 5, .spec = &spec};
  round_trip(&f, &ev, &b);
  assert_string_equal(b.spec.array, "0-3%2");
  assert_int_equal(b.spec.gpus_per_node, 2);
  px_event_rec_fini(&b);

  struct px_alloc al[2] = {{.node = 1, .ncpu = 4, .gpus = 0x81, .mem_mib = 100},
                           {.node = 2, .ncpu = 2, .gpus = 0x2, .mem_mib = 50, .gpu_share = 25}};
  ev = (struct px_event){.kind = PX_EV_START,
                         .job_id = 7,
                         .alloc = al,
                         .nalloc = 2,
                         .time_limit_s = 60,
                         .array_job_id = 5,
                         .array_task_id = 1};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.ev.nalloc, 2);
  assert_int_equal(b.ev.alloc[0].node, 1);
  assert_true(b.ev.alloc[0].gpus == 0x81);
  assert_int_equal(b.ev.alloc[1].mem_mib, 50);
  assert_int_equal(b.ev.alloc[0].gpu_share, 0);  /* whole GPUs: no key written */
  assert_int_equal(b.ev.alloc[1].gpu_share, 25); /* a fraction keeps its hundredths */
  assert_int_equal(b.ev.array_task_id, 1);
  px_event_rec_fini(&b);

  ev = (struct px_event){.kind = PX_EV_END,
                         .job_id = 7,
                         .state = PX_JOB_TIMEOUT,
                         .exit_code = 3,
                         .term_signal = 9,
                         .peak_mem_mib = 12,
                         .cpu_time_ms = 34};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.ev.state, PX_JOB_TIMEOUT);
  assert_int_equal(b.ev.cpu_time_ms, 34);
  px_event_rec_fini(&b);

  ev = (struct px_event){.kind = PX_EV_CANCEL, .job_id = 7, .by = "alice", .signal = 15};
  round_trip(&f, &ev, &b);
  assert_string_equal(b.ev.by, "alice");
  assert_int_equal(b.ev.signal, 15);
  px_event_rec_fini(&b);

  ev = (struct px_event){
      .kind = PX_EV_UPDATE, .job_id = 7, .update = {PX_UPD_NICE | PX_UPD_PRIORITY, -5, 0, 99}};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.ev.update.fields, PX_UPD_NICE | PX_UPD_PRIORITY);
  assert_int_equal(b.ev.update.nice, -5);
  px_event_rec_fini(&b);

  const enum px_event_kind simple[] = {PX_EV_HOLD, PX_EV_RELEASE, PX_EV_REQUEUE, PX_EV_REJECT};
  for (size_t i = 0; i < sizeof simple / sizeof simple[0]; i++) {
    ev = (struct px_event){
        .kind = simple[i], .job_id = 9, .admin = true, .hold = true, .reason = "Requeued"};
    round_trip(&f, &ev, &b);
    px_event_rec_fini(&b);
  }
  ev = (struct px_event){.kind = PX_EV_NODE_DRAIN, .node = 2, .reason = "fan"};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.ev.node, 2);
  assert_string_equal(b.ev.reason, "fan");
  assert_null(b.ev.by); /* nobody said who (an older record): not known */
  px_event_rec_fini(&b);
  ev = (struct px_event){.kind = PX_EV_NODE_DRAIN, .node = 2, .reason = "fan", .by = "alice"};
  round_trip(&f, &ev, &b);
  assert_string_equal(b.ev.by, "alice"); /* sinfo -R's USER */
  assert_null(b.ev.cause); /* an older record: the server's loader infers it */
  px_event_rec_fini(&b);
  ev = (struct px_event){.kind = PX_EV_NODE_DRAIN, .node = 2, .reason = "Low CPUs (reported: fan)", .by = "alice",
                         .cause = "operator"};
  round_trip(&f, &ev, &b);
  assert_string_equal(b.ev.cause, "operator"); /* the drain's own, whatever its reason says */
  assert_string_equal(b.ev.reason, "Low CPUs (reported: fan)");
  px_event_rec_fini(&b);
  ev = (struct px_event){.kind = PX_EV_PART_DOWN, .part = 0};
  round_trip(&f, &ev, &b);
  px_event_rec_fini(&b);
  ev = (struct px_event){.kind = PX_EV_GPU, .node = 1, .gpu = 5, .gpu_fault = true, .gpu_state = "UNUSABLE",
                         .reason = "xid 79"};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.ev.node, 1);
  assert_int_equal(b.ev.gpu, 5);
  assert_false(b.ev.gpu_usable);
  assert_true(b.ev.gpu_fault);
  assert_string_equal(b.ev.gpu_state, "UNUSABLE");
  assert_string_equal(b.ev.reason, "xid 79");
  px_event_rec_fini(&b);
  ev = (struct px_event){.kind = PX_EV_RESV_DELETE, .reason = "maint"};
  round_trip(&f, &ev, &b);
  assert_string_equal(b.ev.reason, "maint");
  px_event_rec_fini(&b);
  ev = (struct px_event){.kind = PX_EV_STEP, .job_id = 7,
                         .step = "{\"op\":\"cancel\",\"restart\":0,\"step_id\":3}"};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.ev.job_id, 7);
  assert_string_equal(b.ev.step, "{\"op\":\"cancel\",\"restart\":0,\"step_id\":3}");
  px_event_rec_fini(&b);

  uint32_t nodes[] = {0, 2};
  struct px_resv_spec rs = {.name = "r",
                            .start_s = 10,
                            .end_s = 20,
                            .nodes = nodes,
                            .nnodes = 2,
                            .partition = PX_NONE,
                            .account = 1};
  ev = (struct px_event){.kind = PX_EV_RESV, .resv = &rs};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.resv.nnodes, 2);
  assert_int_equal(b.resv.nodes[1], 2);
  assert_int_equal(b.resv.account, 1);
  px_event_rec_fini(&b);

  struct px_acct_edit ae = {.op = PX_ACCT_ADD, .entity = PX_ACCT_USER, .name = "Carol", .account = "vision",
                            .default_account = true, .set = 1u << PX_ACCT_FAIRSHARE | 1u << PX_ACCT_MAX_JOBS};
  ae.value[PX_ACCT_FAIRSHARE] = 3;
  ae.value[PX_ACCT_MAX_JOBS] = PX_NOLIMIT;
  ev = (struct px_event){.kind = PX_EV_ACCT, .acct = &ae};
  round_trip(&f, &ev, &b);
  assert_int_equal(b.acct.op, PX_ACCT_ADD);
  assert_int_equal(b.acct.entity, PX_ACCT_USER);
  assert_string_equal(b.acct.name, "Carol"); /* user names are kept as written */
  assert_string_equal(b.acct.account, "vision");
  assert_true(b.acct.default_account);
  assert_int_equal(b.acct.set, ae.set);
  assert_int_equal(b.acct.value[PX_ACCT_FAIRSHARE], 3);
  assert_true(b.acct.value[PX_ACCT_MAX_JOBS] == PX_NOLIMIT);
  px_event_rec_fini(&b);
  fx_close(&f);
}

static int decode(struct fx *f, const char *kind, const char *subject, const char *data,
                  struct px_event_rec *e, struct px_diag *d) {
  struct px_store_rec r = {.seq = 1, .kind = kind, .job_id = 4, .subject = subject, .data = data};
  return px_event_decode(&f->names, &r, e, d);
}

/* Records as the server wrote them before issue 13 (no "v"). */
static void version_0_records_read(void **state) {
  (void)state;
  struct fx f;
  fx_open(&f);
  struct px_event_rec e;
  struct px_diag d;
  assert_int_equal(
      decode(&f, "start", NULL,
             "{\"alloc\":[{\"node\":\"n00001\",\"ncpu\":1,\"gpus\":[0,1],\"mem_mib\":131072}],"
             "\"time_limit_s\":600,\"array_job_id\":0,\"array_task_id\":0}",
             &e, &d),
      0);
  assert_int_equal(e.version, 0);
  assert_int_equal(e.ev.alloc[0].node, 1);
  assert_int_equal(e.ev.array_task_id, PX_NONE);
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "submit", NULL,
                          "{\"spec\":{\"name\":\"b1\",\"user\":\"alice\",\"account\":\"ml\",\"gpus_"
                          "per_node\":1},\"ids\":1}",
                          &e, &d),
                   0);
  assert_string_equal(e.ev.spec->account, "ml");
  assert_int_equal(e.ids, 1);
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "end", NULL,
                          "{\"state\":\"CANCELLED\",\"exit_code\":0,\"term_signal\":0}", &e, &d),
                   0);
  assert_int_equal(e.ev.state, PX_JOB_CANCELLED);
  px_event_rec_fini(&e);
  fx_close(&f);
}

static void bad_records_are_named(void **state) {
  (void)state;
  struct fx f;
  fx_open(&f);
  struct px_event_rec e;
  struct px_diag d;
  assert_int_equal(decode(&f, "hold", NULL, "{\"v\":2,\"admin\":true}", &e, &d), PX_EPROTO);
  assert_non_null(strstr(d.msg, "v: record version 2"));
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "drain", "zz9", "{\"reason\":\"x\"}", &e, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "zz9"));
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "start", NULL, "{\"alloc\":[{\"node\":\"nope\"}]}", &e, &d),
                   PX_EINVAL);
  assert_non_null(strstr(d.msg, "alloc[0].node"));
  px_event_rec_fini(&e);
  char bad[160];
  snprintf(bad, sizeof bad, "{\"alloc\":[{\"node\":\"%s\",\"gpus\":[0,1],\"gpu_share\":50}]}", f.conf->nodes[0].name);
  assert_int_equal(decode(&f, "start", NULL, bad, &e, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "alloc[0].gpu_share: 50 is not a share (1-99) of one GPU"));
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "gpu", f.conf->nodes[0].name, "{\"gpu\":64,\"state\":\"OK\"}", &e, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "gpu:"));
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "step", NULL, "{\"step\":3}", &e, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "step: missing"));
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "launch", NULL, "{}", &e, &d), PX_EINVAL);
  assert_non_null(strstr(d.msg, "kind"));
  px_event_rec_fini(&e);
  assert_int_equal(decode(&f, "hold", NULL, "[1", &e, &d), PX_EINVAL);
  px_event_rec_fini(&e);
  assert_int_equal(
      decode(&f, "resv", "r", "{\"name\":\"r\",\"nodes\":[],\"account\":\"nosuch\"}", &e, &d),
      PX_EINVAL);
  assert_non_null(strstr(d.msg, "account"));
  px_event_rec_fini(&e);
  /* an accounts change: strict, naming the member; account names folded */
  static const struct { const char *data, *msg; } acct[] = {
      {"{\"op\":\"rename\",\"entity\":\"account\",\"name\":\"a\"}", "op: must be add, modify or delete"},
      {"{\"op\":\"add\",\"entity\":\"team\",\"name\":\"a\"}", "entity: must be account, user or qos"},
      {"{\"op\":\"add\",\"entity\":\"account\"}", "name: missing"},
      {"{\"op\":\"add\",\"entity\":\"account\",\"name\":\"a b\"}", "name: \" \" is not allowed"},
      {"{\"op\":\"add\",\"entity\":\"account\",\"name\":\"a\",\"x\":1}", "x: unknown member"},
      {"{\"op\":\"add\",\"entity\":\"account\",\"name\":\"a\",\"set\":{\"shares\":1}}",
       "set.shares: unknown setting"},
      {"{\"op\":\"add\",\"entity\":\"account\",\"name\":\"a\",\"set\":{\"max_jobs\":-2}}",
       "set.max_jobs: must be a whole number"},
      {"{\"op\":\"add\",\"entity\":\"account\",\"name\":\"a\",\"description\":3}",
       "description: must be a text"},
  };
  for (size_t i = 0; i < sizeof acct / sizeof acct[0]; i++) {
    assert_int_equal(decode(&f, "acct", NULL, acct[i].data, &e, &d), PX_EINVAL);
    if (!strstr(d.msg, acct[i].msg)) fail_msg("acct %zu: \"%s\" lacks \"%s\"", i, d.msg, acct[i].msg);
    px_event_rec_fini(&e);
  }
  assert_int_equal(decode(&f, "acct", NULL, "{\"op\":\"add\",\"entity\":\"account\",\"name\":\"CV\","
                                            "\"parent\":\"ML\"}", &e, &d), 0);
  assert_string_equal(e.acct.name, "cv");
  assert_string_equal(e.acct.parent, "ml");
  px_event_rec_fini(&e);
  fx_close(&f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_kind_round_trips),
      cmocka_unit_test(version_0_records_read),
      cmocka_unit_test(bad_records_are_named),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
