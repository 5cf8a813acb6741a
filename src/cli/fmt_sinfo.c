/*
 * fmt_sinfo.c - sinfo's output as Slurm 22.05 prints it.
 *
 * Slurm groups the nodes of each partition whose printed fields are equal
 * into one line (so the default format gives one line per partition and
 * node state). We do the same generically: every field except the
 * aggregates (node list, node count, A/I/O/T counts) is rendered per node,
 * and nodes with the same rendering share a line. Lines follow the
 * partitions' order, then node state (Slurm's "#P,-t"), then first node.
 */
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/fmt_job.h"

/* GresUsed has no -o letter (Slurm's %U is the reason's user): a key no
 * format string can name. */
#define KEY_GRES_USED '\x01'

static const struct {
  char key;
  const char *header;
} sinfo_headers[] = {
    {'P', "PARTITION"},    {'R', "PARTITION"}, {'a', "AVAIL"},      {'l', "TIMELIMIT"},
    {'L', "DEFAULTTIME"},  {'D', "NODES"},     {'t', "STATE"},      {'T', "STATE"},
    {'N', "NODELIST"},     {'G', "GRES"},      {KEY_GRES_USED, "GRES_USED"}, {'c', "CPUS"},
    {'C', "CPUS(A/I/O/T)"}, {'F', "NODES(A/I/O/T)"}, {'m', "MEMORY"}, {'e', "FREE_MEM"},
    {'f', "AVAIL_FEATURES"}, {'E', "REASON"},  {'s', "JOB_SIZE"},   {'r', "ROOT"},
    {'h', "OVERSUBS"},     {'g', "GROUPS"},    {'i', "RESERVATION"}, {'z', "S:C:T"},
    {'d', "TMP_DISK"},     {'w', "WEIGHT"},    {'u', "USER"},       {'H', "TIMESTAMP"},
    {'n', "HOSTNAMES"},    {'o', "NODE_ADDR"}, {'U', "USER"},
    {'X', "SOCKETS"},      {'Y', "CORES"},     {'Z', "THREADS"},    {'b', "ACTIVE_FEATURES"},
    {'O', "CPU_LOAD"},
};

static const struct px_col_name sinfo_long_names[] = {
    {"NodeList", 'N'},  {"StateLong", 'T'},   {"StateCompact", 't'}, {"CPUsState", 'C'},
    {"Gres", 'G'},      {"GresUsed", KEY_GRES_USED},    {"Partition", 'P'},    {"PartitionName", 'R'},
    {"Available", 'a'}, {"Time", 'l'},        {"DefaultTime", 'L'},  {"Nodes", 'D'},
    {"CPUs", 'c'},      {"Memory", 'm'},      {"FreeMem", 'e'},      {"Features", 'f'},
    {"Reason", 'E'},    {"NodeAIOT", 'F'},    {"NodeHost", 'n'},     {"NodeAddr", 'o'},
    {"User", 'u'},      {"UserLong", 'U'},    {"Timestamp", 'H'},
    {NULL, 0}};

static const char *sinfo_header(char key) {
  for (size_t i = 0; i < sizeof sinfo_headers / sizeof sinfo_headers[0]; i++)
    if (sinfo_headers[i].key == key) return sinfo_headers[i].header;
  return NULL;
}

/* Node states: long word, compact word, rank for "-t" ordering, A/I/O class. */
static const struct {
  const char *state, *lng, *compact;
  int rank;
  char class;
} node_states[] = {
    {"IDLE", "idle", "idle", 2, 'I'},          {"MIXED", "mixed", "mix", 5, 'A'},
    {"ALLOCATED", "allocated", "alloc", 3, 'A'}, {"COMPLETING", "completing", "comp", 3, 'A'},
    {"DOWN", "down", "down", 1, 'O'},           {"DRAINED", "drained", "drain", 2, 'O'},
    {"DRAINING", "draining", "drng", 3, 'A'},   {"FUTURE", "future", "futr", 6, 'O'},
    {"UNKNOWN", "unknown", "unk", 0, 'O'},
};
#define NNODE_STATES (sizeof node_states / sizeof node_states[0])

static size_t node_state_index(const char *s) {
  for (size_t i = 0; i < NNODE_STATES; i++)
    if (!strcasecmp(s, node_states[i].state)) return i;
  return NNODE_STATES - 1;
}

/* What one output line covers. */
struct group {
  const struct px_partition_info *part;
  const struct px_node_info *first;
  char *key;
  char **names;
  size_t nnames;
  uint32_t aiot[4];           /* nodes: allocated, idle, other, total */
  uint32_t cpus[4];           /* CPUs likewise */
};

