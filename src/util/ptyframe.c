/* ptyframe.c - the interactive stream's framing (ptyframe.h). */
#include "util/ptyframe.h"

#include <string.h>

static size_t head(unsigned char *out, enum px_ptyframe_type t, size_t len) {
  out[0] = (unsigned char)t;
  out[1] = (unsigned char)(len >> 8);
  out[2] = (unsigned char)len;
  return PX_PTYFRAME_HEAD;
}

static uint16_t be16(const unsigned char *p) { return (uint16_t)(p[0] << 8 | p[1]); }

long px_ptyframe_next(const unsigned char *buf, size_t n, struct px_ptyframe *f) {
  if (n < PX_PTYFRAME_HEAD) return 0;
  size_t len = be16(buf + 1);
  memset(f, 0, sizeof *f);
  f->type = (enum px_ptyframe_type)buf[0];
  switch (buf[0]) {
    case PX_PTYF_DATA: if (len > PX_PTYFRAME_MAX) return -1; break;
    case PX_PTYF_WINSIZE: case PX_PTYF_EXIT: if (len != 4) return -1; break;
    case PX_PTYF_EOF: if (len != 0) return -1; break;
    default: return -1;
  }
  if (n < PX_PTYFRAME_HEAD + len) return 0;
  const unsigned char *p = buf + PX_PTYFRAME_HEAD;
  f->data = p;
  f->len = len;
  if (buf[0] == PX_PTYF_WINSIZE) {
    f->rows = be16(p);
    f->cols = be16(p + 2);
  } else if (buf[0] == PX_PTYF_EXIT) {
    f->status = (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
  }
  return (long)(PX_PTYFRAME_HEAD + len);
}

size_t px_ptyframe_data(unsigned char *out, const void *data, size_t len) {
  if (len > PX_PTYFRAME_MAX) len = PX_PTYFRAME_MAX;
  head(out, PX_PTYF_DATA, len);
  memcpy(out + PX_PTYFRAME_HEAD, data, len);
  return PX_PTYFRAME_HEAD + len;
}

size_t px_ptyframe_winsize(unsigned char *out, uint16_t rows, uint16_t cols) {
  head(out, PX_PTYF_WINSIZE, 4);
  out[3] = (unsigned char)(rows >> 8), out[4] = (unsigned char)rows;
  out[5] = (unsigned char)(cols >> 8), out[6] = (unsigned char)cols;
  return PX_PTYFRAME_HEAD + 4;
}

size_t px_ptyframe_eof(unsigned char *out) { return head(out, PX_PTYF_EOF, 0); }

size_t px_ptyframe_exit(unsigned char *out, int32_t status) {
  uint32_t s = (uint32_t)status;
  head(out, PX_PTYF_EXIT, 4);
  out[3] = (unsigned char)(s >> 24), out[4] = (unsigned char)(s >> 16);
  out[5] = (unsigned char)(s >> 8), out[6] = (unsigned char)s;
  return PX_PTYFRAME_HEAD + 4;
}
