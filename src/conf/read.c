/*
 * read.c - from files and text to logical lines of Key=Value pairs, the
 * syntax all three configuration files share (Slurm's):
 *   - `#` starts a comment (outside double quotes);
 *   - a line ending in a backslash continues on the next one;
 *   - pairs are separated by whitespace; a value may be double-quoted to hold
 *     spaces (Reason="disk replaced"), the quotes are removed;
 *   - `Include PATH` reads another file in place (relative to the including
 *     file's directory; shell patterns allowed), up to 8 deep.
 * Files must be regular and at most 16 MiB: a stray /dev/zero cannot hang us.
 */
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "conf/parse.h"

#define MAX_FILE_BYTES (16u << 20)
#define MAX_INCLUDE_DEPTH 8

typedef void (*line_fn)(struct px_cb *, const struct px_where *, const struct px_kv *, size_t);

static const line_fn handlers[] = {
    [PX_FILE_SLURM] = px_slurm_line,
    [PX_FILE_TOPOLOGY] = px_topology_line,
    [PX_FILE_ACCOUNTS] = px_accounts_line,
};

static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

static void include(struct px_cb *b, const struct px_where *w, const char *arg, enum px_file_kind kind) {
  if (b->from_text) {
    px_cb_error(b, w, "Include %s: including files needs a configuration read from files", arg);
    return;
  }
  char path[4096];
  const char *slash = strrchr(w->file, '/');
  if (arg[0] == '/' || !slash) snprintf(path, sizeof path, "%s", arg);
  else snprintf(path, sizeof path, "%.*s/%s", (int)(slash - w->file), w->file, arg);
  if (!strpbrk(path, "*?[")) {
    px_cb_read_file(b, path, kind, w);
    return;
  }
  glob_t g;
  int rc = glob(path, GLOB_ERR, NULL, &g);
  if (rc == GLOB_NOMATCH) px_cb_error(b, w, "Include %s: no file matches", arg);
  else if (rc) px_cb_error(b, w, "Include %s: cannot list the files", arg);
  else
    for (size_t i = 0; i < g.gl_pathc; i++) px_cb_read_file(b, g.gl_pathv[i], kind, w);
  if (rc != GLOB_NOMATCH) globfree(&g);
}

/*
 * Splits a logical line in place into pairs and hands them to the file's
 * handler. Quotes are removed by copying each token over itself.
 */
static void tokenize(struct px_cb *b, const struct px_where *w, char *line, enum px_file_kind kind,
                     struct px_kvvec *kv) {
  size_t i = 0;
  px_kvvec_clear(kv);
  for (;;) {
    while (is_space(line[i])) i++;
    if (!line[i]) break;
    size_t start = i, out = i;
    bool quoted = false;
    while (line[i] && (quoted || !is_space(line[i]))) {
      if (line[i] == '"') quoted = !quoted;
      else line[out++] = line[i];
      i++;
    }
    if (quoted) {
      px_cb_error(b, w, "unterminated '\"' in '%s'", line + start);
      return;
    }
    bool more = line[i] != '\0';
    line[out] = '\0';
    if (more) i++;
    char *tok = line + start, *eq = strchr(tok, '=');
    if (!eq && kv->len == 0 && strcasecmp(tok, "include") == 0) {
      while (is_space(line[i])) i++;
      if (!line[i]) px_cb_error(b, w, "Include needs a file name");
      else if (strpbrk(line + i, " \t")) px_cb_error(b, w, "Include takes one file name");
      else include(b, w, line + i, kind);
      return;
    }
    if (!eq || eq == tok) {
      px_cb_error(b, w, "expected Key=Value, got '%s'", tok);
      return;
    }
    *eq = '\0';
    if (px_kvvec_push(kv, (struct px_kv){tok, eq + 1})) {
      b->oom = true;
      return;
    }
  }
  if (kv->len) handlers[kind](b, w, kv->v, kv->len);
}

/* Appends physical line [s, e) to buf, without its comment. */
static int append(char **buf, size_t *len, size_t *cap, const char *s, const char *e) {
  bool quoted = false;
  const char *p = s;
  for (; p < e; p++) {
    if (*p == '"') quoted = !quoted;
    if (*p == '#' && !quoted) break;
  }
  size_t n = (size_t)(p - s);
  if (*len + n + 2 > *cap) {
    size_t c = (*len + n + 2) * 2;
    char *nb = realloc(*buf, c);
    if (!nb) return PX_ENOMEM;
    *buf = nb;
    *cap = c;
  }
  memcpy(*buf + *len, s, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

void px_cb_read_text(struct px_cb *b, const char *file, const char *text, enum px_file_kind kind) {
  char *buf = NULL;
  size_t len = 0, cap = 0;
  struct px_kvvec kv = {0};
  struct px_where w = {file, 0};
  int line = 0;
  const char *s = text;
  while (*s && !b->oom) {
    const char *e = strchr(s, '\n');
    if (!e) e = s + strlen(s);
    line++;
    if (len == 0) w.line = line;
    if (append(&buf, &len, &cap, s, e)) {
      b->oom = true;
      break;
    }
    while (len && is_space(buf[len - 1])) buf[--len] = '\0';
    bool cont = len && buf[len - 1] == '\\';
    if (cont) buf[--len] = '\0';
    if (!cont || !*e) {
      if (len) tokenize(b, &w, buf, kind, &kv);
      len = 0;
    } else {
      buf[len++] = ' '; /* the joined lines stay separate tokens */
      buf[len] = '\0';
    }
    s = *e ? e + 1 : e;
  }
  free(buf);
  px_kvvec_fini(&kv);
}

static char *slurp(struct px_cb *b, const char *path, const struct px_where *w) {
  struct stat st;
  FILE *f = NULL;
  char *text = NULL;
  if (stat(path, &st) != 0) goto fail;
  if (!S_ISREG(st.st_mode)) {
    px_cb_error(b, w, "cannot read %s: not a regular file", path);
    goto out;
  }
  if (st.st_size > MAX_FILE_BYTES) {
    px_cb_error(b, w, "cannot read %s: larger than 16 MiB", path);
    goto out;
  }
  if (!(f = fopen(path, "r"))) goto fail;
  if (!(text = malloc((size_t)st.st_size + 1))) {
    b->oom = true;
    goto out;
  }
  size_t n = fread(text, 1, (size_t)st.st_size, f);
  if (ferror(f)) goto fail;
  text[n] = '\0';
  if (strlen(text) != n) {
    px_cb_error(b, w, "cannot read %s: it contains a NUL byte (not a text file)", path);
    goto out;
  }
  fclose(f);
  return text;
fail:
  px_cb_error(b, w, "cannot read %s: %s", path, strerror(errno));
out:
  b->io_error = true;
  free(text);
  if (f) fclose(f);
  return NULL;
}

void px_cb_read_file(struct px_cb *b, const char *path, enum px_file_kind kind, const struct px_where *from) {
  struct px_where none = {"", 0};
  if (!from) from = &none;
  if (b->depth >= MAX_INCLUDE_DEPTH) {
    px_cb_error(b, from, "Include %s: nested more than %d deep (a loop?)", path, MAX_INCLUDE_DEPTH);
    return;
  }
  char *text = slurp(b, path, from);
  if (!text) return;
  char *label = px_cb_strdup(b, path), *copy = strdup(path);
  if (!label || !copy || px_strvec_push(&b->files, copy)) {
    free(copy);
    free(text);
    b->oom = true;
    return;
  }
  b->depth++;
  px_cb_read_text(b, label, text, kind);
  b->depth--;
  free(text);
}
