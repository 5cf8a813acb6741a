/*
 * fuzz_sbatch.c - libFuzzer target for the CLI's option parsers: the
 * #SBATCH / #PHX directive parser (px_cli_parse_directives) and the command
 * line parser (px_cli_parse_argv), then px_cli_apply, which turns both into
 * a px_jobspec, in sbatch's order (script first, command line wins).
 *
 * Input: the script text, a NUL byte, then the command line's words each
 * ended by NUL; the first word is the program name and picks the tool
 * ("srun", "salloc", "submit", anything else: sbatch). Properties:
 *   - parsers and option handlers never crash, leak or invoke UB;
 *   - an accepted spec survives the proto codec (px_jobspec_encode/decode)
 *     field for field whenever the server's decoder accepts it;
 *   - what sbatch actually sends (px_cli_jobspec_to_json, with the script
 *     as spec.script like cmd_sbatch.c) is either accepted by the server's
 *     decoder unchanged (no field silently lost), or refused for a limit;
 *     never for a negative value, which would mean the CLI produced a number
 *     the wire cannot carry (e.g. a sentinel that wrapped).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_json.h"
#include "fuzz_eq.h"
#include "proto/jobspec_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW_S INT64_C(1764676800) /* 2025-12-02T12:00:00Z: --begin is resolved against it */
#define MAX_ARGS 64

static enum px_cli_tool pick_tool(const char *prog) {
  if (!strcmp(prog, "srun")) return PX_TOOL_SRUN;
  if (!strcmp(prog, "salloc")) return PX_TOOL_SALLOC;
  if (!strcmp(prog, "submit")) return PX_TOOL_SUBMIT;
  return PX_TOOL_SBATCH;
}

/* The proto codec gives the spec back field for field when it accepts it. */
static void check_wire(const struct px_jobspec *spec) {
  struct px_jobspec back;
  struct px_diag d = {0};
  px_jobspec_init(&back);
  char *text = px_jobspec_encode(spec); /* NULL: a string that is not UTF-8 */
  if (text && px_jobspec_decode(text, &back, &d) == 0) FUZZ_CHECK(fuzz_spec_eq(spec, &back));
  px_jobspec_fini(&back);
  json_t *sent = px_cli_jobspec_to_json(spec);
  /* What JSON cannot carry, sbatch refuses (never sends with a field lost). */
  FUZZ_CHECK((sent != NULL) == (text != NULL));
  free(text);
  if (!sent) return;
  px_jobspec_init(&back);
  if (px_jobspec_from_json(sent, &back, "", &d) == 0) {
    FUZZ_CHECK(fuzz_spec_eq(spec, &back));
  } else if (strstr(d.msg, "must be >= ")) {
    fprintf(stderr, "server refuses what sbatch sends: %s\n", d.msg);
    abort();
  }
  px_jobspec_fini(&back);
  json_decref(sent);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = fuzz_text(data, size);
  if (!buf) return 0;
  const char *script = buf;
  char *argv[MAX_ARGS + 1];
  int argc = 0;
  for (size_t at = strlen(buf) + 1; at < size && argc < MAX_ARGS; at += strlen(buf + at) + 1)
    argv[argc++] = buf + at;
  argv[argc] = NULL;
  if (argc == 0) argv[argc++] = "sbatch";
  argv[argc] = NULL;

  struct px_cli_optlist file = {0}, cli = {0};
  struct px_cli_extra x = {0};
  struct px_jobspec spec;
  struct px_diag d = {0};
  int first = 0;
  px_jobspec_init(&spec);
  int rc = px_cli_parse_directives(script, &file, &d);
  if (!rc) rc = px_cli_parse_argv(pick_tool(argv[0]), argc, argv, &cli, &first, &d);
  if (!rc) FUZZ_CHECK(first >= 1 && first <= argc);
  if (!rc) rc = px_cli_apply(&file, &spec, &x, NOW_S, &d);
  if (!rc) rc = px_cli_apply(&cli, &spec, &x, NOW_S, &d);
  if (rc) FUZZ_CHECK(rc < 0 && d.msg[0]);
  else if (!(spec.script = strdup(script))) rc = PX_ENOMEM; /* sbatch sends the script too */
  else check_wire(&spec);
  px_cli_optlist_fini(&file);
  px_cli_optlist_fini(&cli);
  px_cli_extra_fini(&x);
  px_jobspec_fini(&spec);
  free(buf);
  return 0;
}
