/* task.c - the child side of starting a task (task.h). */
#include "agent/task.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/jobenv.h"
#include "agent/outpath.h"
#include "util/error.h"

/* Reports why the child failed to the parent and exits; never returns. */
static void die(int pipefd, int code, const char *fmt, const char *arg) {
  char msg[512];
  int n = snprintf(msg, sizeof msg, fmt, arg, strerror(errno));
  if (n > 0 && write(pipefd, msg, (size_t)n) < 0) { /* the parent reads what it can */ }
  _exit(code);
}

static void pin_cpus(const struct px_launch *l, bool emulated) {
  if (!l->ncpu_ids || emulated) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (uint32_t i = 0; i < l->ncpu_ids; i++)
    if (l->cpu_ids[i] < CPU_SETSIZE) CPU_SET(l->cpu_ids[i], &set);
  /* the cpuset cgroup already confines the job; this also holds without it */
  sched_setaffinity(0, sizeof set, &set);
}

static void become_user(const struct px_launch *l, int pipefd) {
  if (setgroups(0, NULL) != 0 && errno != EPERM) die(pipefd, 1, "setgroups for %s: %s", l->user);
  if (initgroups(l->user, l->gid) != 0) die(pipefd, 1, "initgroups for %s: %s", l->user);
  if (setgid(l->gid) != 0) die(pipefd, 1, "setgid for %s: %s", l->user);
  if (setuid(l->uid) != 0) die(pipefd, 1, "setuid for %s: %s", l->user);
  if (l->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0)) {
    errno = EPERM;
    die(pipefd, 1, "could still regain root after becoming %s: %s", l->user);
  }
}

/* Opens the task's stdin/stdout/stderr as the user (privileges already dropped). */
static void open_stdio(const struct px_task_spec *t, uint32_t task_id, int pipefd) {
  const struct px_launch *l = t->l;
  char out[4096], errp[4096], in[4096];
  if (px_outpath_expand(l->stdout_path, l, t->site->node, task_id, out, sizeof out))
    die(pipefd, 1, "output path too long: %s%s", "");
  const char *epat = l->stderr_path ? l->stderr_path : l->stdout_path;
  if (px_outpath_expand(epat, l, t->site->node, task_id, errp, sizeof errp))
    die(pipefd, 1, "error path too long: %s%s", "");
  int flags = O_WRONLY | O_CREAT | (t->truncate_output ? O_TRUNC : O_APPEND);
  int fd = open(out, flags, 0644);
  if (fd < 0) die(pipefd, 1, "cannot open output file %s: %s", out);
  if (dup2(fd, 1) < 0) die(pipefd, 1, "dup2 %s: %s", out);
  if (strcmp(out, errp) != 0) {
    close(fd);
    fd = open(errp, flags, 0644);
    if (fd < 0) die(pipefd, 1, "cannot open error file %s: %s", errp);
  }
  if (dup2(fd, 2) < 0) die(pipefd, 1, "dup2 %s: %s", errp);
  close(fd);
  const char *ipat = l->stdin_path ? l->stdin_path : "/dev/null";
  if (px_outpath_expand(ipat, l, t->site->node, task_id, in, sizeof in)) snprintf(in, sizeof in, "/dev/null");
  fd = open(in, O_RDONLY);
  if (fd < 0) die(pipefd, 1, "cannot open input file %s: %s", in);
  dup2(fd, 0);
  if (fd > 2) close(fd);
}

/* Login-like defaults the user's exported environment may lack. */
static void user_defaults(struct px_strvec *env, const struct px_launch *l) {
  struct passwd *pw = getpwuid(l->uid);
  if (!px_jobenv_get(env, "PATH")) px_jobenv_set(env, "PATH", "/usr/local/bin:/usr/bin:/bin");
  if (!pw) return;
  if (!px_jobenv_get(env, "HOME")) px_jobenv_set(env, "HOME", pw->pw_dir);
  if (!px_jobenv_get(env, "USER")) px_jobenv_set(env, "USER", pw->pw_name);
  if (!px_jobenv_get(env, "LOGNAME")) px_jobenv_set(env, "LOGNAME", pw->pw_name);
  if (!px_jobenv_get(env, "SHELL")) px_jobenv_set(env, "SHELL", pw->pw_shell);
}

