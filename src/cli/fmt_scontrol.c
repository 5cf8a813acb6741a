/*
 * fmt_scontrol.c - `scontrol show job|node|partition` records in Slurm
 * 22.05's layout: the first line at column 0, then lines indented three
 * spaces holding "Key=Value" pairs, a blank line after each record (a job's
 * ends with a line of three spaces first). Scripts match "JobState=X " with
 * the trailing space, so the pairs keep Slurm's order and spacing.
 *
 * Values Phalanx does not track (MCS labels, power, sockets) print as Slurm
 * prints them when unset; docs/slurm-migration.md lists them.
 */
#include <grp.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/fmt_job.h"

static void group_name(char *buf, size_t n, uint32_t gid) {
  struct group g, *res = NULL;
  char tmp[1024];
  if (getgrgid_r((gid_t)gid, &g, tmp, sizeof tmp, &res) == 0 && res)
    snprintf(buf, n, "%s", g.gr_name);
  else
    snprintf(buf, n, "%u", gid);
}

/* Expands %j %x %u %A %a %% of an output pattern (Slurm keeps %N for the node). */
static void output_path(char *buf, size_t n, const struct px_job_info *j, const char *pattern) {
  const struct px_jobspec *s = &j->spec;
  char def[32];
  if (!pattern) {
    snprintf(def, sizeof def, j->array_job_id ? "slurm-%%A_%%a.out" : "slurm-%%j.out");
    pattern = def;
  }
  size_t o = 0;
  if (pattern[0] != '/' && s->workdir) o = (size_t)snprintf(buf, n, "%s/", s->workdir);
  for (const char *p = pattern; *p && o + 1 < n; p++) {
    int w = 0;
    if (*p != '%' || !p[1]) {
      buf[o++] = *p;
      continue;
    }
    char c = *++p;
    size_t room = n - o;
    if (c == 'j') w = snprintf(buf + o, room, "%" PRIu64, j->job_id);
    else if (c == 'A') w = snprintf(buf + o, room, "%" PRIu64, j->array_job_id ? j->array_job_id : j->job_id);
    else if (c == 'a') w = snprintf(buf + o, room, "%u", j->array_job_id ? j->array_task_id : 0);
    else if (c == 'x') w = snprintf(buf + o, room, "%s", PX_STR(s->name));
    else if (c == 'u') w = snprintf(buf + o, room, "%s", PX_STR(s->user));
    else if (c == '%') w = snprintf(buf + o, room, "%%");
    else w = snprintf(buf + o, room, "%%%c", c);
    o += (size_t)w < room ? (size_t)w : room - 1;
  }
  buf[o < n ? o : n - 1] = '\0';
}

/* A node list as Slurm shows it: sorted, in ranges; NULL for none. */
static char *compressed(const char *list) {
  char **names;
  size_t n;
  if (!list || px_cli_hostlist_expand(list, &names, &n)) return list ? strdup(list) : NULL;
  char *c = px_cli_hostlist_compress(names, n);
  px_cli_strv_free(names, n);
  return c;
}

static void job_times(FILE *out, const struct px_job_info *j, int64_t now) {
  char a[32], b[32], c[32];
  px_cli_fmt_hms(a, sizeof a, px_fmt_job_elapsed(j, now));
  px_cli_fmt_hms(b, sizeof b, j->spec.time_limit_s ? j->spec.time_limit_s : PX_CLI_UNLIMITED);
  if (j->spec.time_min_s) px_cli_fmt_hms(c, sizeof c, j->spec.time_min_s);
  fprintf(out, "   RunTime=%s TimeLimit=%s TimeMin=%s\n", a, b, j->spec.time_min_s ? c : "N/A");
  px_cli_fmt_iso(a, sizeof a, j->submit_time, "Unknown");
  /* a held job is not eligible: Slurm shows no eligible or accrue time */
  bool held = !strcmp(j->state, "PENDING") && !strncmp(j->reason, "JobHeld", 7);
  px_cli_fmt_iso(b, sizeof b, held ? 0 : j->eligible_time ? j->eligible_time : j->submit_time, "Unknown");
  fprintf(out, "   SubmitTime=%s EligibleTime=%s\n", a, b);
  fprintf(out, "   AccrueTime=%s\n", b);
  px_cli_fmt_iso(a, sizeof a, j->start_time ? j->start_time : j->expected_start, "Unknown");
  px_cli_fmt_iso(c, sizeof c, j->end_time, "Unknown");
  fprintf(out, "   StartTime=%s EndTime=%s Deadline=N/A\n", a, c);
  if (j->start_time > 0) {
    px_cli_fmt_iso(a, sizeof a, j->start_time, "None");
    fprintf(out, "   PreemptEligibleTime=%s PreemptTime=None\n", a);
  }
  px_cli_fmt_iso(a, sizeof a, !held && j->eligible_time ? j->eligible_time : j->submit_time, "Unknown");
  fprintf(out, "   SuspendTime=None SecsPreSuspend=0 LastSchedEval=%s Scheduler=Main\n", a);
}

