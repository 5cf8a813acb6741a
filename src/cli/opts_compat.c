/*
 * opts_compat.c - option handlers whose values follow Slurm's own rules
 * closely enough to need more than a copy: --mail-type (a list of event
 * words, repeated lines adding up) and --wait-all-nodes (0 or 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli/opts_apply.h"

/* Slurm 22.05's words, in the order scontrol prints them. */
static const char *const mail_words[] = {
    "BEGIN", "END", "FAIL", "REQUEUE", "INVALID_DEPEND", "STAGE_OUT", "TIME_LIMIT",
    "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS",
};
#define NWORDS (sizeof mail_words / sizeof mail_words[0])
#define MAIL_ALL 0x3Fu /* BEGIN,END,FAIL,REQUEUE,INVALID_DEPEND,STAGE_OUT */

static int mail_bits(const char *list, unsigned *bits) {
  char copy[256], *save = NULL;
  snprintf(copy, sizeof copy, "%s", list);
  for (char *w = strtok_r(copy, ",", &save); w; w = strtok_r(NULL, ",", &save)) {
    size_t k = 0;
    while (k < NWORDS && strcasecmp(w, mail_words[k])) k++;
    if (k < NWORDS) *bits |= 1u << k;
    else if (!strcasecmp(w, "ALL")) *bits |= MAIL_ALL;
    else if (strcasecmp(w, "NONE")) return PX_EINVAL;
  }
  return 0;
}

/* --mail-type: checked word by word; a second --mail-type line adds its
 * words to the first, as Slurm's sbatch ORs them (scripts often give one
 * event per line). Stored as Slurm's upper-case list. */
int px_opt_mail_type(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                     struct px_diag *d) {
  (void)now;
  unsigned bits = 0;
  if (strlen(val) > 200 || mail_bits(val, &bits) || (s->mail_type && mail_bits(s->mail_type, &bits))) {
    x->exit_status = 255; /* Slurm's exit(-1) */
    return px_diag_set(d, PX_EINVAL, -1, "Invalid --mail-type specification");
  }
  char out[256] = "";
  for (size_t k = 0; k < NWORDS; k++)
    if (bits >> k & 1) snprintf(out + strlen(out), sizeof out - strlen(out), "%s%s", *out ? "," : "", mail_words[k]);
  free(s->mail_type);
  s->mail_type = *out ? strdup(out) : NULL;
  return *out && !s->mail_type ? PX_ENOMEM : 0;
}

/* --wait-all-nodes: Phalanx never boots or powers up nodes for a job, so its
 * allocated nodes are always ready and both values behave as Slurm's. */
int px_opt_wait_all_nodes(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,
                          struct px_diag *d) {
  (void)s, (void)x, (void)now;
  if (strcmp(val, "0") && strcmp(val, "1")) return px_diag_set(d, PX_EINVAL, -1, "Invalid --wait-all-nodes specification");
  return 0;
}
