/*
 * GpuFaultPolicy= and the node health keys: defaults, items overriding
 * them class by class and XID by XID, and the health check settings.
 */
#include "px_test.h"

#include <string.h>

#include "conf/conf.h"

static struct px_conf *parse(const char *text) {
  struct px_conf_text t = {text, NULL, NULL, "slurm.conf", 0};
  struct px_conf *conf = NULL;
  struct px_conf_diags d = {0};
  int rc = px_conf_parse_text(&t, &conf, &d);
  px_conf_diags_fini(&d);
  assert_int_equal(rc, 0);
  return conf;
}

static void defaults(void **state) {
  (void)state;
  struct px_gpu_policy p;
  px_gpu_policy_defaults(&p);
  assert_int_equal(px_gpu_policy_actions(&p, PX_GPU_FAULT_XID, 79), PX_GPU_ACT_GPU | PX_GPU_ACT_REQUEUE);
  assert_int_equal(px_gpu_policy_actions(&p, PX_GPU_FAULT_XID, 13), 0); /* the application's error */
  assert_int_equal(px_gpu_policy_actions(&p, PX_GPU_FAULT_LOST, 0),
                   PX_GPU_ACT_GPU | PX_GPU_ACT_DRAIN | PX_GPU_ACT_REQUEUE);
  assert_int_equal(px_gpu_policy_actions(&p, PX_GPU_FAULT_THROTTLE, 64), 0);
  char buf[48];
  px_gpu_actions_text(PX_GPU_ACT_GPU | PX_GPU_ACT_DRAIN, buf, sizeof buf);
  assert_string_equal(buf, "gpu+drain");
  px_gpu_actions_text(0, buf, sizeof buf);
  assert_string_equal(buf, "none");
}

static void items_override(void **state) {
  (void)state;
  struct px_conf *c = parse("NodeName=n1 Gres=gpu:2\nGpuFaultPolicy=xid79:gpu+drain+fail,ecc:none,xid13:gpu,"
                            "nvlink:requeue+grace\n"
                            "GpuQuarantineFaults=5\nGpuQuarantineWindow=2:00:00\nGpuHealthIntervalMs=250\n");
  const struct px_gpu_policy *p = &c->phalanx.gpu;
  assert_int_equal(px_gpu_policy_actions(p, PX_GPU_FAULT_XID, 79), PX_GPU_ACT_GPU | PX_GPU_ACT_DRAIN | PX_GPU_ACT_FAIL);
  assert_int_equal(px_gpu_policy_actions(p, PX_GPU_FAULT_XID, 48), PX_GPU_ACT_GPU | PX_GPU_ACT_REQUEUE);
  assert_int_equal(px_gpu_policy_actions(p, PX_GPU_FAULT_XID, 13), PX_GPU_ACT_GPU);
  assert_int_equal(px_gpu_policy_actions(p, PX_GPU_FAULT_ECC, 1), 0);
  assert_int_equal(px_gpu_policy_actions(p, PX_GPU_FAULT_NVLINK, 0), PX_GPU_ACT_REQUEUE | PX_GPU_ACT_GRACE);
  assert_int_equal(p->quarantine_faults, 5);
  assert_int_equal(p->quarantine_window_s, 7200);
  assert_int_equal(p->health_interval_ms, 250);
  px_conf_free(c);
}

static void health_check_keys(void **state) {
  (void)state;
  struct px_conf *c = parse("NodeName=n1\nHealthCheckProgram=/usr/sbin/nhc\nHealthCheckInterval=300\n"
                            "HealthCheckNodeState=IDLE,CYCLE\nRebootProgram=/sbin/reboot\n");
  assert_string_equal(c->phalanx.health_check_program, "/usr/sbin/nhc");
  assert_int_equal(c->phalanx.health_check_interval_s, 300);
  assert_int_equal(c->phalanx.health_check_states, PX_HC_IDLE | PX_HC_CYCLE);
  assert_string_equal(c->phalanx.reboot_program, "/sbin/reboot");
  px_conf_free(c);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(defaults),
      cmocka_unit_test(items_override),
      cmocka_unit_test(health_check_keys),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
