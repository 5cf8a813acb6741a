/*
 * sacctmgr_edit.h - sacctmgr's changes (add, modify, delete), shared by
 * the command (cmd_sacctmgr_edit.c: the command line, the requests, the
 * question) and what it prints (fmt_sacctmgr_edit.c: Slurm 22.05's words,
 * and the refusals found in the association listing before asking).
 */
#ifndef PX_CLI_SACCTMGR_EDIT_H
#define PX_CLI_SACCTMGR_EDIT_H

#include <stdbool.h>
#include <stdio.h>

#include "cli/cli_json.h"

enum { PX_SAM_ADD, PX_SAM_MODIFY, PX_SAM_DELETE };
enum { PX_SAM_ACCOUNT, PX_SAM_USER, PX_SAM_QOS };

/* One command: names and accounts are comma lists; account, parent and QoS
 * names folded to lower case. */
struct px_sam {
  int op, entity;
  const char *names, *accounts, *parent, *defacct, *desc, *org;
  json_t *set;        /* settings, the API's names */
  json_t *assocs;     /* the association listing (cluster, what exists) */
  json_t *qos;        /* QoS changes: the QoS listing (what exists) */
  const char *cluster;
};

/* modify user ... set defaultaccount=A */
static inline bool px_sam_new_default(const struct px_sam *ch) {
  return ch->op == PX_SAM_MODIFY && ch->entity == PX_SAM_USER && ch->defacct;
}

/* Calls fn for each name (and each account of a user, else NULL); the sum. */
int px_sam_each(const struct px_sam *ch, int (*fn)(const struct px_sam *, const char *, const char *, FILE *),
                FILE *o);
/* The listing's row of account's association (user NULL or "": the
 * account's own), from *from on (advanced past it); NULL when none. */
const json_t *px_sam_assoc_find(const struct px_sam *ch, const char *account, const char *user, size_t *from);
/* out NULL: checks what the listing already says (1 after Slurm's words
 * when there is nothing to do); else prints the change. */
int px_sam_summary(const struct px_sam *ch, FILE *out);

#endif
