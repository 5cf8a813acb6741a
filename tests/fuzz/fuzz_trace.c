/*
 * fuzz_trace.c - libFuzzer target for the CSV trace reader: any bytes must
 * give either a trace whose jobs satisfy the reader's promises or an error
 * with a message, never a crash, leak or undefined behaviour.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A requeued job's earlier attempts: its own, ascending, each run ending by
 * the next one's start, the last by the job's. */
static void check_attempts(const struct px_trace *t, const struct px_trace_job *j, uint32_t index) {
  const struct px_trace_attempt *a = px_trace_earlier(t, j);
  if (j->nearlier && ((size_t)j->earlier + j->nearlier > t->attempts.len || j->start_s < 0)) abort();
  for (uint32_t k = 0; k < j->nearlier; k++) {
    uint32_t next = k + 1 < j->nearlier ? a[k + 1].attempt : j->attempt;
    int64_t next_start = k + 1 < j->nearlier ? a[k + 1].start_s : j->start_s;
    if (a[k].job != index || a[k].attempt >= next || a[k].start_s < j->submit_s) abort();
    if (a[k].end_s < a[k].start_s || a[k].end_s > next_start) abort();
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  struct px_trace t;
  struct px_diag d;
  int rc = px_trace_parse(&t, (const char *)data, size, &d);
  if (rc) {
    if (rc != PX_ENOMEM && d.msg[0] == '\0') abort(); /* every error explains itself */
    if (t.jobs.len || t.names.len) abort();            /* a failed parse leaves nothing */
    return 0;
  }
  for (size_t i = 0; i < t.jobs.len; i++) {
    const struct px_trace_job *j = &t.jobs.v[i];
    if (j->submit_s < 0 || j->duration_s < 0 || j->id_off >= t.ids.len) abort();
    if ((j->queue != PX_TRACE_NONE && j->queue >= t.names.len) || j->line == 0) abort();
    if (strlen(px_trace_id(&t, j)) > size) abort();
    if (j->name != PX_TRACE_NONE) { /* a name the server would take */
      if (j->name >= t.names.len) abort();
      const char *n = px_trace_name(&t, j->name);
      if (!*n || strlen(n) > PX_TRACE_NAME_MAX) abort();
      for (; *n; n++)
        if ((unsigned char)*n < 0x20 || *n == 0x7f) abort();
    }
    check_attempts(&t, j, (uint32_t)i);
  }
  px_trace_fini(&t);
  return 0;
}
