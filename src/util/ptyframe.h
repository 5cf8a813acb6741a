/*
 * ptyframe.h - the framing of an interactive stream (srun --pty, phalanx
 * exec) between the CLI and the node's pty host, relayed as opaque bytes by
 * the server (docs/interactive.md).
 *
 * A frame is a type byte, a 16-bit big-endian payload length and the
 * payload; nothing else, so that both ends and a fuzzer read the same few
 * lines:
 *
 *   'D' len bytes      terminal bytes (keystrokes one way, output the other)
 *   'W' 4              window size: rows, cols (16-bit big-endian each)
 *   'E' 0              the client's input ended (its stdin reached EOF)
 *   'X' 4              the remote command ended: its wait status as srun
 *                      reports it (exit code, or 128 + signal), 32-bit BE
 *
 * Lengths above PX_PTYFRAME_MAX, unknown types and fixed-size frames of the
 * wrong size are errors: a peer that sends them is not ours.
 */
#ifndef PX_UTIL_PTYFRAME_H
#define PX_UTIL_PTYFRAME_H

#include <stddef.h>
#include <stdint.h>

#define PX_PTYFRAME_MAX 16384
#define PX_PTYFRAME_HEAD 3

enum px_ptyframe_type {
  PX_PTYF_DATA = 'D',
  PX_PTYF_WINSIZE = 'W',
  PX_PTYF_EOF = 'E',
  PX_PTYF_EXIT = 'X',
};

struct px_ptyframe {
  enum px_ptyframe_type type;
  const unsigned char *data;    /* DATA: points into the caller's buffer */
  size_t len;
  uint16_t rows, cols;          /* WINSIZE */
  int32_t status;               /* EXIT */
};

/* The next frame at buf[0..n): returns the bytes it used (> 0) with *f
 * filled, 0 when more bytes are needed, -1 when the bytes are not a frame. */
long px_ptyframe_next(const unsigned char *buf, size_t n, struct px_ptyframe *f);

/* Writes a frame into out (room for PX_PTYFRAME_HEAD + payload); returns its
 * length. DATA takes at most PX_PTYFRAME_MAX bytes (the caller splits). */
size_t px_ptyframe_data(unsigned char *out, const void *data, size_t len);
size_t px_ptyframe_winsize(unsigned char *out, uint16_t rows, uint16_t cols);
size_t px_ptyframe_eof(unsigned char *out);
size_t px_ptyframe_exit(unsigned char *out, int32_t status);

#endif
