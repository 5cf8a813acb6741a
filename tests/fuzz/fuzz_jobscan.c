/*
 * fuzz_jobscan.c - libFuzzer target for the CLI's hand-written job-list
 * decoder (cli/cli_jobscan.c: squeue reads server answers with it, without
 * a jansson tree). Any text must be decoded or refused without a crash, a
 * leak or undefined behaviour, and a success must hand back every job's
 * strings intact (freed here, so ASan sees a bad one). The same text also
 * goes through px_cli_jobs_next_after (an accounting page's cursor, read
 * from the text's end) and the in-place decoder (strings left in the text).
 * Each decoded job's id and dependency are formatted as squeue shows them
 * (an array's pending tasks and dependency terms are re-written there), and
 * the text itself goes through the pending-task reader and --begin's error
 * position.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_json.h"
#include "cli/fmt_job.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = '\0';
  struct px_job_info *v = NULL;
  size_t n = 0;
  uint64_t after;
  (void)px_cli_jobs_next_after(text, size, &after);
  if (px_cli_jobs_from_text(text, size, &v, &n) == 0) {
    char buf[256];
    for (size_t i = 0; i < n; i++) { /* touch every decoded string */
      if (v[i].spec.name && strlen(v[i].spec.name) > size) abort();
      px_fmt_job_id(buf, sizeof buf, &v[i]);
      px_fmt_job_dependency(buf, sizeof buf, &v[i]);
      if (strlen(buf) >= sizeof buf) abort();
    }
    px_cli_jobs_free(v, n);
  }
  char shown[64];
  px_fmt_array_pending(shown, sizeof shown, text);
  if (strlen(shown) >= sizeof shown) abort();
  if (px_cli_time_error_pos(text) < 0) abort();
  /* in place (sacct's pages): the strings stay in the (writable) text */
  memcpy(text, data, size);
  size_t cap = 0;
  v = NULL;
  if (px_cli_jobs_from_text_inplace(text, size, &v, &cap, &n) == 0) {
    for (size_t i = 0; i < n; i++)
      if (v[i].spec.name && (v[i].spec.name < text || v[i].spec.name >= text + size + 1)) abort();
    px_cli_jobs_free_inplace(v, n);
  }
  free(text);
  return 0;
}
