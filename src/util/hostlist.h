/*
 * hostlist.h - Slurm hostlist expressions: "gpu[001-004,010],login[1-2]".
 *
 * Expansion follows Slurm: top-level commas separate items; an item is
 * literal text with any number of bracket groups, each a comma list of
 * numbers or lo-hi ranges. Several groups expand as a cartesian product with
 * the first group outermost ("rack[1-2]-n[01-02]" gives rack1-n01,
 * rack1-n02, rack2-n01, rack2-n02). Zero padding is kept: the lower bound's
 * width applies to the whole range ("n[08-10]" gives n08, n09, n10). Names
 * come out in the order written, duplicates included (as `scontrol show
 * hostnames` does); callers that need a set dedupe.
 *
 * Compression is the inverse for a set: the names are deduplicated, sorted
 * in natural order (gpu9 before gpu10) and grouped by what surrounds their
 * rightmost number and by padding width, then groups that differ only in an
 * earlier number merge too ("rack[1-2]-n[01-04]"). The result is canonical:
 * a function of the set alone, whatever the input order.
 *
 * Bad input is an error naming the position (1-based in the message, 0-based
 * byte offset in px_diag.pos), never a crash or a partial list.
 */
#ifndef PX_UTIL_HOSTLIST_H
#define PX_UTIL_HOSTLIST_H

#include <stddef.h>

#include "util/error.h"
#include "util/vec.h"

/* Default cap on the names one expression may expand to (max_names = 0). */
#define PX_HOSTLIST_MAX_NAMES 100000
/* Longest host name an expression may produce. */
#define PX_HOSTLIST_NAME_MAX 255

/*
 * Appends the names of `expr` to `out` (heap strings the caller frees, e.g.
 * px_strvec_free_all). max_names caps the total (0: PX_HOSTLIST_MAX_NAMES).
 * "" is the empty list. Returns 0, PX_EPARSE (syntax), PX_ELIMIT (too many
 * names or too long a name) or PX_ENOMEM, with `d` filled; on error `out` is
 * exactly as it was.
 */
int px_hostlist_expand(const char *expr, size_t max_names, struct px_strvec *out,
                       struct px_diag *d);

/*
 * Counts the names `expr` expands to without building them; same errors as
 * px_hostlist_expand (bar PX_ENOMEM).
 */
int px_hostlist_count(const char *expr, size_t max_names, size_t *count, struct px_diag *d);

/*
 * The canonical expression for the set of n names, as a malloc'd string in
 * *out ("" for n = 0). PX_EINVAL when a name is empty or contains a bracket,
 * a comma, whitespace or a control character; PX_ENOMEM. *out is set only on
 * success.
 */
int px_hostlist_compress(const char *const *names, size_t n, char **out);

#endif
