/* launch.c - starting a job's supervisor (launch.h). */
#include "agent/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/error.h"
#include "util/log.h"

void px_jobdir_path(const char *state_dir, uint64_t job_id, uint32_t restart, char *buf, size_t size) {
  snprintf(buf, size, "%s/jobs/%llu.%u", state_dir, (unsigned long long)job_id, restart);
}

/* The fallback when there is no zygote: exec `phalanx agent --supervise`. */
static int exec_supervisor(const char *jobdir, pid_t *pid) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return PX_EIO;
  self[n] = '\0';
  char *argv[] = {self, "agent", "--supervise", (char *)jobdir, NULL};
  pid_t c = fork();
  if (c < 0) return PX_EAGAIN;
  if (c == 0) {
    /* Only async-signal-safe calls between fork and exec: the agent has
     * other threads, whose locks (malloc, stdio) a plain fork would copy
     * held. The supervisor keeps stdout/stderr (the agent's log) and none of
     * the agent's sockets, signalfd or pipes. */
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (fd > 0) dup2(fd, 0);
    close_range(3, ~0U, 0);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    struct sigaction dfl = {.sa_handler = SIG_DFL};
    for (int s = 1; s < NSIG; s++) sigaction(s, &dfl, NULL); /* task.c relies on it */
    execv(self, argv);
    _exit(127);
  }
  *pid = c;
  return 0;
}

/* The job's directory: a recycled one renamed into place, or a new one.
 * Either way its appearance under its name is atomic, and refused when
 * the name exists (this attempt started before). */
static int make_jobdir(const char *reuse, bool *used, const char *jobdir) {
  *used = false;
  if (reuse) {
    if (renameat2(AT_FDCWD, reuse, AT_FDCWD, jobdir, RENAME_NOREPLACE) == 0) return *used = true, 0;
    if (errno == EEXIST) return PX_EEXIST;
  }
  if (mkdir(jobdir, 0700) != 0) return errno == EEXIST ? PX_EEXIST : PX_EIO;
  return 0;
}

int px_job_start(const char *state_dir, const struct px_launch *l, const struct px_site *site,
                 struct px_zygote *z, const char *reuse, bool *used, char *jobdir, size_t size, pid_t *pid) {
  px_jobdir_path(state_dir, l->job_id, l->restart_count, jobdir, size);
  bool ignored;
  int made = make_jobdir(reuse, used ? used : &ignored, jobdir);
  if (made == PX_EIO && errno == ENOENT) { /* the first job: no jobs/ yet */
    char jobs[4096];
    snprintf(jobs, sizeof jobs, "%s/jobs", state_dir);
    mkdir(state_dir, 0755);
    mkdir(jobs, 0711);
    chmod(jobs, 0711); /* users traverse to their own job's script, nothing else */
    made = make_jobdir(reuse, used ? used : &ignored, jobdir);
  }
  if (made) return made;
  char *text = px_launch_encode(l);
  int rc = text ? px_file_put(jobdir, "launch.json", text) : PX_ENOMEM;
  free(text);
  if (!rc) rc = px_site_write(jobdir, site);
  if (rc) {
    /* keep the directory: the attempt counts as started, and its end is reported as failed */
    struct px_job_status st = {.job_id = l->job_id, .state = "FAILED", .exit_code = 1};
    snprintf(st.error, sizeof st.error, "cannot write the job directory");
    px_status_write(jobdir, &st);
    return rc;
  }
  rc = z && z->fd >= 0 ? px_zygote_spawn(z, jobdir, pid) : PX_ESTATE;
  if (rc) rc = exec_supervisor(jobdir, pid);
  if (rc) return rc;
  px_debug("job %llu: supervisor %d in %s", (unsigned long long)l->job_id, (int)*pid, jobdir);
  return 0;
}
