/* store.c - picks the backend from the URL (store.h). */
#include "store/store.h"

#include <string.h>

/* The SQLite path of url, or NULL for PostgreSQL. */
static const char *sqlite_path(const char *url) {
  if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0 ||
      strncmp(url, "host=", 5) == 0 || strstr(url, "dbname="))
    return NULL;
  return strncmp(url, "sqlite:", 7) == 0 ? url + 7 : url;
}

int px_store_open(const char *url, struct px_store **out, struct px_diag *d) {
  *out = NULL;
  if (!url || !*url) return px_diag_set(d, PX_EINVAL, -1, "store: empty URL");
  const char *path = sqlite_path(url);
  return path ? px_store_sqlite_open(path, out, d) : px_store_pg_open(url, out, d);
}

int px_store_open_serial(const char *url, struct px_store **out, struct px_diag *d) {
  *out = NULL;
  if (!url || !*url) return px_diag_set(d, PX_EINVAL, -1, "store: empty URL");
  const char *path = sqlite_path(url);
  return path ? px_store_sqlite_open_serial(path, out, d) : px_store_pg_open(url, out, d);
}

void px_store_close(struct px_store *s) {
  if (s) s->ops->close(s);
}
