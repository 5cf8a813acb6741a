/*
 * fuzz_ptyframe.c - libFuzzer target for the interactive stream's framing
 * (util/ptyframe.h), the decoder both the CLI and the pty host run on bytes
 * from the network. Every frame it accepts must stay inside the input, and
 * encode back to the very bytes it was read from; reading in two pieces at
 * any split must give the same frames as reading the whole.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/ptyframe.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t encode(const struct px_ptyframe *f, unsigned char *out) {
  switch (f->type) {
    case PX_PTYF_DATA: return px_ptyframe_data(out, f->data, f->len);
    case PX_PTYF_WINSIZE: return px_ptyframe_winsize(out, f->rows, f->cols);
    case PX_PTYF_EOF: return px_ptyframe_eof(out);
    case PX_PTYF_EXIT: return px_ptyframe_exit(out, f->status);
  }
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static unsigned char out[PX_PTYFRAME_HEAD + PX_PTYFRAME_MAX];
  size_t off = 0;
  while (off < size) {
    struct px_ptyframe f;
    long used = px_ptyframe_next(data + off, size - off, &f);
    if (used <= 0) {
      /* a frame cut short is "more" at every shorter prefix too */
      for (size_t k = 0; used == 0 && k < size - off; k++)
        if (px_ptyframe_next(data + off, k, &f) != 0) abort();
      break;
    }
    if ((size_t)used > size - off) abort();
    if (f.type == PX_PTYF_DATA && (f.data != data + off + PX_PTYFRAME_HEAD || f.len > PX_PTYFRAME_MAX)) abort();
    size_t n = encode(&f, out);
    if (n != (size_t)used || memcmp(out, data + off, n)) abort();
    off += (size_t)used;
  }
  return 0;
}
