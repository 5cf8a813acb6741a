/*
 * The --container-* fields (proto/container_spec.h): mount lists parse into
 * sources, destinations and flags; every wrong entry is refused naming the
 * entry and the problem (the first wrong entry used to free stack garbage:
 * fuzz_container_spec found it); the job spec codec refuses bad fields with
 * their names, and fields that need container_image without it.
 */
#include "px_test.h"

#include <stdlib.h>
#include <string.h>

#include "proto/container_spec.h"
#include "proto/jobspec_json.h"

static void mounts_parse(void **state) {
  (void)state;
  struct px_ctr_mounts m;
  struct px_diag d;
  assert_int_equal(px_ctr_mounts_parse("/data:/data:ro+rslave,/scratch,/a/b:/c:nosuid", &m, &d), 0);
  assert_int_equal(m.n, 3);
  assert_string_equal(m.v[0].src, "/data");
  assert_true(m.v[0].ro);
  assert_string_equal(m.v[0].propagation, "rslave");
  assert_string_equal(m.v[1].dst, "/scratch");
  assert_false(m.v[1].ro);
  assert_string_equal(m.v[1].propagation, "rprivate");
  assert_string_equal(m.v[2].dst, "/c");
  assert_true(m.v[2].nosuid);
  px_ctr_mounts_fini(&m);
  assert_int_equal(px_ctr_mounts_parse(NULL, &m, &d), 0);
  assert_int_equal(m.n, 0);
}

static void expect_refused(const char *text, const char *msg) {
  struct px_ctr_mounts m;
  struct px_diag d;
  assert_int_equal(px_ctr_mounts_parse(text, &m, &d), PX_EINVAL);
  assert_string_equal(d.msg, msg);
  assert_int_equal(m.n, 0);
}

static void mounts_refused(void **state) {
  (void)state;
  expect_refused("rel:/x", "container_mounts: entry 1: source is not an absolute path");
  expect_refused("/ok:/ok,/a/../b:/c", "container_mounts: entry 2: source has a \"..\" component");
  expect_refused("/a:/", "container_mounts: entry 1: destination is /");
  expect_refused("/a:/b:rw+bogus",
                 "container_mounts: entry 1: flag \"bogus\" is not ro, rw, private, rprivate, slave, rslave, "
                 "nosuid, nodev or noexec");
  expect_refused("/a:", "container_mounts: entry 1: destination is empty");
}

static void spec_fields_checked(void **state) {
  (void)state;
  static const struct {
    const char *json, *msg;
  } cases[] = {
      {"{\"container_mounts\":\"/a:/b\"}", "container_mounts: needs container_image"},
      {"{\"container_image\":\"x\",\"container_workdir\":\"work\"}", "container_workdir: is not an absolute path"},
      {"{\"container_image\":\"x\",\"container_env\":\"HOME,1X\"}", "container_env: \"1X\" is not a variable name"},
      {"{\"container_image\":\"\"}", "container_image: must not be empty"},
      {"{\"container_image\":\"x\",\"container_mounts\":\"/a:/b,b\"}",
       "container_mounts: entry 2: source is not an absolute path"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct px_jobspec s;
    struct px_diag d;
    assert_int_equal(px_jobspec_decode(cases[i].json, &s, &d), PX_EINVAL);
    assert_string_equal(d.msg, cases[i].msg);
    px_jobspec_fini(&s);
  }
  struct px_jobspec s;
  struct px_diag d;
  assert_int_equal(px_jobspec_decode("{\"container_image\":\"busybox:v1\",\"container_mounts\":\"/d:/d:ro\","
                                     "\"container_workdir\":\"/w\",\"container_env\":\"A,B_2\"}",
                                     &s, &d),
                   0);
  assert_string_equal(s.container_image, "busybox:v1");
  assert_string_equal(s.container_env, "A,B_2");
  px_jobspec_fini(&s);
}

static void env_listed(void **state) {
  (void)state;
  assert_true(px_ctr_env_listed("HOME,PATH", "PATH", 4));
  assert_false(px_ctr_env_listed("HOME,PATH", "PAT", 3));
  assert_false(px_ctr_env_listed(NULL, "PATH", 4));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(mounts_parse),
      cmocka_unit_test(mounts_refused),
      cmocka_unit_test(spec_fields_checked),
      cmocka_unit_test(env_listed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