static void job_shape(FILE *out, const struct px_job_info *j) {
  const struct px_jobspec *s = &j->spec;
  char buf[256];
  uint32_t cpt = s->cpus_per_task ? s->cpus_per_task : 1;
  uint32_t tasks = s->ntasks ? s->ntasks : s->ntasks_per_node ? s->ntasks_per_node * px_fmt_job_nodes(j) : 1;
  /* --hint=nomultithread is one thread per core, which Slurm shows as T=1 */
  bool one_thread = s->hint && strstr(s->hint, "nomultithread");
  fprintf(out, "   NumNodes=%u NumCPUs=%u NumTasks=%u CPUs/Task=%u ReqB:S:C:T=0:0:*:%s\n",
          px_fmt_job_nodes(j), px_fmt_job_cpus(j), tasks, cpt, one_thread ? "1" : "*");
  px_fmt_job_tres(buf, sizeof buf, j, false);
  fprintf(out, "   TRES=%s\n", buf);
  fprintf(out, "   Socks/Node=* NtasksPerN:B:S:C=%u:0:*:* CoreSpec=*\n", s->ntasks_per_node);
  uint32_t min_cpus = cpt * (s->ntasks_per_node ? s->ntasks_per_node : 1);
  if (s->mem_per_cpu_mib)
    fprintf(out, "   MinCPUsNode=%u MinMemoryCPU=%" PRIu64 "M MinTmpDiskNode=0\n", min_cpus, s->mem_per_cpu_mib);
  else if (s->mem_per_node_mib)
    fprintf(out, "   MinCPUsNode=%u MinMemoryNode=%" PRIu64 "M MinTmpDiskNode=0\n", min_cpus, s->mem_per_node_mib);
  else
    fprintf(out, "   MinCPUsNode=%u MinMemoryNode=0 MinTmpDiskNode=0\n", min_cpus);
  fprintf(out, "   Features=%s DelayBoot=00:00:00\n", PX_STR(s->constraint));
  if (s->reservation) fprintf(out, "   Reservation=%s\n", s->reservation);
  fprintf(out, "   OverSubscribe=%s Contiguous=0 Licenses=(null) Network=(null)\n",
          s->exclusive ? "NO" : "OK");
}

static void job_files(FILE *out, const struct px_job_info *j) {
  const struct px_jobspec *s = &j->spec;
  char buf[1024];
  fprintf(out, "   Command=%s\n", s->argv && s->argv[0] ? s->argv[0] : "(null)");
  fprintf(out, "   WorkDir=%s\n", PX_STR(s->workdir));
  output_path(buf, sizeof buf, j, s->stderr_path ? s->stderr_path : s->stdout_path);
  fprintf(out, "   StdErr=%s\n", buf);
  fprintf(out, "   StdIn=%s\n", s->stdin_path ? s->stdin_path : "/dev/null");
  output_path(buf, sizeof buf, j, s->stdout_path);
  fprintf(out, "   StdOut=%s\n", buf);
  fprintf(out, "   Power=\n");
  const char *type = s->gpu_type ? s->gpu_type : "", *colon = s->gpu_type ? ":" : "";
  if (s->cpus_per_gpu) fprintf(out, "   CpusPerTres=gres:gpu:%u\n", s->cpus_per_gpu);
  if (s->mem_per_gpu_mib) fprintf(out, "   MemPerTres=gres:gpu:%llu\n", (unsigned long long)s->mem_per_gpu_mib);
  if (s->gpus) fprintf(out, "   TresPerJob=gres:gpu:%s%s%u\n", type, colon, s->gpus);
  if (s->gpu_share) fprintf(out, "   TresPerJob=gres:gpu:%s%s0.%02u\n", type, colon, s->gpu_share);
  if (s->gpus_per_node) fprintf(out, "   TresPerNode=gres:gpu:%s%s%u\n", type, colon, s->gpus_per_node);
  if (s->gpus_per_task) fprintf(out, "   TresPerTask=gres:gpu:%s%s%u\n", type, colon, s->gpus_per_task);
  if (s->mail_type) fprintf(out, "   MailUser=%s MailType=%s\n", PX_STR(s->mail_user), s->mail_type);
}

