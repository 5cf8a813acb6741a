/*
 * test_servers.c - the controllers an agent knows (agent/servers.h): the
 * --server list, moving to the leader a standby names or to the next, the
 * highest term heard (fencing), and the headers that carry both.
 */
#include "px_test.h"

#include <string.h>

#include "agent/servers.h"
#include "util/error.h"

static void parses_lists(void **state) {
  (void)state;
  struct px_servers l;
  char why[128];
  assert_int_equal(px_servers_parse(&l, "http://a:1,http://b:2,,http://c:3", why, sizeof why), 0);
  assert_int_equal(l.n, 3);
  assert_string_equal(l.base[2], "http://c:3");
  assert_int_equal(px_servers_parse(&l, "", why, sizeof why), PX_EINVAL);
  assert_non_null(strstr(why, "no address"));
  assert_int_equal(px_servers_parse(&l, "x,x,x,x,x,x,x,x,x", why, sizeof why), PX_EINVAL);
  assert_non_null(strstr(why, "more than 8"));
}

static void follows_the_leader(void **state) {
  (void)state;
  struct px_servers l;
  char why[128];
  px_servers_parse(&l, "http://a:1,http://b:2,http://c:3", why, sizeof why);
  int from = px_servers_cur(&l);
  px_servers_next(&l, from, NULL); /* gone: the next */
  assert_int_equal(px_servers_cur(&l), (from + 1) % 3);
  px_servers_next(&l, from, NULL); /* a second failure of the same: moved already */
  assert_int_equal(px_servers_cur(&l), (from + 1) % 3);
  px_servers_next(&l, px_servers_cur(&l), "http://a:1"); /* a standby names the leader */
  assert_string_equal(px_servers_base(&l), "http://a:1");
  px_servers_next(&l, px_servers_cur(&l), "http://elsewhere:9"); /* not ours: the next */
  assert_string_equal(px_servers_base(&l), "http://b:2");
}

static void refuses_lower_terms(void **state) {
  (void)state;
  assert_true(px_servers_term_ok(0)); /* no --ha */
  assert_true(px_servers_term_ok(3));
  assert_true(px_servers_term_ok(3));
  assert_true(px_servers_term_ok(5));
  assert_false(px_servers_term_ok(4)); /* a deposed leader */
  assert_true(px_servers_term_ok(0));
  assert_int_equal((int)px_servers_term(), 5);
}

static void reads_headers(void **state) {
  (void)state;
  struct px_ha_hdr h = {0};
  char t[] = "X-Phalanx-Term: 12\r\n", l[] = "x-phalanx-leader:  http://b:2 \r\n", o[] = "Other: 1\r\n";
  assert_int_equal(px_servers_header(t, 1, strlen(t), &h), strlen(t));
  px_servers_header(l, 1, strlen(l), &h);
  px_servers_header(o, 1, strlen(o), &h);
  assert_int_equal((int)h.term, 12);
  assert_string_equal(h.leader, "http://b:2");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(parses_lists),
      cmocka_unit_test(follows_the_leader),
      cmocka_unit_test(refuses_lower_terms),
      cmocka_unit_test(reads_headers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
