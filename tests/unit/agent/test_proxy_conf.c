/*
 * test_proxy_conf.c - the pure half of `phalanx proxy`: the endpoints
 * answer (strict on types, tolerant of new fields), slot fitting (kept
 * endpoints never move, new ones take free slots, too few slots is said),
 * the generated HAProxy configuration, and "show stat" parsing.
 */
#include "px_test.h"

#include <string.h>

#include "agent/proxy_conf.h"
#include "agent/proxy_hap.h"

static const char *answer =
    "{\"seq\":7,\"extra\":true,\"services\":[{\"name\":\"web\",\"ports\":[\"http\",\"metrics\"],\"endpoints\":["
    "{\"replica\":0,\"job_id\":12,\"node\":\"n01\",\"host\":\"10.0.0.1\",\"ports\":{\"metrics\":9,\"http\":31234}},"
    "{\"replica\":1,\"job_id\":13,\"node\":\"n02\",\"host\":\"10.0.0.2\",\"ports\":{\"http\":31300}}]},"
    "{\"name\":\"batchy\",\"ports\":[],\"endpoints\":[]}]}";

static void decode(void **state) {
  (void)state;
  struct px_pstate st;
  struct px_diag d;
  assert_int_equal(px_proxy_endpoints_decode(answer, &st, &d), 0);
  assert_int_equal(st.seq, 7);
  assert_int_equal(st.nsvcs, 2);
  assert_string_equal(st.svcs[0].name, "web");
  assert_int_equal(st.svcs[0].neps, 2);
  assert_int_equal(st.svcs[0].eps[0].port, 31234); /* the first port name's */
  assert_string_equal(st.svcs[0].eps[1].host, "10.0.0.2");
  assert_int_equal(st.svcs[1].neps, 0);
  px_proxy_state_fini(&st);
  const char *bad[][2] = {
      {"{\"services\":[]}", "seq"},
      {"{\"seq\":1}", "services"},
      {"{\"seq\":1,\"services\":[{\"name\":\"w\",\"ports\":[\"http\"],\"endpoints\":[{\"host\":\"h\",\"ports\":{}}]}]}",
       "services[0].endpoints[0].ports.http"},
      {"{\"seq\":1,\"services\":[{\"name\":\"w\",\"ports\":[\"http\"],\"endpoints\":[{\"ports\":{\"http\":1}}]}]}",
       "services[0].endpoints[0].host"},
      {"{\"seq\":1,\"services\":[{\"name\":1}]}", "services[0].name"},
      {"{\"seq\":1,\"services\":[{\"name\":\"w\",\"ports\":[\"http\"],\"endpoints\":[{\"host\":\"h\",\"ports\":{\"http\":70000}}]}]}",
       "ports.http: expected a TCP port"},
      {"[", "JSON"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    if (px_proxy_endpoints_decode(bad[i][0], &st, &d) == 0) fail_msg("accepted %s", bad[i][0]);
    if (!strstr(d.msg, bad[i][1])) fail_msg("'%s' does not name %s", d.msg, bad[i][1]);
  }
}

static struct px_pep ep(uint16_t port) {
  struct px_pep e = {.port = port};
  snprintf(e.host, sizeof e.host, "127.0.0.1");
  return e;
}

static void fit(void **state) {
  (void)state;
  struct px_slot slots[8] = {0};
  struct px_pback b = {.name = "web", .slot = slots, .nslots = 8};
  struct px_pep e1[] = {ep(1), ep(2), ep(3)};
  struct px_psvc s = {.name = "web", .eps = e1, .neps = 3};
  struct px_slot_change ch[32];
  uint32_t n = 0;
  assert_true(px_proxy_fit(&b, 0, &s, ch, &n));
  assert_int_equal(n, 3);
  assert_int_equal(ch[2].slot, 3);
  /* 2 goes, 4 comes: 1 and 3 stay where they are, 4 takes the first free slot... */
  struct px_pep e2[] = {ep(3), ep(4), ep(1)};
  s.eps = e2;
  n = 0;
  assert_true(px_proxy_fit(&b, 0, &s, ch, &n));
  assert_int_equal(n, 2);
  /* ...which is slot 4, not the one being emptied; new first, then the removal */
  assert_true(ch[0].used);
  assert_int_equal(ch[0].slot, 4);
  assert_int_equal(ch[0].ep.port, 4);
  assert_false(ch[1].used);
  assert_int_equal(ch[1].slot, 2);
  assert_int_equal(slots[0].ep.port, 1);
  assert_int_equal(slots[2].ep.port, 3);
  /* unchanged: nothing to do */
  n = 0;
  assert_true(px_proxy_fit(&b, 0, &s, ch, &n));
  assert_int_equal(n, 0);
  /* nine endpoints do not fit eight slots, and nothing changes */
  struct px_pep e3[9];
  for (int i = 0; i < 9; i++) e3[i] = ep((uint16_t)(10 + i));
  s.eps = e3, s.neps = 9;
  n = 0;
  assert_false(px_proxy_fit(&b, 0, &s, ch, &n));
  assert_int_equal(n, 0);
  assert_int_equal(slots[3].ep.port, 4);
  assert_int_equal(px_proxy_slots_for(0), 8);
  assert_int_equal(px_proxy_slots_for(9), 32);
  assert_int_equal(px_proxy_slots_for(100000), PX_PROXY_SLOTS_MAX);
}

static void config(void **state) {
  (void)state;
  struct px_slot slots[8] = {{.ep = ep(31234), .used = true}};
  struct px_pback b[] = {{.name = "web", .slot = slots, .nslots = 8}};
  struct px_proxy_cfg c = {.listen = "127.0.0.1:8080", .admin_sock = "/run/px/admin.sock"};
  char *cfg = px_proxy_config(&c, b, 1);
  const char *want[] = {
      "stats socket /run/px/admin.sock mode 600 level admin\n",
      "    bind 127.0.0.1:8080\n",
      "retries 3\n",
      "option redispatch 1\n",
      "retry-on conn-failure empty-response response-timeout\n",
      "    acl path_web path -m reg ^/web(/|$)\n",
      "    http-request set-path %[path,regsub(^/web/?,/)] if path_web\n",
      "{ req.hdr(host),lower -m reg ^web(\\.[^:]*)?(:[0-9]+)?$ }\n",
      "use_backend svc_%[var(txn.svc)]\n",
      "backend svc_web\n    balance leastconn\n    server s1 127.0.0.1:31234\n    server s2 127.0.0.1:9 disabled\n",
      "    server s8 127.0.0.1:9 disabled\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(cfg, want[i])) fail_msg("no '%s' in:\n%s", want[i], cfg);
  /* the path rules come before the Host rules: /web/ wins over Host api */
  assert_true(strstr(cfg, "set-var(txn.svc) str(web) if path_web") < strstr(cfg, "req.hdr(host)"));
  free(cfg);
  assert_true(px_proxy_name_ok("llama-7b_v2"));
  assert_false(px_proxy_name_ok("Web"));
  assert_false(px_proxy_name_ok("a b"));
  assert_false(px_proxy_name_ok(""));
}

static void stat_parse(void **state) {
  (void)state;
  const char *csv = "# pxname,svname,qcur,qmax,scur,smax,slim,stot,req_tot,\n"
                    "services,FRONTEND,,,3,9,,100,120,\n"
                    "svc_web,s1,0,0,2,4,,50,,\n"
                    "svc_web,BACKEND,0,0,5,9,,60,77,\n"
                    "svc_api,BACKEND,0,0,0,1,,4,,\n"
                    "stats,BACKEND,0,0,1,1,,1,1,\n";
  struct px_hap_load l[4];
  assert_int_equal(px_hap_stat_parse(csv, "svc_", l, 4), 2);
  assert_string_equal(l[0].backend, "svc_web");
  assert_int_equal(l[0].scur, 5);
  assert_int_equal(l[0].req_tot, 77);
  assert_int_equal(l[1].req_tot, 4); /* no request count: sessions */
  assert_int_equal(px_hap_stat_parse("Unknown command\n", "svc_", l, 4), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(decode),
      cmocka_unit_test(fit),
      cmocka_unit_test(config),
      cmocka_unit_test(stat_parse),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
