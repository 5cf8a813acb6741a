/*
 * ui_assets.h - the dashboard's files (web/), built into the binary.
 *
 * web/build.mjs bundles web/src with esbuild and writes one C file
 * (<build>/web/ui_assets.c) holding each file as written and gzip'd, with
 * its type and an ETag; CMake compiles it into the server (web/assets.cmake).
 * Where node is missing at configure time the table is empty and /ui/
 * answers 404 saying how to build it.
 */
#ifndef PX_SERVER_UI_ASSETS_H
#define PX_SERVER_UI_ASSETS_H

#include <stddef.h>

struct px_ui_asset {
  const char *name;             /* "index.html", "app.js" (no directories) */
  const char *ctype;            /* Content-Type */
  const char *etag;             /* quoted, from the content's hash */
  const unsigned char *data, *gz;
  size_t len, gz_len;
};

extern const struct px_ui_asset px_ui_assets[];
extern const size_t px_ui_nassets;

#endif
