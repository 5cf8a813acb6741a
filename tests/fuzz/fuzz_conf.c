/*
 * fuzz_conf.c - libFuzzer target for the configuration parser. The input is
 * up to three texts separated by NUL bytes: slurm.conf, topology.conf and
 * the accounts file (parsed from memory: no file is ever opened). A parse
 * that succeeds must hold the invariants conf.h promises; one that fails
 * must have reported at least one error and returned nothing.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conf/conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct px_conf *c) {
  for (uint32_t p = 0; p < c->npartitions; p++)
    for (uint32_t i = 0; i < c->partitions[p].nnodes; i++) {
      if (c->partitions[p].nodes[i] >= c->nnodes) abort();
      if (i && c->partitions[p].nodes[i - 1] >= c->partitions[p].nodes[i]) abort();
    }
  if (c->naccounts < 1 || strcmp(c->accounts[0].name, "root") || c->accounts[0].parent != PX_NONE) abort();
  for (uint32_t i = 1; i < c->naccounts; i++)
    if (c->accounts[i].parent >= i || c->accounts[c->accounts[i].parent].is_user) abort();
  if (c->nqos < 1 || strcmp(c->qos[0].name, "normal")) abort();
  for (uint32_t i = 0; i < c->nnodes; i++) {
    const struct px_conf_node *n = &c->nodes[i];
    if (n->ngpu > 64 || !n->cpus || (n->ngpu && n->ngpu % n->gpu_groups)) abort();
    if (n->leaf_switch != PX_NONE && (n->leaf_switch >= c->nswitches || c->switches[n->leaf_switch].level)) abort();
    if (n->block != PX_NONE && n->block >= c->nblocks) abort();
  }
  for (uint32_t s = 0; s < c->nswitches; s++)
    if (c->switches[s].parent != PX_NONE && c->switches[c->switches[s].parent].level <= c->switches[s].level)
      abort();
  if (c->default_partition != PX_NONE && c->default_partition >= c->npartitions) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *buf = malloc(size + 1);
  if (!buf) return 0;
  memcpy(buf, data, size);
  buf[size] = '\0';
  const char *part[3] = {buf, NULL, NULL};
  size_t at = strlen(buf);
  for (int k = 1; k < 3 && at < size; k++) {
    part[k] = buf + at + 1;
    at += 1 + strlen(part[k]);
  }
  /* A small node cap keeps each run fast; the cap itself is an error path too. */
  struct px_conf_text t = {part[0], part[1], part[2], "fuzz.conf", 2000};
  struct px_conf *c = NULL;
  struct px_conf_diags d = {0};
  int rc = px_conf_parse_text(&t, &c, &d);
  if (rc == 0) check(c);
  else if (c || (rc != PX_ENOMEM && d.nerrors == 0)) abort();
  px_conf_free(c);
  px_conf_diags_fini(&d);
  free(buf);
  return 0;
}
