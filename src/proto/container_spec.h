/*
 * container_spec.h - the --container-* options of a job (pyxis' spelling),
 * checked once here: the server refuses a job spec whose options cannot
 * mean anything (naming the field and the problem), and the agent parses
 * the same text again when it builds the container (agent/container.h).
 *
 *   container_image    IMAGE: a path (an OCI layout directory or a
 *                      docker-archive tar) or a name looked up in the
 *                      node's ContainerImageDir. Resolved on the node.
 *   container_mounts   SRC[:DST[:FLAGS]][,...]: absolute paths, no ".."
 *                      component; FLAGS joined with '+' (ro, rw, private,
 *                      rprivate, slave, rslave, nosuid, nodev, noexec).
 *   container_workdir  an absolute path inside the image.
 *   container_env      NAME[,NAME...]: variables whose host value wins over
 *                      the value the image's configuration sets.
 * The three others need container_image.
 */
#ifndef PX_PROTO_CONTAINER_SPEC_H
#define PX_PROTO_CONTAINER_SPEC_H

#include <stdbool.h>
#include <stddef.h>

#include "core/jobspec.h"
#include "util/error.h"

#define PX_CTR_MOUNTS_MAX 64

struct px_ctr_mount {
  char *src, *dst;       /* absolute paths (dst defaults to src) */
  bool ro;
  const char *propagation; /* "rprivate" (default), "private", "rslave", "slave" */
  bool nosuid, nodev, noexec;
};

struct px_ctr_mounts {
  struct px_ctr_mount v[PX_CTR_MOUNTS_MAX];
  size_t n;
};

/* Parses text (NULL or "" gives no mount). 0, PX_EINVAL with d naming the
 * entry and what is wrong with it, or PX_ENOMEM; on error out is empty. */
int px_ctr_mounts_parse(const char *text, struct px_ctr_mounts *out, struct px_diag *d);
void px_ctr_mounts_fini(struct px_ctr_mounts *m);

/* Whether name is a valid environment variable name. */
bool px_ctr_env_name_ok(const char *name, size_t len);

/* Whether NAME appears in list ("A,B,C"). */
bool px_ctr_env_listed(const char *list, const char *name, size_t len);

/* The spec's container_* fields; prefix goes before the field's name in d
 * ("" or "jobs[2]."). 0 or PX_EINVAL. */
int px_container_spec_check(const struct px_jobspec *s, const char *prefix, struct px_diag *d);

#endif