static bool node_in_partition(const struct px_node_info *n, const char *part) {
  const char *p = n->partitions;
  size_t len = strlen(part);
  while (p && *p) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == len && !strncmp(p, part, len)) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

static void gres(char *buf, size_t n, const struct px_node_info *nd, bool used) {
  if (!nd->gpus) {
    snprintf(buf, n, "(null)");
  } else if (nd->gres && nd->gres_used) {
    snprintf(buf, n, "%s", used ? nd->gres_used : nd->gres);
  } else if (!used) {
    snprintf(buf, n, "gpu:%s%s%u", nd->gpu_type ? nd->gpu_type : "", nd->gpu_type ? ":" : "",
             nd->gpus);
  } else {
    snprintf(buf, n, "gpu:%s%s%u(IDX:%s)", nd->gpu_type ? nd->gpu_type : "",
             nd->gpu_type ? ":" : "", nd->gpus_alloc, nd->gpus_alloc ? "?" : "N/A");
  }
}

static void part_field(char key, const struct px_partition_info *p, char *buf, size_t n) {
  switch (key) {
  case 'P': snprintf(buf, n, "%s%s", p->name, p->is_default ? "*" : ""); break;
  case 'R': snprintf(buf, n, "%s", p->name); break;
  case 'a': snprintf(buf, n, "%s", p->up ? "up" : "down"); break;
  case 'l': px_cli_fmt_sinfo_time(buf, n, p->max_time_s); break;
  case 'L': px_cli_fmt_sinfo_time(buf, n, p->default_time_s); break;
  case 's':
    if (p->max_nodes && p->max_nodes != UINT32_MAX) snprintf(buf, n, "1-%u", p->max_nodes);
    else snprintf(buf, n, "1-infinite");
    break;
  case 'r': snprintf(buf, n, "no"); break;
  case 'h': snprintf(buf, n, "NO"); break;
  case 'g': snprintf(buf, n, "all"); break;
  default: buf[0] = '\0'; break;
  }
}

/* Who set the node's reason: %u the name, %U "name(uid)" as Slurm prints
 * it (the uid from this host's users; the name alone when it has none). */
static void reason_user(char *buf, size_t n, const struct px_node_info *nd, bool with_uid) {
  const char *u = nd->reason && *nd->reason && nd->reason_user && *nd->reason_user ? nd->reason_user : NULL;
  struct passwd pw, *res = NULL;
  char pwbuf[1024];
  if (!u) snprintf(buf, n, "Unknown");
  else if (with_uid && getpwnam_r(u, &pw, pwbuf, sizeof pwbuf, &res) == 0 && res)
    snprintf(buf, n, "%s(%u)", u, (unsigned)pw.pw_uid);
  else snprintf(buf, n, "%s", u);
}

/* Per-node (groupable) fields. */
static void node_field(char key, const struct px_partition_info *p, const struct px_node_info *nd,
                       char *buf, size_t n) {
  size_t si = node_state_index(nd->state);
  switch (key) {
  case 't': snprintf(buf, n, "%s", node_states[si].compact); break;
  case 'T': snprintf(buf, n, "%s", node_states[si].lng); break;
  case 'G': gres(buf, n, nd, false); break;
  case KEY_GRES_USED: gres(buf, n, nd, true); break;
  case 'c': snprintf(buf, n, "%u", nd->cpus); break;
  case 'm': snprintf(buf, n, "%llu", (unsigned long long)nd->mem_mib); break;
  case 'e': snprintf(buf, n, "%llu", (unsigned long long)(nd->mem_mib - nd->mem_alloc_mib)); break;
  case 'f': snprintf(buf, n, "%s", PX_STR(nd->features)); break;
  case 'E': snprintf(buf, n, "%s", nd->reason && *nd->reason ? nd->reason : "none"); break;
  case 'z': snprintf(buf, n, "1:%u:1", nd->cpus); break;
  case 'X': case 'Z': snprintf(buf, n, "1"); break; /* as %z: one socket, one thread a core */
  case 'Y': snprintf(buf, n, "%u", nd->cpus); break;
  case 'b': snprintf(buf, n, "%s", PX_STR(nd->features)); break; /* features are always active */
  case 'O': snprintf(buf, n, "N/A"); break; /* no load is reported (Slurm's N/A when it has none) */
  case 'd': snprintf(buf, n, "0"); break;
  case 'w': snprintf(buf, n, "1"); break;
  case 'u': case 'U': reason_user(buf, n, nd, key == 'U'); break;
  case 'H': px_cli_fmt_iso(buf, n, nd->reason && *nd->reason ? nd->reason_time : 0, "Unknown"); break;
  case 'n': snprintf(buf, n, "%s", nd->name); break;
  case 'o': snprintf(buf, n, "%s", nd->addr ? nd->addr : nd->name); break;
  case 'i': buf[0] = '\0'; break;
  default:
    if (p) part_field(key, p, buf, n);
    else buf[0] = '\0';
    break;
  }
}

