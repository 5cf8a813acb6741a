/*
 * load.c - the public entry points: read slurm.conf (or text), then the
 * topology and accounts files, then build; return the conf only when no
 * error was found.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf/parse.h"
#include "util/hostlist.h"

static int cb_init(struct px_cb *b, struct px_conf_diags *diags, bool from_text) {
  memset(b, 0, sizeof *b);
  b->diags = diags;
  b->from_text = from_text;
  b->max_names = PX_HOSTLIST_MAX_NAMES;
  if (!(b->c = calloc(1, sizeof *b->c))) return PX_ENOMEM;
  px_arena_init(&b->c->arena, 64 * 1024);
  px_slurm_defaults(b);
  return 0;
}

/* Moves the list of files read into the conf. */
static void keep_files(struct px_cb *b) {
  struct px_conf *c = b->c;
  c->files = px_cb_calloc(b, b->files.len ? b->files.len : 1, sizeof *c->files);
  for (size_t i = 0; c->files && i < b->files.len; i++) c->files[i] = px_cb_strdup(b, b->files.v[i]);
  c->nfiles = (uint32_t)b->files.len;
}

static int cb_finish(struct px_cb *b, struct px_conf **out) {
  int rc = 0;
  if (!b->oom) { /* even after errors, so that dangling references are reported too */
    px_build(b);
    keep_files(b);
  }
  if (b->oom) rc = PX_ENOMEM;
  else if (b->nerrors) rc = b->io_error ? PX_EIO : PX_EPARSE;
  if (rc == PX_ENOMEM && b->diags) px_cb_error(b, NULL, "out of memory while reading the configuration");
  px_nodevec_fini(&b->nodes);
  px_wherevec_fini(&b->node_where);
  px_smap_fini(&b->node_index);
  px_smap_fini(&b->warned);
  px_partvec_fini(&b->parts);
  px_switchvec_fini(&b->switches);
  px_blockvec_fini(&b->blocks);
  px_acctvec_fini(&b->accts);
  px_acctvec_fini(&b->users);
  px_qosvec_fini(&b->qos);
  px_strvec_free_all(&b->files);
  if (rc) px_conf_free(b->c);
  else *out = b->c;
  return rc;
}

/* topology.conf or accounts.conf: the named file, else the one beside slurm.conf if any. */
static void side_file(struct px_cb *b, const char *named, const struct px_where *w, const char *slurm_path,
                      const char *base, enum px_file_kind kind) {
  if (named) {
    px_cb_read_file(b, named, kind, w);
    return;
  }
  char path[4096];
  const char *slash = strrchr(slurm_path, '/');
  if (slash) snprintf(path, sizeof path, "%.*s/%s", (int)(slash - slurm_path), slurm_path, base);
  else snprintf(path, sizeof path, "%s", base);
  if (access(path, F_OK) == 0) px_cb_read_file(b, path, kind, NULL);
}

int px_conf_load(const char *path, struct px_conf **out, struct px_conf_diags *diags) {
  struct px_cb b;
  if (cb_init(&b, diags, false)) return PX_ENOMEM;
  px_cb_read_file(&b, path, PX_FILE_SLURM, NULL);
  if (b.files.len) {
    px_slurm_finish(&b);
    if (!b.topology_none || b.topology_file)
      side_file(&b, b.topology_file, &b.topology_w, path, "topology.conf", PX_FILE_TOPOLOGY);
    side_file(&b, b.accounts_file, &b.accounts_w, path, "accounts.conf", PX_FILE_ACCOUNTS);
  }
  return cb_finish(&b, out);
}

int px_conf_parse_text(const struct px_conf_text *t, struct px_conf **out, struct px_conf_diags *diags) {
  struct px_cb b;
  if (cb_init(&b, diags, true)) return PX_ENOMEM;
  if (t->max_nodes) b.max_names = t->max_nodes;
  const char *name = t->name ? t->name : "slurm.conf";
  const char *label = px_cb_strdup(&b, name);
  if (label) {
    px_cb_read_text(&b, label, t->slurm ? t->slurm : "", PX_FILE_SLURM);
    px_slurm_finish(&b);
    if (t->topology) px_cb_read_text(&b, "topology.conf", t->topology, PX_FILE_TOPOLOGY);
    if (t->accounts) px_cb_read_text(&b, "accounts.conf", t->accounts, PX_FILE_ACCOUNTS);
  }
  return cb_finish(&b, out);
}

int px_conf_parse_string(const char *text, const char *name, struct px_conf **out,
                         struct px_conf_diags *diags) {
  struct px_conf_text t = {text, NULL, NULL, name, 0};
  return px_conf_parse_text(&t, out, diags);
}
