/*
 * mps.c - one CUDA MPS control daemon per shared GPU (mps.h). The daemon
 * writes nvidia-cuda-mps-control.pid into its pipe directory, which tells a
 * later job whether it still runs; jobs/<id> files count the GPU's users.
 */
#include "agent/mps.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

bool px_mps_find(char *out, size_t size) {
  const char *path = getenv("PATH");
  char dirs[4096];
  snprintf(dirs, sizeof dirs, "%s:/usr/bin", path ? path : "");
  char *save = NULL;
  for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
    if ((size_t)snprintf(out, size, "%s/nvidia-cuda-mps-control", d) >= size) continue;
    if (access(out, X_OK) == 0) return true;
  }
  out[0] = '\0';
  return false;
}

int px_mps_pipe_dir(const char *mps_dir, uint32_t gpu, char *out, size_t size) {
  return (size_t)snprintf(out, size, "%s/gpu%u", mps_dir, gpu) < size ? 0 : PX_ERANGE;
}

/* Runs `control [-d]` for the GPU (stdin: `input`, or /dev/null) and waits. */
static int run_control(const char *control, const char *pipe_dir, uint32_t gpu, const char *input) {
  int fds[2] = {-1, -1};
  if (input && pipe2(fds, O_CLOEXEC)) return PX_EIO;
  pid_t pid = fork();
  if (pid == 0) {
    char dev[16], log[4200];
    snprintf(dev, sizeof dev, "%u", gpu);
    snprintf(log, sizeof log, "%s/log", pipe_dir);
    setenv("CUDA_VISIBLE_DEVICES", dev, 1);
    setenv("CUDA_MPS_PIPE_DIRECTORY", pipe_dir, 1);
    setenv("CUDA_MPS_LOG_DIRECTORY", log, 1);
    int in = input ? fds[0] : open("/dev/null", O_RDONLY);
    if (in < 0 || dup2(in, 0) < 0) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (input) execl(control, control, (char *)NULL);
    else execl(control, control, "-d", (char *)NULL);
    _exit(127);
  }
  if (input) {
    close(fds[0]);
    if (pid > 0 && write(fds[1], input, strlen(input)) < 0) px_warn("mps: cannot write to %s", control);
    close(fds[1]);
  }
  int ws = 0;
  if (pid < 0 || waitpid(pid, &ws, 0) != pid) return PX_EIO;
  return WIFEXITED(ws) && WEXITSTATUS(ws) == 0 ? 0 : PX_EIO;
}

static bool daemon_runs(const char *pipe_dir) {
  char path[4200];
  snprintf(path, sizeof path, "%s/nvidia-cuda-mps-control.pid", pipe_dir);
  FILE *f = fopen(path, "re");
  long pid = 0;
  if (!f) return false;
  if (fscanf(f, "%ld", &pid) != 1) pid = 0;
  fclose(f);
  return pid > 0 && kill((pid_t)pid, 0) == 0;
}

/* Creates the GPU's directories and takes its lock: the lock's fd, or -1. */
static int gpu_lock(const char *mps_dir, uint32_t gpu, char *pipe_dir, size_t size) {
  char sub[4300];
  if (px_mps_pipe_dir(mps_dir, gpu, pipe_dir, size)) return -1;
  mkdir(mps_dir, 0755);
  mkdir(pipe_dir, 0755);
  snprintf(sub, sizeof sub, "%s/log", pipe_dir);
  mkdir(sub, 0755);
  snprintf(sub, sizeof sub, "%s/jobs", pipe_dir);
  mkdir(sub, 0755);
  snprintf(sub, sizeof sub, "%s/lock", pipe_dir);
  int fd = open(sub, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

int px_mps_join(const char *control, const char *mps_dir, uint32_t gpu, uint64_t job_id, char *err,
                size_t errsize) {
  char pipe_dir[4096], mark[4400];
  int lock = gpu_lock(mps_dir, gpu, pipe_dir, sizeof pipe_dir);
  if (lock < 0) {
    snprintf(err, errsize, "cannot lock %s/gpu%u: %s", mps_dir, gpu, strerror(errno));
    return PX_EIO;
  }
  snprintf(mark, sizeof mark, "%s/jobs/%llu", pipe_dir, (unsigned long long)job_id);
  int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) close(fd);
  int rc = daemon_runs(pipe_dir) ? 0 : run_control(control, pipe_dir, gpu, NULL);
  if (rc) {
    snprintf(err, errsize, "%s -d for GPU %u failed", control, gpu);
    unlink(mark);
  } else {
    px_info("job %llu: MPS for GPU %u (%s)", (unsigned long long)job_id, gpu, pipe_dir);
  }
  close(lock);
  return rc;
}

static bool dir_empty(const char *path) {
  DIR *d = opendir(path);
  if (!d) return true;
  struct dirent *e;
  bool empty = true;
  while (empty && (e = readdir(d))) empty = e->d_name[0] == '.';
  closedir(d);
  return empty;
}

void px_mps_leave(const char *control, const char *mps_dir, uint32_t gpu, uint64_t job_id) {
  char pipe_dir[4096], path[4400];
  int lock = gpu_lock(mps_dir, gpu, pipe_dir, sizeof pipe_dir);
  if (lock < 0) return;
  snprintf(path, sizeof path, "%s/jobs/%llu", pipe_dir, (unsigned long long)job_id);
  unlink(path);
  snprintf(path, sizeof path, "%s/jobs", pipe_dir);
  if (dir_empty(path) && daemon_runs(pipe_dir) && run_control(control, pipe_dir, gpu, "quit\n"))
    px_warn("mps: GPU %u's control daemon did not take quit", gpu);
  close(lock);
}