static bool is_aggregate(char key) { return key == 'N' || key == 'D' || key == 'F' || key == 'C'; }

static void group_field(char key, const struct group *g, char *buf, size_t n) {
  switch (key) {
  case 'N': {
    char *hl = px_cli_hostlist_compress(g->names, g->nnames);
    snprintf(buf, n, "%s", hl ? hl : "");
    free(hl);
    break;
  }
  case 'D': snprintf(buf, n, "%zu", g->nnames); break;
  case 'F': snprintf(buf, n, "%u/%u/%u/%u", g->aiot[0], g->aiot[1], g->aiot[2], g->aiot[3]); break;
  case 'C': snprintf(buf, n, "%u/%u/%u/%u", g->cpus[0], g->cpus[1], g->cpus[2], g->cpus[3]); break;
  default: node_field(key, g->part, g->first, buf, n); break;
  }
}

struct groups {
  struct group *v;
  size_t len, cap;
};

static void groups_fini(struct groups *gs) {
  for (size_t i = 0; i < gs->len; i++) {
    free(gs->v[i].key);
    free(gs->v[i].names); /* names point into the node views */
  }
  free(gs->v);
}

static char *group_key(const struct px_cols *cols, const struct px_partition_info *p,
                       const struct px_node_info *nd, bool per_node) {
  char *key = NULL, buf[512];
  size_t len = 0;
  FILE *f = open_memstream(&key, &len);
  if (!f) return NULL;
  if (per_node) fprintf(f, "%s\x1f", nd->name);
  for (size_t i = 0; i < cols->len; i++) {
    if (!cols->v[i].key || is_aggregate(cols->v[i].key)) continue;
    node_field(cols->v[i].key, p, nd, buf, sizeof buf);
    fprintf(f, "%s\x1f", buf);
  }
  fclose(f);
  return key;
}

static int add_node(struct groups *gs, size_t from, const struct px_partition_info *p,
                    const struct px_node_info *nd, char *key) {
  struct group *g = NULL;
  for (size_t i = from; i < gs->len && !g; i++)
    if (!strcmp(gs->v[i].key, key)) g = &gs->v[i];
  if (g) {
    free(key);
  } else {
    if (gs->len == gs->cap) {
      size_t cap = gs->cap ? gs->cap * 2 : 16;
      struct group *v = realloc(gs->v, cap * sizeof *v);
      if (!v) return free(key), PX_ENOMEM;
      gs->v = v;
      gs->cap = cap;
    }
    g = &gs->v[gs->len++];
    *g = (struct group){.part = p, .first = nd, .key = key};
  }
  char **names = realloc(g->names, (g->nnames + 1) * sizeof *names);
  if (!names) return PX_ENOMEM;
  g->names = names;
  g->names[g->nnames++] = nd->name;
  int cls = node_states[node_state_index(nd->state)].class;
  int c = cls == 'A' ? 0 : cls == 'I' ? 1 : 2;
  g->aiot[c]++;
  g->aiot[3]++;
  uint32_t alloc = nd->cpus_alloc > nd->cpus ? nd->cpus : nd->cpus_alloc;
  if (c == 2) {
    g->cpus[2] += nd->cpus;
  } else {
    g->cpus[0] += alloc;
    g->cpus[1] += nd->cpus - alloc;
  }
  g->cpus[3] += nd->cpus;
  return 0;
}

static int cmp_groups(const void *pa, const void *pb) {
  const struct group *a = pa, *b = pb;
  int ra = node_states[node_state_index(a->first->state)].rank;
  int rb = node_states[node_state_index(b->first->state)].rank;
  if (ra != rb) return rb - ra;
  return strcmp(a->first->name, b->first->name);
}

/* Builds the lines of one partition (or of all nodes when p is NULL, for -R). */
static int build_groups(struct groups *gs, const struct px_cols *cols,
                        const struct px_partition_info *p, const struct px_node_info *nodes,
                        size_t nnodes, const struct px_sinfo_opts *o) {
  size_t from = gs->len;
  for (size_t i = 0; i < nnodes; i++) {
    const struct px_node_info *nd = &nodes[i];
    if (p && !node_in_partition(nd, p->name)) continue;
    if (!p && !(nd->reason && *nd->reason)) continue;
    char *key = group_key(cols, p, nd, o->node_list);
    if (!key) return PX_ENOMEM;
    int rc = add_node(gs, from, p, nd, key);
    if (rc) return rc;
  }
  if (!o->node_list)
    qsort(gs->v + from, gs->len - from, sizeof *gs->v, cmp_groups);
  return 0;
}

