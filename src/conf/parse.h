/*
 * parse.h - private to src/conf/: the builder that the readers of slurm.conf,
 * topology.conf and the accounts file fill, and that build.c turns into a
 * struct px_conf.
 *
 * Reading is two-phase. The readers check syntax and values line by line and
 * keep what they read in "raw" records (names still unresolved, with the file
 * and line they came from); build.c resolves names into indexes and derives
 * the rest. Both phases report every error they find and carry on, so one
 * run lists them all; the result is returned only when there was none.
 */
#ifndef PX_CONF_PARSE_H
#define PX_CONF_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "conf/conf.h"
#include "util/map.h"
#include "util/vec.h"

/* Where a line came from. The file string lives in the conf arena. */
struct px_where {
  const char *file;
  int line;
};

struct px_kv {
  const char *key, *val;
};

enum px_file_kind { PX_FILE_SLURM, PX_FILE_TOPOLOGY, PX_FILE_ACCOUNTS };

/* NodeName= line state, also the NodeName=DEFAULT template. */
struct px_node_tmpl {
  struct px_conf_node n;
  uint32_t boards, sockets_per_board;
  bool cpus_given, sockets_given;
};

struct px_part_raw {
  struct px_conf_partition p;
  struct px_where w;
  const char *nodes, *allow_accounts, *deny_accounts, *allow_qos; /* as written */
  bool preempt_mode_given;
};

struct px_switch_raw {
  const char *name;
  struct px_where w;
  const char *nodes, *switches;
};

struct px_block_raw {
  const char *name;
  struct px_where w;
  const char *nodes;
};

struct px_acct_raw {
  struct px_conf_account a;
  struct px_where w;
  const char *parent;       /* as written, or NULL (root) */
  const char *users;        /* Users= as written */
  const char *default_account; /* user lines: DefaultAccount= */
  uint32_t user_order;      /* user lines: file order */
};

struct px_qos_raw {
  struct px_conf_qos q;
  struct px_where w;
  const char *preempt;      /* as written */
  bool mode_given;
};

PX_VEC_DECLARE(px_nodevec, struct px_conf_node)
PX_VEC_DECLARE(px_wherevec, struct px_where)
PX_VEC_DECLARE(px_partvec, struct px_part_raw)
PX_VEC_DECLARE(px_switchvec, struct px_switch_raw)
PX_VEC_DECLARE(px_blockvec, struct px_block_raw)
PX_VEC_DECLARE(px_acctvec, struct px_acct_raw)
PX_VEC_DECLARE(px_qosvec, struct px_qos_raw)
PX_VEC_DECLARE(px_kvvec, struct px_kv)

struct px_cb {
  struct px_conf *c;               /* being built; its arena owns every string */
  struct px_conf_diags *diags;     /* may be NULL */
  uint32_t nerrors;
  bool oom;
  bool io_error;                   /* a file could not be read */
  bool from_text;                  /* no file access: Include etc. are errors */
  int depth;                       /* Include nesting */
  size_t max_names;                /* cap on nodes, and on names per hostlist */
  struct px_smap warned;           /* ignored keys already reported */
  struct px_strvec files;          /* heap copies, moved into c->files */

  struct px_nodevec nodes;
  struct px_wherevec node_where;
  struct px_smap node_index;       /* name -> index */
  struct px_node_tmpl node_def;
  struct px_partvec parts;
  struct px_part_raw part_def;
  struct px_switchvec switches;
  struct px_blockvec blocks;
  struct px_acctvec accts;
  struct px_acctvec users;
  struct px_qosvec qos;

  /* globals that need a check once everything is read */
  struct px_where sched_w, order_w, backfill_w;
  bool backfill_given, order_given, topology_none;
  const char *topology_file, *accounts_file;
  struct px_where topology_w, accounts_w;
};