void px_fmt_scontrol_job(FILE *out, const struct px_job_info *j, int64_t now) {
  const struct px_jobspec *s = &j->spec;
  char grp[64];
  fprintf(out, "JobId=%" PRIu64, j->job_id);
  if (j->array_job_id && j->array_task_id == UINT32_MAX) /* the pending remainder, as Slurm */
    fprintf(out, " ArrayJobId=%" PRIu64 " ArrayTaskId=%s", j->array_job_id, PX_STR(j->array_pending));
  else if (j->array_job_id)
    fprintf(out, " ArrayJobId=%" PRIu64 " ArrayTaskId=%u", j->array_job_id, j->array_task_id);
  fprintf(out, " JobName=%s\n", PX_STR(s->name));
  group_name(grp, sizeof grp, s->gid);
  fprintf(out, "   UserId=%s(%u) GroupId=%s(%u) MCS_label=N/A\n", PX_STR(s->user), s->uid, grp, s->gid);
  fprintf(out, "   Priority=%u Nice=%d Account=%s QOS=%s\n", j->priority, s->nice,
          PX_STR(s->account), PX_STR(s->qos));
  char dep[512];
  px_fmt_job_dependency(dep, sizeof dep, j);
  fprintf(out, "   JobState=%s Reason=%s Dependency=%s\n", j->state, j->reason, dep);
  fprintf(out, "   Requeue=%d Restarts=%u BatchFlag=1 Reboot=0 ExitCode=%d:%d\n", s->requeue ? 1 : 0,
          j->restarts, j->exit_code, j->term_signal);
  job_times(out, j, now);
  fprintf(out, "   Partition=%s AllocNode:Sid=%s:0\n", PX_STR(s->partition), "localhost");
  char *req = compressed(s->nodelist), *exc = compressed(s->exclude);
  fprintf(out, "   ReqNodeList=%s ExcNodeList=%s\n", PX_STR(req), PX_STR(exc));
  free(req);
  free(exc);
  fprintf(out, "   NodeList=%s\n", j->nodelist ? j->nodelist : "");
  if (j->start_time > 0 && j->nodelist) {
    char **names;
    size_t n;
    if (!px_cli_hostlist_expand(j->nodelist, &names, &n) && n) {
      fprintf(out, "   BatchHost=%s\n", names[0]);
      px_cli_strv_free(names, n);
    }
  }
  job_shape(out, j);
  job_files(out, j);
  fputs("   \n\n", out);
}

void px_fmt_scontrol_node(FILE *out, const struct px_node_info *n) {
  char mem[32], tres[160];
  fprintf(out, "NodeName=%s Arch=%s CoresPerSocket=%u \n", n->name, "x86_64", n->cpus);
  fprintf(out, "   CPUAlloc=%u CPUEfctv=%u CPUTot=%u CPULoad=N/A\n", n->cpus_alloc, n->cpus, n->cpus);
  fprintf(out, "   AvailableFeatures=%s\n   ActiveFeatures=%s\n", PX_STR(n->features), PX_STR(n->features));
  if (n->gres)
    fprintf(out, "   Gres=%s\n", n->gres);
  else if (n->gpus)
    fprintf(out, "   Gres=gpu:%s%s%u\n", n->gpu_type ? n->gpu_type : "", n->gpu_type ? ":" : "", n->gpus);
  else
    fprintf(out, "   Gres=(null)\n");
  fprintf(out, "   NodeAddr=%s NodeHostName=%s Version=phalanx\n", n->addr ? n->addr : n->name, n->name);
  fprintf(out, "   RealMemory=%" PRIu64 " AllocMem=%" PRIu64 " FreeMem=N/A Sockets=1 Boards=1\n",
          n->mem_mib, n->mem_alloc_mib);
  fprintf(out, "   State=%s%s%s ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A\n", n->state,
          n->reboot ? "+" : "", n->reboot ? n->reboot : "");
  fprintf(out, "   Partitions=%s \n", PX_STR(n->partitions));
  px_fmt_mem(mem, sizeof mem, n->mem_mib);
  if (n->gpus)
    snprintf(tres, sizeof tres, "cpu=%u,mem=%s,billing=%u,gres/gpu=%u", n->cpus, mem, n->cpus, n->gpus);
  else
    snprintf(tres, sizeof tres, "cpu=%u,mem=%s,billing=%u", n->cpus, mem, n->cpus);
  fprintf(out, "   CfgTRES=%s\n", tres);
  tres[0] = '\0';
  if (n->cpus_alloc) {
    px_fmt_mem(mem, sizeof mem, n->mem_alloc_mib);
    int w = snprintf(tres, sizeof tres, "cpu=%u", n->cpus_alloc);
    if (n->mem_alloc_mib) w += snprintf(tres + w, sizeof tres - (size_t)w, ",mem=%s", mem);
    if (n->gpus_alloc) snprintf(tres + w, sizeof tres - (size_t)w, ",gres/gpu=%u", n->gpus_alloc);
  }
  fprintf(out, "   AllocTRES=%s\n", tres);
  if (n->gres_used) fprintf(out, "   GresUsed=%s\n", n->gres_used); /* several GPU types */
  if (n->gpus_out) fprintf(out, "   GpusOut=%u GpuHealth=%s\n", n->gpus_out, PX_STR(n->gpu_health));
  if (n->gpus_shared) /* fractional jobs (docs/gpus.md) */
    fprintf(out, "   GpusShared=%u GpuSharesUsed=%u.%02u\n", n->gpus_shared, n->gpu_share_used / 100,
            n->gpu_share_used % 100);
  if (n->reason && *n->reason && n->reason_time > 0) { /* Slurm: Reason=bad fan [root@2026-12-05T05:50:00] */
    char at[32];
    px_cli_fmt_iso(at, sizeof at, n->reason_time, "Unknown");
    fprintf(out, "   Reason=%s [%s@%s]\n", n->reason, n->reason_user && *n->reason_user ? n->reason_user : "Unknown",
            at);
  } else if (n->reason && *n->reason) {
    fprintf(out, "   Reason=%s\n", n->reason); /* when it was set is not known: Slurm prints no [user@time] */
  }
  fputc('\n', out);
}

