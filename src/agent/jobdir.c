/* jobdir.c - the job directory files shared by agent and supervisor (jobdir.h). */
#include "agent/jobdir.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/json_rd.h"
#include "util/error.h"

int px_file_put(const char *dir, const char *name, const char *text) {
  char tmp[PATH_MAX], dst[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
  snprintf(dst, sizeof dst, "%s/%s", dir, name);
  /* The temporary file of a recycled job directory is rewritten in place
   * and cut to length, neither truncated to zero (ext4 then writes it back
   * to disk at close: auto_da_alloc) nor created anew (an inode allocation,
   * which scans past recently deleted inodes on a busy file system). */
  int fd = open(tmp, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return PX_EIO;
  size_t len = strlen(text), off = 0;
  while (off < len) {
    ssize_t w = write(fd, text + off, len - off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) break;
    off += (size_t)w;
  }
  bool ok = off == len && ftruncate(fd, (off_t)len) == 0;
  close(fd);
  if (!ok || rename(tmp, dst) != 0) {
    unlink(tmp);
    return PX_EIO;
  }
  return 0;
}

char *px_file_get(const char *dir, const char *name) {
  char path[PATH_MAX];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "re");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0;
  for (;;) {
    if (len + 4096 + 1 > cap) {
      cap = cap ? cap * 2 : 8192;
      char *nb = realloc(buf, cap);
      if (!nb) break;
      buf = nb;
    }
    size_t n = fread(buf + len, 1, cap - len - 1, f);
    len += n;
    if (n == 0) break;
  }
  fclose(f);
  if (buf) buf[len] = '\0';
  return buf;
}

static int put_json(const char *dir, const char *name, json_t *o) {
  char *s = px_wr_finish(o);
  if (!s) return PX_ENOMEM;
  int rc = px_file_put(dir, name, s);
  free(s);
  return rc;
}

/* Loads dir/name as a JSON object: PX_ENOENT when absent. */
static int get_json(const char *dir, const char *name, json_t **out) {
  char *s = px_file_get(dir, name);
  if (!s) return errno == ENOENT ? PX_ENOENT : PX_EIO;
  int rc = px_rd_parse(s, out, NULL);
  free(s);
  return rc;
}

int px_site_write(const char *dir, const struct px_site *s) {
  json_t *o = json_pack("{ss ss ss ss sI ss sI sI sI sb sb sb sb ss ss}", "node", s->node, "cluster", s->cluster,
                            "cgroup_root", s->cgroup_root, "cgroup_name", s->cgroup_name,
                            "cg_slot", (json_int_t)s->cg_slot, "notify", s->notify, "kill_wait_s",
                            (json_int_t)s->kill_wait_s, "pids_max", (json_int_t)s->pids_max,
                            "node_ngpus", (json_int_t)s->node_ngpus, "allow_root", s->allow_root,
                            "no_cgroup", s->no_cgroup, "emulated_gpus", s->emulated_gpus, "emulated_cpus", s->emulated_cpus,
                            "gpu_uuids", s->gpu_uuids, "gpu_devs", s->gpu_devs);
  if (o && (json_object_set_new(o, "gpu_mem_mib", json_integer((json_int_t)s->gpu_mem_mib)) ||
            json_object_set_new(o, "mps_control", json_string(s->mps_control)) ||
            json_object_set_new(o, "mps_dir", json_string(s->mps_dir)) ||
            json_object_set_new(o, "ctr_image_dir", json_string(s->ctr_image_dir)) ||
            json_object_set_new(o, "ctr_cache_dir", json_string(s->ctr_cache_dir)) ||
            json_object_set_new(o, "ctr_runtime", json_string(s->ctr_runtime)))) {
    json_decref(o);
    o = NULL;
  }
  return put_json(dir, "site.json", o);
}

int px_site_read(const char *dir, struct px_site *s) {
  json_t *j;
  int rc = get_json(dir, "site.json", &j);
  if (rc) return rc;
  memset(s, 0, sizeof *s);
  struct px_rd r;
  px_rd_init(&r, j, "site", NULL);
  px_rd_buf(&r, "node", true, s->node, sizeof s->node);
  px_rd_buf(&r, "cluster", false, s->cluster, sizeof s->cluster);
  px_rd_buf(&r, "cgroup_root", false, s->cgroup_root, sizeof s->cgroup_root);
  px_rd_buf(&r, "cgroup_name", true, s->cgroup_name, sizeof s->cgroup_name);
  px_rd_u32(&r, "cg_slot", false, &s->cg_slot);
  px_rd_buf(&r, "notify", false, s->notify, sizeof s->notify);
  px_rd_i64(&r, "kill_wait_s", false, &s->kill_wait_s);
  px_rd_u64(&r, "pids_max", false, &s->pids_max);
  px_rd_u32(&r, "node_ngpus", false, &s->node_ngpus);
  px_rd_bool(&r, "allow_root", false, &s->allow_root);
  px_rd_bool(&r, "no_cgroup", false, &s->no_cgroup);
  px_rd_bool(&r, "emulated_gpus", false, &s->emulated_gpus);
  px_rd_bool(&r, "emulated_cpus", false, &s->emulated_cpus);
  px_rd_buf(&r, "gpu_uuids", false, s->gpu_uuids, sizeof s->gpu_uuids);
  px_rd_buf(&r, "gpu_devs", false, s->gpu_devs, sizeof s->gpu_devs);
  px_rd_u64(&r, "gpu_mem_mib", false, &s->gpu_mem_mib);
  px_rd_buf(&r, "mps_control", false, s->mps_control, sizeof s->mps_control);
  px_rd_buf(&r, "mps_dir", false, s->mps_dir, sizeof s->mps_dir);
  px_rd_buf(&r, "ctr_image_dir", false, s->ctr_image_dir, sizeof s->ctr_image_dir);
  px_rd_buf(&r, "ctr_cache_dir", false, s->ctr_cache_dir, sizeof s->ctr_cache_dir);
  px_rd_buf(&r, "ctr_runtime", false, s->ctr_runtime, sizeof s->ctr_runtime);
  rc = px_rd_done(&r);
  json_decref(j);
  return rc;
}

/* Not fsynced: the file carries a job's outcome across a restart of the
 * agent (a process ending), which the page cache survives. A power loss of
 * the node ends everything that ran there anyway: its agent comes back with
 * no supervisor and no outcome for such a job and reports it lost, and the
 * server ends it NODE_FAIL (or requeues it), as Slurm does after a node
 * reboot. The fsync cost a job 0.3-0.9 ms of disk wait and CPU. */
int px_status_write(const char *dir, const struct px_job_status *st) {
  return put_json(dir, "status.json",
                  json_pack("{sI ss si si sI sI sI sI ss}", "job_id", (json_int_t)st->job_id, "state",
                            st->state, "exit_code", (int)st->exit_code, "term_signal",
                            (int)st->term_signal, "peak_mem_mib", (json_int_t)st->peak_mem_mib,
                            "cpu_time_ms", (json_int_t)st->cpu_time_ms, "start_time",
                            (json_int_t)st->start_time, "end_time", (json_int_t)st->end_time,
                            "error", st->error));
}

int px_status_read(const char *dir, struct px_job_status *st) {
  json_t *j;
  int rc = get_json(dir, "status.json", &j);
  if (rc) return rc;
  memset(st, 0, sizeof *st);
  struct px_rd r;
  px_rd_init(&r, j, "status", NULL);
  px_rd_u64(&r, "job_id", true, &st->job_id);
  px_rd_buf(&r, "state", true, st->state, sizeof st->state);
  px_rd_i32(&r, "exit_code", false, &st->exit_code);
  px_rd_i32(&r, "term_signal", false, &st->term_signal);
  px_rd_u64(&r, "peak_mem_mib", false, &st->peak_mem_mib);
  px_rd_u64(&r, "cpu_time_ms", false, &st->cpu_time_ms);
  px_rd_i64(&r, "start_time", false, &st->start_time);
  px_rd_i64(&r, "end_time", false, &st->end_time);
  px_rd_buf(&r, "error", false, st->error, sizeof st->error);
  rc = px_rd_done(&r);
  json_decref(j);
  return rc;
}

static const char *const cg_keys[PX_CG_NCTL] = {"memory", "cpuset", "pids", "devices", "cpuacct", "freezer"};

int px_state_write(const char *dir, const struct px_job_state *st) {
  json_t *cg = json_object();
  for (int c = 0; cg && c < PX_CG_NCTL; c++)
    if (st->cg.path[c][0]) json_object_set_new(cg, cg_keys[c], json_string(st->cg.path[c]));
  return put_json(dir, "state.json",
                  json_pack("{sI sI sI si so}", "supervisor", (json_int_t)st->supervisor,
                            "supervisor_start", (json_int_t)st->supervisor_start, "pgid",
                            (json_int_t)st->pgid, "cgroup_version", st->cg.version, "cgroup", cg));
}

int px_state_read(const char *dir, struct px_job_state *st) {
  json_t *j;
  int rc = get_json(dir, "state.json", &j);
  if (rc) return rc;
  memset(st, 0, sizeof *st);
  struct px_rd r;
  px_rd_init(&r, j, "state", NULL);
  int64_t sup = 0, pg = 0;
  px_rd_i64(&r, "supervisor", true, &sup);
  px_rd_i64(&r, "supervisor_start", false, &st->supervisor_start);
  px_rd_i64(&r, "pgid", false, &pg);
  px_rd_i32(&r, "cgroup_version", false, &st->cg.version);
  json_t *cg = px_rd_get(&r, "cgroup", false);
  for (int c = 0; cg && c < PX_CG_NCTL; c++) {
    const char *p = json_string_value(json_object_get(cg, cg_keys[c]));
    if (p) snprintf(st->cg.path[c], sizeof st->cg.path[c], "%s", p);
  }
  rc = px_rd_done(&r);
  json_decref(j);
  st->supervisor = (pid_t)sup;
  st->pgid = (pid_t)pg;
  return rc;
}

int64_t px_proc_start(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = '\0';
  /* comm may hold spaces and parentheses: fields restart after the last ')' */
  char *p = strrchr(buf, ')');
  if (!p) return -1;
  long long start = -1;
  char state;
  /* after ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
   * utime stime cutime cstime priority nice threads itrealvalue starttime(22) */
  if (sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %lld",
             &state, &start) != 2)
    return -1;
  if (state == 'Z' || state == 'X') return -1; /* a zombie has ended */
  return start;
}

bool px_proc_same(pid_t pid, int64_t start) {
  return pid > 0 && start >= 0 && px_proc_start(pid) == start;
}