/* Diagnostics (diag.c). */
void px_cb_error(struct px_cb *b, const struct px_where *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void px_cb_warn(struct px_cb *b, const struct px_where *w, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Reports a value error: "Key=value: expected ..." */
void px_cb_bad(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, const char *expected);
char *px_cb_strdup(struct px_cb *b, const char *s);
void *px_cb_calloc(struct px_cb *b, size_t n, size_t size);

/* Reading files and text into logical lines (read.c). */
void px_cb_read_text(struct px_cb *b, const char *file, const char *text, enum px_file_kind kind);
void px_cb_read_file(struct px_cb *b, const char *path, enum px_file_kind kind,
                     const struct px_where *from);

/* A key's setter: obj is the record (or struct px_cb for globals). */
struct px_key;
typedef void (*px_key_set)(struct px_cb *b, const struct px_where *w, const struct px_kv *kv,
                           void *obj, const struct px_key *k);
struct px_key {
  const char *name;
  px_key_set set;
  size_t off;                      /* for the generic setters */
  const void *arg;                 /* an enum table, a limit */
};
struct px_keytab {
  const char *what;                /* "NodeName" for messages: "on a NodeName line" */
  const struct px_key *keys;
  size_t nkeys;
  const char *const *ignored;      /* Slurm keys accepted with a warning */
};
/* Applies one pair: finds the key, warns for ignored ones, suggests for unknown ones. */
void px_cb_apply(struct px_cb *b, const struct px_where *w, const struct px_kv *kv,
                 const struct px_keytab *tab, void *obj);
/* The setter of a record key (NodeName, ...) found anywhere but first on its line. */
void px_set_misplaced(struct px_cb *, const struct px_where *, const struct px_kv *, void *,
                      const struct px_key *);
/* Edit distance, case-insensitive (keys.c). */
size_t px_edit_distance(const char *a, const char *b);

/* Generic setters (values.c): fields at k->off inside obj. */
void px_set_u32(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_u64(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_u64_limit(struct px_cb *, const struct px_where *, const struct px_kv *, void *,
                      const struct px_key *);
void px_set_str(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_lower(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_bool(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_dur(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_secs(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_mem(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
void px_set_double(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
/* An enum: k->arg is a struct px_enum table ending in {NULL, 0}; the field is an int-sized enum. */
struct px_enum {
  const char *name;
  int value;
};
/* PreemptMode: OFF|CANCEL|REQUEUE|SUSPEND[,GANG]; k->arg non-NULL on partition lines. */
void px_set_preempt_mode(struct px_cb *, const struct px_where *, const struct px_kv *, void *,
                         const struct px_key *);
void px_set_enum(struct px_cb *, const struct px_where *, const struct px_kv *, void *, const struct px_key *);
/* Value parsers used by the special setters; false after reporting. */
bool px_parse_u64(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, uint64_t max,
                  uint64_t *out);
bool px_parse_enum(struct px_cb *b, const struct px_where *w, const struct px_kv *kv,
                   const struct px_enum *e, int *out);
/* "gres/gpu=64,cpu=512,mem=100G,node=4"; unset fields keep their value. */
struct px_tres {
  uint64_t gpus, cpus, mem_mib, nodes;
};
bool px_parse_tres(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, struct px_tres *t);
/* Splits a comma list into arena strings; false on an empty item. */
bool px_split_list(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, const char ***out,
                   uint32_t *n);
extern const struct px_enum px_preempt_modes[];

/* Per-file line handlers (slurm.c, topology.c, accounts.c). */
void px_slurm_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n);
void px_topology_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n);
void px_accounts_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n);
void px_node_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n);
void px_part_line(struct px_cb *b, const struct px_where *w, const struct px_kv *kv, size_t n);
void px_slurm_defaults(struct px_cb *b);
void px_qos_defaults(struct px_conf_qos *q);
/* An account or user leaf with no limits, share 1, no parent. */
void px_account_defaults(struct px_conf_account *a);
/* Checks that need every global key (after slurm.conf). */
void px_slurm_finish(struct px_cb *b);

/* Resolution (build.c and build_acct.c): fills b->c; errors go to b. */
void px_build(struct px_cb *b);
void px_build_accounts(struct px_cb *b);
void px_build_topology(struct px_cb *b);
/* Expands a hostlist value into node indexes (ascending, deduplicated) in the arena. */
bool px_resolve_nodes(struct px_cb *b, const struct px_where *w, const char *key, const char *expr,
                      uint32_t **out, uint32_t *n);

#endif