static void reset_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  for (int s = 1; s < NSIG; s++) signal(s, SIG_DFL);
}

static void child(const struct px_task_spec *t, int pipefd) {
  const struct px_launch *l = t->l;
  setpgid(0, t->pgid);
  if (t->cg->version && px_cg_attach(t->cg, 0) != 0) die(pipefd, 1, "cannot join the job's cgroup%s: %s", "");
  pin_cpus(l, t->site->emulated_cpus);
  struct px_task_ident id = {.local_id = t->local_id, .proc_id = px_jobenv_proc_id(l, t->local_id),
                             .local_tasks = l->tasks_per_node[l->node_rank], .batch = t->batch};
  struct px_jobenv_site site = {t->site->cluster[0] ? t->site->cluster : NULL, t->site->node, t->renumber_gpus};
  struct px_strvec env = {0};
  if (px_jobenv_build(l, &site, &id, &env)) die(pipefd, 1, "out of memory building the environment%s: %s", "");
  char pidbuf[24];
  snprintf(pidbuf, sizeof pidbuf, "%d", (int)getpid());
  px_jobenv_set(&env, "SLURM_TASK_PID", pidbuf);
  user_defaults(&env, l);
  become_user(l, pipefd);
  umask(022);
  open_stdio(t, id.proc_id, pipefd);
  const char *wd = l->workdir ? l->workdir : l->submit_dir ? l->submit_dir : "/tmp";
  if (chdir(wd) != 0) {
    /* as Slurm: the job still runs, from /tmp, and says so in its error file */
    dprintf(2, "phalanx: error: couldn't chdir to `%s': %s: going to /tmp instead\n", wd, strerror(errno));
    if (chdir("/tmp") != 0) die(pipefd, 1, "cannot chdir to /tmp%s: %s", "");
  }
  reset_signals();
  if (t->script_path) {
    char *argv[] = {(char *)t->script_path, NULL};
    execve(t->script_path, argv, env.v);
    if (errno == ENOEXEC) { /* no #! line: run it with the shell, as sh would */
      char *shv[] = {"/bin/sh", (char *)t->script_path, NULL};
      execve("/bin/sh", shv, env.v);
    }
    die(pipefd, 127, "cannot execute the batch script %s: %s", t->script_path);
  }
  execvpe(l->argv[0], l->argv, env.v);
  die(pipefd, 127, "cannot execute %s: %s", l->argv[0]);
}

int px_task_spawn(const struct px_task_spec *t, pid_t *pid, char *err, size_t errlen) {
  int p[2];
  if (pipe2(p, O_CLOEXEC) != 0) {
    snprintf(err, errlen, "pipe: %s", strerror(errno));
    return PX_EIO;
  }
  pid_t c = fork();
  if (c < 0) {
    snprintf(err, errlen, "fork: %s", strerror(errno));
    close(p[0]);
    close(p[1]);
    return PX_EAGAIN;
  }
  if (c == 0) {
    close(p[0]);
    child(t, p[1]);
  }
  close(p[1]);
  /* Also set the group from here: whichever of parent and child runs first. */
  setpgid(c, t->pgid ? t->pgid : c);
  ssize_t n;
  char msg[512];
  do n = read(p[0], msg, sizeof msg - 1);
  while (n < 0 && errno == EINTR);
  close(p[0]);
  if (n > 0) {
    msg[n] = '\0';
    snprintf(err, errlen, "%s", msg);
    int st;
    waitpid(c, &st, 0);
    return PX_EIO;
  }
  *pid = c;
  return 0;
}
