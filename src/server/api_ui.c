/*
 * api_ui.c - what the web dashboard needs beyond the API (docs/dashboard.md):
 *   GET /ui/ and /ui/FILE: the dashboard's files, built into the binary
 *     (ui_assets.h), sent gzip'd to a browser that accepts it, with an ETag
 *     so that a reload costs a 304; no authentication (the files hold no
 *     data: the page calls the API with the user's token);
 *   POST /v1/ui/link: a token for the caller and the dashboard's address
 *     with it (`phalanx ui` prints it: the Unix-socket user's way in);
 *   GET /v1/jobs/{id}/output?lines=N: the last lines of a job's standard
 *     output, for its owner, its account's coordinators and operators only.
 * Everything else the pages show they compute from the API's own
 * endpoints, in the browser.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "server/api.h"
#include "server/tables.h"
#include "server/ui_assets.h"

/* ---- static files ---- */

static const struct px_ui_asset *asset_named(const char *name) {
  for (size_t i = 0; i < px_ui_nassets; i++)
    if (!strcmp(px_ui_assets[i].name, name)) return &px_ui_assets[i];
  return NULL;
}

static bool accepts_gzip(struct px_api_call *c) {
  const char *ae = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "Accept-Encoding");
  return ae && strstr(ae, "gzip");
}

/* The page reaches only its own server, runs only its own script and is
 * never framed; inline styles are allowed (uPlot positions with them). */
