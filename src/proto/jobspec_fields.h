/*
 * jobspec_fields.h - the members of struct px_jobspec on the wire, once: the
 * server's strict codec (jobspec_json.c, with these limits) and the CLI's
 * lean codec (cli/cli_json.c, which takes only names and types) are both
 * generated from this table, so a new member is one row here.
 *
 * X(member, kind, a, b): kind S (string: a = most bytes, b = PX_JF_* flags),
 * SV (string vector: the same), U32/U64/I32/I64 (a..b the accepted range),
 * B (bool, default false), B_TRUE (bool, default true: always written).
 */
#ifndef PX_PROTO_JOBSPEC_FIELDS_H
#define PX_PROTO_JOBSPEC_FIELDS_H

#define PX_JOBSPEC_MAX_MEM_MIB (INT64_C(1) << 40) /* 1 EiB per node: beyond any machine */
#define PX_JOBSPEC_MAX_UNIX_S INT64_C(32503680000) /* year 3000 */

#define PX_JOBSPEC_FIELDS(X) \
  X(name, S, 256, 0) \
  X(user, S, 64, 0) \
  X(uid, U32, 0, UINT32_MAX - 1) \
  X(gid, U32, 0, UINT32_MAX - 1) \
  X(account, S, 64, 0) \
  X(partition, S, 64, 0) \
  X(qos, S, 64, 0) \
  X(nodes_min, U32, 0, 100000) \
  X(nodes_max, U32, 0, 100000) \
  X(ntasks, U32, 0, 10000000) \
  X(ntasks_per_node, U32, 0, 100000) \
  X(cpus_per_task, U32, 0, 100000) \
  X(gpus, U32, 0, 1000000) \
  X(gpus_per_node, U32, 0, 1024) \
  X(gpus_per_task, U32, 0, 1024) \
  X(gpu_share, U32, 0, 99) \
  X(gpu_type, S, 32, 0) \
  X(mem_per_node_mib, U64, 0, PX_JOBSPEC_MAX_MEM_MIB) \
  X(mem_per_cpu_mib, U64, 0, PX_JOBSPEC_MAX_MEM_MIB) \
  X(mem_per_gpu_mib, U64, 0, PX_JOBSPEC_MAX_MEM_MIB) \
  X(time_limit_s, I64, 0, PX_TIME_UNLIMITED) \
  X(nice, I32, -2147483645, 2147483645) \
  X(constraint, S, 1024, 0) \
  X(exclusive, B, 0, 0) \
  X(switches, U32, 0, 1024) \
  X(switches_wait_s, I64, 0, 366 * 86400) \
  X(hold, B, 0, 0) \
  X(begin_s, I64, 0, PX_JOBSPEC_MAX_UNIX_S) \
  X(dependency, S, 4096, 0) \
  X(array, S, 4096, 0) \
  X(requeue, B_TRUE, 0, 0) \
  X(no_requeue_given, B, 0, 0) \
  X(signal_num, I32, 0, 64) \
  X(signal_time_s, I32, 0, 65535) \
  X(signal_batch_only, B, 0, 0) \
  X(script, S, 4 << 20, PX_JF_CTRL_OK) \
  X(argv, SV, 65536, 0) \
  X(workdir, S, 4096, 0) \
  X(submit_dir, S, 4096, 0) \
  X(stdout_path, S, 4096, PX_JF_PATH) \
  X(stderr_path, S, 4096, PX_JF_PATH) \
  X(stdin_path, S, 4096, PX_JF_PATH) \
  X(env, SV, 131072, PX_JF_ENV) \
  X(comment, S, 1024, 0) \
  X(mail_type, S, 64, 0) \
  X(mail_user, S, 256, 0) \
  X(exclude, S, 65536, 0) \
  X(nodelist, S, 65536, 0) \
  X(reservation, S, 64, 0) \
  X(cpus_per_gpu, U32, 0, 100000) \
  X(time_min_s, I64, 0, PX_TIME_UNLIMITED) \
  X(open_mode, S, 16, 0) \
  X(hint, S, 32, 0) \
  X(distribution, S, 64, 0) \
  X(service, S, 64, 0) \
  X(replica, U32, 0, 1000000) \
  X(service_generation, U64, 0, UINT32_MAX) \
  X(container_image, S, 4096, 0) \
  X(container_mounts, S, 65536, 0) \
  X(container_workdir, S, 4096, 0) \
  X(container_env, S, 65536, 0)

#endif
