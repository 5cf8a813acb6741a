/*
 * opts_apply.h - the option handlers of opts_apply.c / opts_begin.c, bound to
 * option names by the table in opts.c. All share one signature.
 */
#ifndef PX_CLI_OPTS_APPLY_H
#define PX_CLI_OPTS_APPLY_H

#include "cli/cli.h"

#define PX_OPT_HANDLER(fn)                                                                     \
  int fn(const char *val, struct px_jobspec *s, struct px_cli_extra *x, int64_t now,           \
         struct px_diag *d);

PX_OPT_HANDLER(px_opt_job_name)
PX_OPT_HANDLER(px_opt_account)
PX_OPT_HANDLER(px_opt_partition)
PX_OPT_HANDLER(px_opt_qos)
PX_OPT_HANDLER(px_opt_output)
PX_OPT_HANDLER(px_opt_error)
PX_OPT_HANDLER(px_opt_input)
PX_OPT_HANDLER(px_opt_array)
PX_OPT_HANDLER(px_opt_dependency)
PX_OPT_HANDLER(px_opt_constraint)
PX_OPT_HANDLER(px_opt_chdir)
PX_OPT_HANDLER(px_opt_mail_type)
PX_OPT_HANDLER(px_opt_mail_user)
PX_OPT_HANDLER(px_opt_wait_all_nodes) /* opts_compat.c, with px_opt_mail_type */
PX_OPT_HANDLER(px_opt_comment)
PX_OPT_HANDLER(px_opt_container_image)
PX_OPT_HANDLER(px_opt_container_mounts)
PX_OPT_HANDLER(px_opt_container_workdir)
PX_OPT_HANDLER(px_opt_container_env)
PX_OPT_HANDLER(px_opt_ntasks)
PX_OPT_HANDLER(px_opt_ntasks_per_node)
PX_OPT_HANDLER(px_opt_cpus_per_task)
PX_OPT_HANDLER(px_opt_nodes)
PX_OPT_HANDLER(px_opt_gpus)
PX_OPT_HANDLER(px_opt_gpus_per_node)
PX_OPT_HANDLER(px_opt_gpus_per_task)
PX_OPT_HANDLER(px_opt_gres)
PX_OPT_HANDLER(px_opt_mem)
PX_OPT_HANDLER(px_opt_mem_per_cpu)
PX_OPT_HANDLER(px_opt_mem_per_gpu)
PX_OPT_HANDLER(px_opt_time)
PX_OPT_HANDLER(px_opt_exclusive)
PX_OPT_HANDLER(px_opt_requeue)
PX_OPT_HANDLER(px_opt_no_requeue)
PX_OPT_HANDLER(px_opt_hold)
PX_OPT_HANDLER(px_opt_nice)
PX_OPT_HANDLER(px_opt_signal)
PX_OPT_HANDLER(px_opt_switches)
PX_OPT_HANDLER(px_opt_export)
PX_OPT_HANDLER(px_opt_wrap)
PX_OPT_HANDLER(px_opt_parsable)
PX_OPT_HANDLER(px_opt_test_only)
PX_OPT_HANDLER(px_opt_quiet)
PX_OPT_HANDLER(px_opt_wait)
PX_OPT_HANDLER(px_opt_pty)
PX_OPT_HANDLER(px_opt_label)
PX_OPT_HANDLER(px_opt_json)
PX_OPT_HANDLER(px_opt_verbose)
PX_OPT_HANDLER(px_opt_ignored)
PX_OPT_HANDLER(px_opt_begin)
PX_OPT_HANDLER(px_opt_nodelist)
PX_OPT_HANDLER(px_opt_exclude)
PX_OPT_HANDLER(px_opt_reservation)
PX_OPT_HANDLER(px_opt_cpus_per_gpu)
PX_OPT_HANDLER(px_opt_ntasks_per_gpu)
PX_OPT_HANDLER(px_opt_distribution)
PX_OPT_HANDLER(px_opt_hint)
PX_OPT_HANDLER(px_opt_open_mode)
PX_OPT_HANDLER(px_opt_time_min)
/* Slurm's errors between options, once all are applied (opts_place.c). */
int px_cli_check_placement(const struct px_jobspec *s, struct px_diag *d);

#endif
