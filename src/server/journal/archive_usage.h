/*
 * archive_usage.h - the fair-share usage of archived jobs (archive_usage.c),
 * for archive.c alone.
 */
#ifndef PX_SERVER_JOURNAL_ARCHIVE_USAGE_H
#define PX_SERVER_JOURNAL_ARCHIVE_USAGE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "server/tables.h"

/* Checkpoint, under the store lock: the earlier attempts of j as their
 * accounting rows keep them, for its archive row ("attempts"; *out NULL when
 * it has none). 0, PX_ENOMEM or the store's error (s->store->errmsg). */
int px_archive_attempts_get(struct px_server *s, const struct px_sjob *j, json_t **out);
/* Recovery: keeps the "attempts" of job id's archive row o until the merge
 * charges them (rows are loaded in id order). */
int px_archive_attempts_load(struct px_server *s, uint64_t id, json_t *o);
/* Merge: charges every run of the archived job j to fair share, its earlier
 * attempts (*next walks the kept ones, by id) and its last. */
void px_archive_charge(struct px_server *s, const struct px_sjob *j, size_t *next);
void px_archive_attempts_free(struct px_server *s);

#endif
