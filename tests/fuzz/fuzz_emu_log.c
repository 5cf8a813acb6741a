/*
 * fuzz_emu_log.c - libFuzzer target for the emulating agent's state log
 * (src/agent/emu_jobs.c), which a restarted emulator replays: a crash can
 * leave it half written, and whatever it holds must not crash, leak or
 * trip a sanitizer.
 */
#include <stddef.h>
#include <stdint.h>

#include "agent/emu_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  px_emu_replay_text((const char *)data, size);
  return 0;
}