static void security_headers(struct MHD_Response *r) {
  MHD_add_response_header(r, "Content-Security-Policy",
                          "default-src 'none'; script-src 'self'; connect-src 'self'; "
                          "img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                          "frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
  MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
}

static void send_asset(struct px_api_call *c, const struct px_ui_asset *a) {
  const char *inm = MHD_lookup_connection_value(c->conn, MHD_HEADER_KIND, "If-None-Match");
  bool fresh = inm && !strcmp(inm, a->etag), gz = a->gz_len && accepts_gzip(c);
  struct MHD_Response *r;
  if (fresh) r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
  else
    r = MHD_create_response_from_buffer(gz ? a->gz_len : a->len, (void *)(gz ? a->gz : a->data),
                                        MHD_RESPMEM_PERSISTENT);
  if (!r) return px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  MHD_add_response_header(r, "Content-Type", a->ctype);
  MHD_add_response_header(r, "ETag", a->etag);
  MHD_add_response_header(r, "Cache-Control", "no-cache"); /* revalidate: a 304 is cheap */
  MHD_add_response_header(r, "Vary", "Accept-Encoding");
  if (gz && !fresh) MHD_add_response_header(r, "Content-Encoding", "gzip");
  security_headers(r);
  c->status = fresh ? 304 : 200;
  c->response = r;
}

void px_api_ui_file(struct px_api_call *c) {
  if (!strcmp(c->url, "/ui")) { /* relative asset links need the slash */
    struct MHD_Response *r = MHD_create_response_from_buffer(0, "", MHD_RESPMEM_PERSISTENT);
    if (!r) return px_api_error(c, 503, "UNAVAILABLE", "out of memory");
    MHD_add_response_header(r, "Location", "/ui/");
    c->status = 301;
    c->response = r;
    return;
  }
  if (!px_ui_nassets)
    return px_api_error(c, 404, "NOT_FOUND",
                        "this server was built without its dashboard (nodejs and npm were "
                        "missing at build time: run 'make deps', then rebuild)");
  const struct px_ui_asset *a = asset_named(c->arg[0] ? c->arg : "index.html");
  if (!a) return px_api_error(c, 404, "NOT_FOUND", "no such dashboard file: %.64s", c->arg);
  send_asset(c, a);
}

/* ---- POST /v1/ui/link ---- */

/* "http(s)://HOST:PORT/ui/" from the TCP listener (https with TLSCertFile=); a wildcard address becomes
 * this host's name. False when the server has no TCP listener. */
static bool dashboard_base(struct px_server *s, char *out, size_t n) {
  const char *listen = s->opts.listen, *colon = listen ? strrchr(listen, ':') : NULL;
  if (!colon) return false;
  char host[256];
  snprintf(host, sizeof host, "%.*s", (int)(colon - listen), listen);
  if (!host[0] || !strcmp(host, "0.0.0.0") || !strcmp(host, "::") || !strcmp(host, "[::]")) {
    if (gethostname(host, sizeof host)) snprintf(host, sizeof host, "localhost");
    host[sizeof host - 1] = '\0';
  }
  bool v6 = strchr(host, ':') && host[0] != '[';
  snprintf(out, n, "%s://%s%s%s%s/ui/", s->conf->phalanx.tls_cert_file ? "https" : "http",
           v6 ? "[" : "", host, v6 ? "]" : "", colon);
  return true;
}

void px_api_ui_link(struct px_api_call *c) {
  const char *v = px_api_arg(c, "lifetime_s");
  char *end = NULL, base[512];
  long long life = v ? strtoll(v, &end, 10) : 12 * 3600;
  if (v && (*end || life < 60 || life > 30 * 86400))
    return px_api_error(c, 400, "RANGE", "lifetime_s: 60 to 2592000 seconds");
  if (!c->s->jwt_key_len)
    return px_api_error(c, 503, "UNAVAILABLE", "JWT is not enabled on this server");
  if (!dashboard_base(c->s, base, sizeof base))
    return px_api_error(c, 409, "STATE", "the server has no TCP listener (Listen=) to serve the dashboard on");
  int64_t now = time(NULL);
  char *tok = px_auth_mint_jwt(c->s->jwt_key, c->s->jwt_key_len, c->who.user, c->who.uid, NULL,
                               now, life);
  if (!tok) return px_api_error(c, 503, "UNAVAILABLE", "cannot mint a token");
  char *url = NULL;
  /* In the fragment: a browser never sends it to the server nor in a Referer. */
  if (asprintf(&url, "%s#token=%s", base, tok) < 0) url = NULL;
  json_t *o = url ? json_pack("{ss ss ss sI}", "url", url, "base", base, "user", c->who.user,
                              "expires", (json_int_t)(now + life))
                  : NULL;
  c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
  c->status = 201;
  json_decref(o);
  free(url);
  free(tok);
}

/* ---- GET /v1/jobs/{id}/output ---- */

/* Appends the decimal n, zero-padded to width. */
static size_t put_num(char *out, size_t n, size_t at, unsigned long long v, int width) {
  int k = snprintf(out + at, at < n ? n - at : 0, "%0*llu", width, v);
  return at + (k > 0 ? (size_t)k : 0);
}

/* The output file of a batch job, as the agent names it (Slurm's patterns:
 * %j %A %a %x %u %% and zero padding); false for patterns naming a node or
 * task (the file is then per node: not one file the server can name). */
static bool output_path(const struct px_job_info *j, char *out, size_t n) {
  const struct px_jobspec *sp = &j->spec;
  bool array = j->array_job_id && j->array_task_id != UINT32_MAX;
  const char *p = sp->stdout_path ? sp->stdout_path : array ? "slurm-%A_%a.out" : "slurm-%j.out";
  size_t at = 0;
  if (p[0] != '/') at = (size_t)snprintf(out, n, "%s/", sp->workdir ? sp->workdir : "/");
  for (; *p && at < n; p++) {
    if (*p != '%') {
      out[at++] = *p;
      continue;
    }
    int width = 0;
    while (p[1] >= '0' && p[1] <= '9') width = width * 10 + (*++p - '0');
    if (width > 10) width = 10;
    switch (*++p) {
      case 'j': at = put_num(out, n, at, j->job_id, width); break;
      case 'A': at = put_num(out, n, at, array ? j->array_job_id : j->job_id, width); break;
      case 'a': at = put_num(out, n, at, array ? j->array_task_id : 0, width); break;
      case 'x': at += (size_t)snprintf(out + at, n - at, "%s", sp->name ? sp->name : ""); break;
      case 'u': at += (size_t)snprintf(out + at, n - at, "%s", sp->user ? sp->user : ""); break;
      case '%': out[at++] = '%'; break;
      default: return false;
    }
  }
  if (at >= n) return false;
  out[at] = '\0';
  return true;
}

/* The last `lines` lines within the file's last 64 KiB. The file must be a
 * regular file owned by the job's user, opened without following a final
 * symbolic link: a job's --output cannot make the server read another
 * user's file. */
static char *read_tail(const char *path, uint32_t uid, int lines, char *why, size_t whylen) {
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  struct stat st;
  if (fd < 0) return snprintf(why, whylen, "%s", strerror(errno)), NULL;
  if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != uid) {
    close(fd);
    return snprintf(why, whylen, "not a regular file of the job's user"), NULL;
  }
  enum { TAIL_MAX = 64 * 1024 };
  off_t from = st.st_size > TAIL_MAX ? st.st_size - TAIL_MAX : 0;
  char *buf = malloc(TAIL_MAX + 1);
  ssize_t got = buf ? pread(fd, buf, TAIL_MAX, from) : -1;
  close(fd);
  if (got < 0) return free(buf), snprintf(why, whylen, "read failed"), NULL;
  buf[got] = '\0';
  /* Read from the middle: the first line is cut (maybe inside a UTF-8
   * character); it is never shown. */
  char *first = buf, *start = buf + got, *nl;
  if (from > 0) first = (nl = memchr(buf, '\n', (size_t)got)) ? nl + 1 : start;
  if (start > first && start[-1] == '\n') start--; /* the last line's own newline */
  for (int k = 0; k < lines && start > first;) if (*--start == '\n') k++;
  if (start < buf + got && *start == '\n' && start >= first) start++;
  memmove(buf, start, (size_t)(buf + got - start) + 1);
  return buf;
}

