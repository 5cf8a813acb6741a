/*
 * srun_local.c - a step srun runs itself (srun_local.h), recorded by the
 * server: POST /v1/jobs/{id}/steps with "local":true, then
 * POST /v1/jobs/{id}/steps/{n}/end (docs/api/openapi.yaml).
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/srun_local.h"

/* The fallback: a per-job counter file, appended to with O_APPEND so
 * concurrent sruns get distinct ids. */
static uint32_t counter_step_id(const char *job) {
  const char *tmp = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/phalanx-steps-%s-%u", tmp && *tmp ? tmp : "/tmp", job, (unsigned)getuid());
  int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return 0;
  off_t id = lseek(fd, 0, SEEK_END);
  if (write(fd, ".", 1) != 1) id = 0;
  close(fd);
  return (uint32_t)id;
}

static json_t *start_body(const char *node, char **argv, uint32_t ntasks) {
  json_t *av = json_array();
  for (char **a = argv; av && *a; a++)
    if (json_array_append_new(av, json_string(*a))) break; /* not UTF-8: refused below as argv */
  char cwd[4096];
  json_t *b = json_pack("{sb so sI}", "local", 1, "argv", av, "ntasks", (json_int_t)ntasks);
  if (b && node) json_object_set_new(b, "node", json_string(node));
  if (b && getcwd(cwd, sizeof cwd)) json_object_set_new(b, "cwd", json_string(cwd));
  return b;
}

uint32_t px_srun_local_start(struct px_cmd *c, const char *job, const char *node, char **argv,
                             uint32_t ntasks, bool *recorded) {
  char path[128];
  snprintf(path, sizeof path, "/v1/jobs/%s/steps", job);
  json_t *body = start_body(node, argv, ntasks), *resp = NULL;
  long status = 0;
  *recorded = false;
  uint32_t id = 0;
  if (body && !px_cmd_call(c, "POST", path, body, &status, &resp)) {
    if (status == 201) {
      id = (uint32_t)json_integer_value(json_object_get(resp, "step_id"));
      *recorded = true;
    } else {
      char msg[512];
      px_client_error_text(status, resp, msg, sizeof msg);
      px_cmd_error(c, "the server did not record the step (%s); running it unrecorded", msg);
    }
  }
  json_decref(body);
  json_decref(resp);
  return *recorded ? id : counter_step_id(job);
}

void px_srun_local_end(struct px_cmd *c, const char *job, uint32_t step, const struct px_local_usage *u) {
  char path[160];
  snprintf(path, sizeof path, "/v1/jobs/%s/steps/%u/end", job, step);
  json_t *body = json_pack("{si si sI sI}", "exit_code", (int)u->exit_code, "term_signal", (int)u->term_signal,
                           "peak_mem_mib", (json_int_t)((u->peak_rss_kib + 1023) / 1024), "cpu_time_ms",
                           (json_int_t)u->cpu_time_ms);
  json_t *resp = NULL;
  long status = 0;
  if (body && !px_cmd_call(c, "POST", path, body, &status, &resp) && status != 200) {
    char msg[512];
    px_client_error_text(status, resp, msg, sizeof msg);
    px_cmd_error(c, "step %s.%u: its end was not recorded: %s", job, step, msg);
  }
  json_decref(body);
  json_decref(resp);
}
