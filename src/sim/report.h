/*
 * report.h - the simulator's outputs for people and for machines.
 *
 * The table puts the policies side by side (one column each) so a reader
 * compares them on one screen. The JSON carries the same figures plus the
 * time series; it has no timestamps, wall times or addresses and prints
 * every float with a fixed number of decimals, so the same inputs give the
 * same bytes (tests compare runs byte for byte).
 */
#ifndef PX_SIM_REPORT_H
#define PX_SIM_REPORT_H

#include <stdio.h>

#include "sim/metrics.h"
#include "sim/sim.h"

struct px_sim_report {
  const char *trace_path;
  const struct px_sim_setup *setup;
  const struct px_sim_result *results; /* one per policy */
  size_t nresults;
};

void px_sim_report_table(FILE *f, const struct px_sim_report *rep);
void px_sim_report_json(FILE *f, const struct px_sim_report *rep);
/* True when every run conserved jobs and GPU-seconds (and the trace's jobs are all accounted for). */
bool px_sim_report_conserved(const struct px_sim_report *rep);

/* Per account and policy (report_accounts.c): the table's last block, and
 * the keys report.c adds to account a's object of result r. */
void px_sim_report_accounts_table(FILE *f, const struct px_sim_report *rep);
void px_sim_report_account_json(FILE *f, const struct px_sim_report *rep, const struct px_sim_result *r, uint32_t a);
/* s as a JSON string, quoted and escaped. */
void px_sim_json_str(FILE *f, const char *s);

#endif
