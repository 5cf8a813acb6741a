/*
 * plot.h - pictures of a simulation: busy GPUs and pending jobs over time
 * and the JCT CDF with one line per policy, and per policy the share of busy
 * GPUs per account over time (stacked). PNG and SVG, drawn by gnuplot
 * (Debian gnuplot-nox); viewable with any image viewer or browser.
 */
#ifndef PX_SIM_PLOT_H
#define PX_SIM_PLOT_H

#include "sim/report.h"
#include "util/error.h"

/* Writes data, plots.gp and the pictures into dir (created if absent).
 * 0, PX_EIO, or PX_ENOENT when gnuplot is not installed (data still written). */
int px_sim_plot(const char *dir, const struct px_sim_report *rep, struct px_diag *d);

#endif