static bool node_in(const struct px_node_info *n, const char *part) {
  size_t len = strlen(part);
  for (const char *p = n->partitions; p && *p;) {
    const char *e = strchr(p, ',');
    size_t l = e ? (size_t)(e - p) : strlen(p);
    if (l == len && !strncmp(p, part, len)) return true;
    p = e ? e + 1 : NULL;
  }
  return false;
}

void px_fmt_scontrol_partition(FILE *out, const struct px_partition_info *p,
                               const struct px_node_info *nodes, size_t nnodes) {
  uint64_t cpus = 0, mem = 0, gpus = 0;
  for (size_t i = 0; i < nnodes; i++) {
    if (!node_in(&nodes[i], p->name)) continue;
    cpus += nodes[i].cpus;
    mem += nodes[i].mem_mib;
    gpus += nodes[i].gpus;
  }
  char a[32], b[32], m[32];
  px_cli_fmt_hms(a, sizeof a, p->default_time_s ? p->default_time_s : PX_CLI_UNLIMITED);
  px_cli_fmt_hms(b, sizeof b, p->max_time_s ? p->max_time_s : PX_CLI_UNLIMITED);
  fprintf(out, "PartitionName=%s\n", p->name);
  fprintf(out, "   AllowGroups=ALL AllowAccounts=ALL AllowQos=ALL\n");
  fprintf(out, "   AllocNodes=ALL Default=%s QoS=N/A\n", p->is_default ? "YES" : "NO");
  fprintf(out, "   DefaultTime=%s DisableRootJobs=NO ExclusiveUser=NO GraceTime=0 Hidden=NO\n", a);
  if (p->max_nodes && p->max_nodes != UINT32_MAX)
    fprintf(out, "   MaxNodes=%u MaxTime=%s MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n", p->max_nodes, b);
  else
    fprintf(out, "   MaxNodes=UNLIMITED MaxTime=%s MinNodes=0 LLN=NO MaxCPUsPerNode=UNLIMITED\n", b);
  fprintf(out, "   Nodes=%s\n", PX_STR(p->nodelist));
  fprintf(out, "   PriorityJobFactor=1 PriorityTier=%u RootOnly=NO ReqResv=NO OverSubscribe=NO\n",
          p->priority_tier);
  fprintf(out, "   OverTimeLimit=NONE PreemptMode=N/A\n"); /* not in the view yet */
  fprintf(out, "   State=%s TotalCPUs=%" PRIu64 " TotalNodes=%u SelectTypeParameters=NONE\n",
          p->up ? "UP" : "DOWN", cpus, p->nnodes);
  fprintf(out, "   JobDefaults=(null)\n   DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED\n");
  px_fmt_mem(m, sizeof m, mem);
  fprintf(out, "   TRES=cpu=%" PRIu64 ",mem=%s,node=%u,billing=%" PRIu64, cpus, m, p->nnodes, cpus);
  if (gpus) fprintf(out, ",gres/gpu=%" PRIu64, gpus);
  fputs("\n\n", out);
}
