/*
 * oci_image.h - container images on a node: find one, unpack it once into a
 * cache shared by the jobs of its user, and say where its root filesystem
 * and its configuration (environment, working directory) are.
 *
 * Images: an OCI image layout directory (index.json, blobs/sha256/...), or
 * a docker-archive tar (`docker save`: manifest.json, the config and the
 * layer tars), given as a path, or as a name looked up in the node's image
 * directory (agent --container-image-dir): NAME, NAME.tar, or NAME:TAG for
 * the manifest of a layout whose org.opencontainers.image.ref.name is TAG.
 *
 * Cache: CACHE/<uid>/<key>/{rootfs,config.json}, key the manifest's digest
 * (OCI) or the image config's (docker archive: docker's image id), found
 * for a docker archive through a memo keyed by the file's identity (device,
 * inode, size, mtime) so that a cached image is not read again. An image is
 * unpacked into CACHE/<uid>/work/.tmp.<pid> (the user's), then published by
 * root: its entries moved into a root-owned CACHE/<uid>/.pub.<pid>, checked
 * there (a directory and a file, no symlink swapped in), and that renamed
 * to CACHE/<uid>/<key>. CACHE/<uid> and the key directories are root's, so
 * the paths the runtime (root) is given cannot be redirected by the user;
 * what is inside rootfs is the user's (the runtime resolves paths inside
 * the root filesystem without leaving it). A directory under its key is
 * always whole; of two jobs publishing the same image at once one rename
 * wins and the other's copy is removed, as the user.
 *
 * Everything that touches the image or the cache runs in a child process
 * as the job's user (with the user's groups): an image is read with the
 * user's rights, and a hostile layer (a symlink out, a "../" name) can do
 * no more than the user could. Hence one cache per user, as enroot has;
 * only the publication (renames, checks) is root's.
 * Layers are applied in order with the system's tar (it reads gzip and
 * plain layers); whiteouts (.wh.NAME, and .wh..wh..opq for an opaque
 * directory) remove what lower layers put there before the layer itself is
 * extracted (oci_layer.c).
 */
#ifndef PX_AGENT_OCI_IMAGE_H
#define PX_AGENT_OCI_IMAGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct px_image_req {
  const char *ref;         /* --container-image as given */
  const char *base_dir;    /* relative paths start here (the job's or step's working directory) */
  const char *image_dir;   /* names are looked up here ("" or NULL: no lookup) */
  const char *cache_dir;   /* CACHE */
  const char *user;
  uid_t uid;
  gid_t gid;
};

struct px_image {
  char dir[PATH_MAX];      /* CACHE/<uid>/<key> */
  char rootfs[PATH_MAX];   /* dir/rootfs */
  char config[PATH_MAX];   /* dir/config.json: the image's configuration blob */
  bool unpacked;           /* this call unpacked it (false: it was cached) */
};

/* Finds and, when not cached, unpacks the image. 0, or an error with err
 * "ContainerImage: REF: what is wrong" (the job's end reason). */
int px_image_prepare(const struct px_image_req *r, struct px_image *out, char *err, size_t errlen);

/* ---- oci_layer.c ---- */

/* Applies one layer (a tar, compressed or not) onto rootfs: its whiteouts,
 * then its files. 0, or -1 with err set. Runs as the user (see above). */
int px_layer_apply(const char *rootfs, const char *layer, char *err, size_t errlen);
/* Removes path and everything under it, not following symlinks; 0 or -1. */
int px_rm_tree(const char *path);
/* Runs argv (PATH searched) and waits; out_fd: its stdout, or -1 for /dev/null.
 * Its exit status, or -1 when it could not run. */
int px_run_wait(char *const argv[], int out_fd);

#endif