static bool may_read_output(struct px_api_call *c, const struct px_job_info *j) {
  if (c->who.roles & PX_ROLE_OPERATOR) return true;
  if (j->spec.user && !strcmp(j->spec.user, c->who.user)) return true;
  pthread_rwlock_rdlock(&c->s->acct_lock); /* the tree changes online (tables.h) */
  bool yes = px_auth_is_coordinator(c->s->auth, &c->who, j->spec.account);
  pthread_rwlock_unlock(&c->s->acct_lock);
  return yes;
}

static void answer_output(struct px_api_call *c, const struct px_job_info *j, int lines) {
  char path[4096], why[128] = "";
  if (!may_read_output(c, j))
    return px_api_error(c, 403, "FORBIDDEN",
                        "only the job's owner, its account's coordinators and operators read "
                        "its output (rule output-owner)");
  if (!output_path(j, path, sizeof path))
    return px_api_error(c, 409, "STATE", "output: its pattern names a node or task; read it there");
  char *text = read_tail(path, j->spec.uid, lines, why, sizeof why);
  json_t *t = text ? json_string(text) : NULL; /* NULL too when not UTF-8 */
  if (text && !t) snprintf(why, sizeof why, "not UTF-8 text");
  json_t *o = json_pack("{sI ss}", "job_id", (json_int_t)j->job_id, "path", path);
  if (o) json_object_set_new(o, t ? "lines" : "unavailable", t ? t : json_string(why));
  else json_decref(t);
  c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
  c->status = 200;
  json_decref(o);
  free(text);
}

void px_api_ui_output(struct px_api_call *c) {
  char *end;
  const char *v = px_api_arg(c, "lines");
  unsigned long long id = strtoull(c->arg, &end, 10);
  long lines = v ? strtol(v, &end, 10) : 40;
  if (!id || *end) return px_api_error(c, 400, "INVALID", "id: '%.64s' is not a job id", c->arg);
  if (v && (*end || lines < 1 || lines > 1000))
    return px_api_error(c, 400, "RANGE", "lines: 1 to 1000");
  struct px_snap *snap = px_api_snap_fresh(c->s);
  size_t i = px_snap_lower_bound(snap, id);
  if (i < snap->njobs && snap->jobs[i]->info.job_id == id)
    answer_output(c, &snap->jobs[i]->info, (int)lines);
  else
    px_api_error(c, 404, "NOT_FOUND", "job %llu: no such job (or ended long ago)", id);
  px_snap_release(snap);
}

/* ---- GET /v1/ui/topology ---- */

/* What the GPU map groups nodes by and what the API's listings leave out:
 * each node's leaf switch and NVLink block, the switch tree, and whether
 * the site hides other users' jobs (PrivateData=jobs). The configuration is
 * immutable after start: no lock. */
static json_t *topology_json(const struct px_conf *cf) {
  json_t *nodes = json_array(), *sw = json_array();
  for (uint32_t i = 0; i < cf->nnodes; i++) {
    const struct px_conf_node *n = &cf->nodes[i];
    json_t *o = json_pack("{ss}", "name", n->name);
    if (o && n->leaf_switch < cf->nswitches)
      json_object_set_new(o, "switch", json_string(cf->switches[n->leaf_switch].name));
    if (o && n->block < cf->nblocks)
      json_object_set_new(o, "block", json_string(cf->blocks[n->block].name));
    json_array_append_new(nodes, o);
  }
  for (uint32_t i = 0; i < cf->nswitches; i++) {
    const struct px_conf_switch *s = &cf->switches[i];
    json_t *o = json_pack("{ss si}", "name", s->name, "level", (int)s->level);
    if (o && s->parent < cf->nswitches)
      json_object_set_new(o, "parent", json_string(cf->switches[s->parent].name));
    json_array_append_new(sw, o);
  }
  return json_pack("{ss sb so so}", "cluster", cf->cluster_name ? cf->cluster_name : "",
                   "private_jobs", cf->phalanx.private_jobs, "nodes", nodes, "switches", sw);
}

void px_api_ui_topology(struct px_api_call *c) {
  json_t *o = topology_json(c->s->conf);
  c->answer = o ? json_dumps(o, JSON_COMPACT) : NULL;
  c->status = c->answer ? 200 : 503;
  if (!c->answer) px_api_error(c, 503, "UNAVAILABLE", "out of memory");
  json_decref(o);
}