static int cmp_node_lines(const void *pa, const void *pb) {
  const struct group *a = pa, *b = pb;
  int c = strcmp(a->first->name, b->first->name);
  if (c) return c;
  return (a->part > b->part) - (a->part < b->part); /* partitions in configured order */
}

/* The default format for the mode, with Slurm's computed first-column width. */
static void default_format(char *buf, size_t n, const struct px_sinfo_opts *o,
                           const struct px_partition_info *parts, size_t nparts,
                           const struct px_node_info *nodes, size_t nnodes) {
  size_t w = 9;
  if (o->node_list) {
    for (size_t i = 0; i < nnodes; i++)
      if (strlen(nodes[i].name) > w) w = strlen(nodes[i].name);
    snprintf(buf, n, o->long_list ? "%%%zuN %%.6D %%.9P %%.11T %%.4c %%.8z %%.6m %%.8d %%.6w %%.8f %%20E"
                                  : "%%%zuN %%.6D %%.9P %%6t", w);
    return;
  }
  for (size_t i = 0; i < nparts; i++) {
    size_t l = strlen(parts[i].name) + (parts[i].is_default ? 1 : 0);
    if (l > w) w = l;
  }
  if (o->reasons) /* Slurm 22.05's sinfo -R and sinfo -R -l */
    snprintf(buf, n, o->long_list ? "%%20E %%12U %%19H %%6t %%N" : "%%20E %%9u %%19H %%N");
  else if (o->summarize)
    snprintf(buf, n, "%%%zuP %%.5a %%.10l %%.16F %%N", w);
  else if (o->long_list)
    snprintf(buf, n, "%%%zuP %%.5a %%.10l %%.10s %%.4r %%.8h %%.10g %%.6D %%.11T %%.11i %%N", w);
  else
    snprintf(buf, n, "%%%zuP %%.5a %%.10l %%.6D %%.6t %%N", w);
}

static void print_line(FILE *out, const struct px_cols *cols, const struct group *g) {
  char buf[4096];
  for (size_t i = 0; i < cols->len; i++) {
    const struct px_col *c = &cols->v[i];
    if (!c->key) {
      fputs(c->text, out);
    } else if (g) {
      group_field(c->key, g, buf, sizeof buf);
      px_cols_put(out, c, buf);
    } else {
      px_cols_put(out, c, sinfo_header(c->key));
    }
  }
  fputc('\n', out);
}

int px_fmt_sinfo(FILE *out, const struct px_partition_info *parts, size_t nparts,
                 const struct px_node_info *nodes, size_t nnodes, const struct px_sinfo_opts *o,
                 struct px_diag *d) {
  char dflt[160];
  default_format(dflt, sizeof dflt, o, parts, nparts, nodes, nnodes);
  struct px_cols cols;
  int rc = o->long_format ? px_cols_parse_long(o->long_format, sinfo_long_names, 20, &cols, d)
                          : px_cols_parse(o->format ? o->format : dflt, &cols, d);
  if (rc) return rc;
  struct groups gs = {0};
  for (size_t i = 0; i < cols.len && !rc; i++)
    if (cols.v[i].key && !sinfo_header(cols.v[i].key))
      rc = px_diag_set(d, PX_EINVAL, -1, "Invalid node format specification: %c", cols.v[i].key);
  if (o->reasons && !rc)
    rc = build_groups(&gs, &cols, NULL, nodes, nnodes, o);
  for (size_t i = 0; i < nparts && !rc && !o->reasons; i++)
    rc = build_groups(&gs, &cols, &parts[i], nodes, nnodes, o);
  if (rc) goto done;
  if (o->node_list) qsort(gs.v, gs.len, sizeof *gs.v, cmp_node_lines);
  if (o->long_list) {
    time_t t = (time_t)o->now;
    struct tm tm;
    char date[64];
    if (localtime_r(&t, &tm) && strftime(date, sizeof date, "%a %b %d %H:%M:%S %Y", &tm))
      fprintf(out, "%s\n", date);
  }
  if (!o->noheader) print_line(out, &cols, NULL);
  for (size_t i = 0; i < gs.len; i++) print_line(out, &cols, &gs.v[i]);
done:
  groups_fini(&gs);
  px_cols_fini(&cols);
  return rc;
}
