/* task.c - starting a task (task.h). */
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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/jobenv.h"
#include "agent/mps.h"
#include "agent/outpath.h"
#include "util/error.h"

#define MAX_GROUPS 1024
#define CHILD_STACK (256 * 1024)
#define PID_DIGITS 10

/* Everything the child needs, prepared by the parent: the child shares the
 * parent's memory until it execs, so it must not allocate, take locks or
 * touch NSS; it runs system calls on what is here (see task.h). */
struct prep {
  const struct px_task_spec *t;
  char **envp;
  char *pid_value;                        /* SLURM_TASK_PID's digits, written by the child */
  char procs[PX_CG_NCTL][PATH_MAX + 16];  /* the files to write to join the cgroup (tasks, cgroup.procs) */
  int nprocs;
  cpu_set_t cpus;
  bool pin;
  gid_t groups[MAX_GROUPS];
  int ngroups;
  char out[4096], err[4096], in[4096];
  int oflags;
  const char *wd;
  int pipefd;
  struct px_ctr_task ctr;                 /* with t->ctr: the runtime's command line */
};

/* ---- the child (no allocation, no locks: plain system calls) ---- */

static void put(int fd, const char *s) {
  if (s && write(fd, s, strlen(s)) < 0) { /* the parent reads what it can */ }
}

/* Reports "what arg: error" to the parent and exits; never returns. */
__attribute__((noreturn)) static void die(const struct prep *p, int code, const char *what, const char *arg) {
  const char *e = strerrordesc_np(errno);
  put(p->pipefd, what);
  if (arg) put(p->pipefd, " "), put(p->pipefd, arg);
  put(p->pipefd, ": ");
  put(p->pipefd, e ? e : "unknown error");
  _exit(code);
}

static void put_pid(char *digits) {
  long pid = syscall(SYS_getpid);
  char rev[PID_DIGITS];
  int n = 0;
  do rev[n++] = (char)('0' + pid % 10), pid /= 10;
  while (pid && n < PID_DIGITS);
  for (int i = 0; i < n; i++) digits[i] = rev[n - 1 - i];
  digits[n] = '\0';
}

static void become_user(const struct prep *p) {
  const struct px_launch *l = p->t->l;
  /* raw system calls: glibc's wrappers may signal sibling threads (setxid) */
  if (syscall(SYS_setgroups, (size_t)p->ngroups, p->groups) != 0) die(p, 1, "setgroups for", l->user);
  if (syscall(SYS_setresgid, l->gid, l->gid, l->gid) != 0) die(p, 1, "setgid for", l->user);
  if (syscall(SYS_setresuid, l->uid, l->uid, l->uid) != 0) die(p, 1, "setuid for", l->user);
  if (l->uid != 0 && (syscall(SYS_setuid, 0) == 0 || syscall(SYS_setresuid, -1, 0, -1) == 0)) {
    errno = EPERM;
    die(p, 1, "could still regain root after becoming", l->user);
  }
}

/* The task's stdin/stdout/stderr, opened as the user (privileges already dropped). */
static void open_stdio(const struct prep *p) {
  int fd = open(p->out, p->oflags, 0644);
  if (fd < 0) die(p, 1, "cannot open output file", p->out);
  if (dup2(fd, 1) < 0) die(p, 1, "dup2", p->out);
  if (strcmp(p->out, p->err) != 0) {
    close(fd);
    fd = open(p->err, p->oflags, 0644);
    if (fd < 0) die(p, 1, "cannot open error file", p->err);
  }
  if (dup2(fd, 2) < 0) die(p, 1, "dup2", p->err);
  close(fd);
  fd = open(p->in, O_RDONLY);
  if (fd < 0) die(p, 1, "cannot open input file", p->in);
  dup2(fd, 0);
  if (fd > 2) close(fd);
}

static void enter_workdir(const struct prep *p) {
  if (chdir(p->wd) == 0) return;
  /* as Slurm: the job still runs, from /tmp, and says so in its error file */
  const char *e = strerrordesc_np(errno);
  put(2, "phalanx: error: couldn't chdir to `"), put(2, p->wd), put(2, "': ");
  put(2, e ? e : "error"), put(2, ": going to /tmp instead\n");
  if (chdir("/tmp") != 0) die(p, 1, "cannot chdir to", "/tmp");
}

/* The supervisor's dispositions are the defaults (the zygote reset them at
 * its start, the agent before an exec'd supervisor) but SIGPIPE, which it
 * ignores: handlers do not survive exec, an ignored signal would. Two calls,
 * not one per signal: this runs once per task. */
static void reset_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  struct sigaction dfl = {.sa_handler = SIG_DFL};
  sigaction(SIGPIPE, &dfl, NULL);
}

/* Output files are opened with the user's rights while the child stays
 * root for the runtime: effective ids only, restored after. */
static void open_stdio_as_user(const struct prep *p) {
  const struct px_launch *l = p->t->l;
  if (syscall(SYS_setgroups, (size_t)p->ngroups, p->groups) != 0 || syscall(SYS_setresgid, -1, l->gid, -1) != 0 ||
      syscall(SYS_setresuid, -1, l->uid, -1) != 0)
    die(p, 1, "cannot take the ids of", l->user);
  open_stdio(p);
  if (syscall(SYS_setresuid, -1, 0, -1) != 0 || syscall(SYS_setresgid, -1, 0, -1) != 0 ||
      syscall(SYS_setgroups, (size_t)0, NULL) != 0)
    die(p, 1, "cannot return to root after opening the output of", l->user);
}

/* The task in its image: the OCI runtime, started as root inside the job's
 * cgroups, makes the container and becomes the user there (container.h). */
__attribute__((noreturn)) static void exec_container(const struct prep *p) {
  open_stdio_as_user(p);
  const char *what, *arg;
  const struct px_launch *l = p->t->l;
  if (px_ctr_child_setup(p->t->ctr, l->uid, l->gid, p->groups, p->ngroups, &what, &arg)) die(p, 1, what, arg);
  reset_signals();
  static char *const env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", NULL};
  execvpe(p->ctr.argv[0], p->ctr.argv, env);
  die(p, 127, "cannot execute the container runtime", p->ctr.argv[0]);
}

static int child(void *arg) {
  const struct prep *p = arg;
  const struct px_task_spec *t = p->t;
  setpgid(0, t->pgid);
  for (int i = 0; i < p->nprocs; i++) {
    int fd = open(p->procs[i], O_WRONLY | O_CLOEXEC);
    /* "0": the writer itself (single-threaded until it execs), on v1 and v2 */
    if (fd < 0 || write(fd, "0", 1) != 1) die(p, 1, "cannot join the job's cgroup", p->procs[i]);
    close(fd);
  }
  /* the cpuset cgroup already confines the job; this also holds without it */
  if (p->pin) sched_setaffinity(0, sizeof p->cpus, &p->cpus);
  put_pid(p->pid_value);
  if (t->ctr) exec_container(p);
  become_user(p);
  umask(022);
  open_stdio(p);
  enter_workdir(p);
  reset_signals();
  if (t->script_path) {
    char *argv[] = {(char *)t->script_path, NULL};
    execve(t->script_path, argv, p->envp);
    if (errno == ENOEXEC) { /* no #! line: run it with the shell, as sh would */
      char *shv[] = {"/bin/sh", (char *)t->script_path, NULL};
      execve("/bin/sh", shv, p->envp);
    }
    die(p, 127, "cannot execute the batch script", t->script_path);
  }
  execvpe(t->l->argv[0], t->l->argv, p->envp);
  die(p, 127, "cannot execute", t->l->argv[0]);
}

/* ---- the parent ---- */

/* --gpus-per-task: local task k sees entries [k*per, (k+1)*per) of the
 * node's GPU list, as Slurm binds them (--gpu-bind=per_task); the server
 * checked that the node has enough. */
static int gpu_slice(struct px_strvec *env, uint32_t local_id, uint32_t per) {
  const char *all = px_jobenv_get(env, "CUDA_VISIBLE_DEVICES");
  if (!all) return 0;
  char mine[512] = "";
  size_t len = 0;
  uint32_t idx = 0;
  for (const char *p = all; *p; idx++) {
    size_t n = strcspn(p, ",");
    if (idx >= local_id * per && idx < (local_id + 1) * per && len + n + 2 < sizeof mine)
      len += (size_t)snprintf(mine + len, sizeof mine - len, "%s%.*s", len ? "," : "", (int)n, p);
    p += n + (p[n] == ',');
  }
  int rc = px_jobenv_set(env, "CUDA_VISIBLE_DEVICES", mine);
  rc |= px_jobenv_set(env, "GPU_DEVICE_ORDINAL", mine);
  return rc | px_jobenv_set(env, "ROCR_VISIBLE_DEVICES", mine);
}

/* Login-like defaults the user's exported environment may lack. */
static int user_defaults(struct px_strvec *env, const struct px_launch *l) {
  struct passwd *pw = getpwuid(l->uid);
  int rc = 0;
  if (!px_jobenv_get(env, "PATH")) rc |= px_jobenv_set(env, "PATH", "/usr/local/bin:/usr/bin:/bin");
  if (!pw) return rc;
  if (!px_jobenv_get(env, "HOME")) rc |= px_jobenv_set(env, "HOME", pw->pw_dir);
  if (!px_jobenv_get(env, "USER")) rc |= px_jobenv_set(env, "USER", pw->pw_name);
  if (!px_jobenv_get(env, "LOGNAME")) rc |= px_jobenv_set(env, "LOGNAME", pw->pw_name);
  if (!px_jobenv_get(env, "SHELL")) rc |= px_jobenv_set(env, "SHELL", pw->pw_shell);
  return rc;
}

static int build_env(const struct px_task_spec *t, struct px_strvec *env, char **pid_value) {
  const struct px_launch *l = t->l;
  struct px_task_ident id = {.local_id = t->local_id, .proc_id = px_jobenv_proc_id(l, t->local_id),
                             .local_tasks = l->tasks_per_node[l->node_rank], .batch = t->batch};
  char mps[4096] = "";
  if (l->gpu_share && l->ngpus == 1 && t->site->mps_control[0]) px_mps_pipe_dir(t->site->mps_dir, l->gpus[0], mps, sizeof mps);
  struct px_jobenv_site site = {t->site->cluster[0] ? t->site->cluster : NULL, t->site->node, t->renumber_gpus,
                                t->site->gpu_uuids[0] ? t->site->gpu_uuids : NULL, t->site->gpu_mem_mib,
                                mps[0] ? mps : NULL};
  /* room for the pid, which only the child knows */
  if (px_jobenv_build(l, &site, &id, env) || px_jobenv_set(env, "SLURM_TASK_PID", "0000000000") ||
      user_defaults(env, l))
    return PX_ENOMEM;
  for (char *const *e = t->env_after; e && *e; e++) {
    const char *eq = strchr(*e, '=');
    char key[128];
    if (!eq || (size_t)(eq - *e) >= sizeof key) continue;
    snprintf(key, sizeof key, "%.*s", (int)(eq - *e), *e);
    if (px_jobenv_set(env, key, eq + 1)) return PX_ENOMEM;
  }
  if (t->gpus_per_task && gpu_slice(env, t->local_id, t->gpus_per_task)) return PX_ENOMEM;
  *pid_value = (char *)px_jobenv_get(env, "SLURM_TASK_PID");
  return *pid_value ? 0 : PX_ENOMEM;
}

static int prepare(struct prep *p, const struct px_task_spec *t, struct px_strvec *env, char *err, size_t errlen) {
  const struct px_launch *l = t->l;
  if (build_env(t, env, &p->pid_value)) return snprintf(err, errlen, "out of memory building the environment"), PX_ENOMEM;
  p->envp = env->v;
  /* v1: the new task moves its only thread through "tasks". Moving a
   * thread of one's own takes only the cgroup mutex; a cgroup.procs write
   * also takes the kernel's global fork lock for writing (every fork on the
   * machine waits, and the writer waits for an RCU grace period): with
   * hundreds of jobs starting at once, supervisors queued there with idle
   * CPUs. v2 has no "tasks" file outside threaded groups. */
  const char *file = t->cg->version == 1 ? "tasks" : "cgroup.procs";
  for (int c = 0; t->cg->version && c < PX_CG_NCTL; c++)
    if (t->cg->path[c][0]) snprintf(p->procs[p->nprocs++], sizeof p->procs[0], "%s/%s", t->cg->path[c], file);
  CPU_ZERO(&p->cpus);
  p->pin = l->ncpu_ids && !t->site->emulated_cpus;
  for (uint32_t i = 0; p->pin && i < l->ncpu_ids; i++)
    if (l->cpu_ids[i] < CPU_SETSIZE) CPU_SET(l->cpu_ids[i], &p->cpus);
  p->ngroups = MAX_GROUPS;
  if (getgrouplist(l->user, l->gid, p->groups, &p->ngroups) < 0)
    return snprintf(err, errlen, "initgroups for %s: more than %d groups", l->user, MAX_GROUPS), PX_ERANGE;
  uint32_t task_id = px_jobenv_proc_id(l, t->local_id);
  const char *epat = l->stderr_path ? l->stderr_path : l->stdout_path;
  if (px_outpath_expand(l->stdout_path, l, t->site->node, task_id, p->out, sizeof p->out))
    return snprintf(err, errlen, "output path too long"), PX_ERANGE;
  if (px_outpath_expand(epat, l, t->site->node, task_id, p->err, sizeof p->err))
    return snprintf(err, errlen, "error path too long"), PX_ERANGE;
  if (px_outpath_expand(l->stdin_path ? l->stdin_path : "/dev/null", l, t->site->node, task_id, p->in, sizeof p->in))
    snprintf(p->in, sizeof p->in, "/dev/null");
  p->oflags = O_WRONLY | O_CREAT | (t->truncate_output ? O_TRUNC : O_APPEND);
  p->wd = l->workdir ? l->workdir : l->submit_dir ? l->submit_dir : "/tmp";
  if (t->ctr && px_ctr_task(t->ctr, l, p->envp, t->script_path, t->local_id, &p->ctr, err, errlen)) return PX_EIO;
  return 0;
}

/* The child's stack, reused by every spawn of this (single-threaded) process. */
static char *child_stack(void) {
  static char *stack;
  if (!stack) {
    void *m = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    stack = m == MAP_FAILED ? NULL : m;
  }
  return stack ? stack + CHILD_STACK : NULL;
}

int px_task_spawn(const struct px_task_spec *t, pid_t *pid, char *err, size_t errlen) {
  static struct prep p; /* large (paths); the child reads it from the shared memory */
  memset(&p, 0, sizeof p);
  p.t = t;
  struct px_strvec env = {0};
  int rc = prepare(&p, t, &env, err, errlen);
  char *stack = rc ? NULL : child_stack();
  if (!rc && !stack) rc = PX_ENOMEM, snprintf(err, errlen, "no memory for the task's stack");
  int fds[2] = {-1, -1};
  if (!rc && pipe2(fds, O_CLOEXEC) != 0) rc = PX_EIO, snprintf(err, errlen, "pipe: %s", strerror(errno));
  pid_t c = -1;
  if (!rc) {
    p.pipefd = fds[1];
    /* The parent sleeps until the child execs or exits (CLONE_VFORK): no
     * copy of the supervisor's page tables for a process that execs at once. */
    c = clone(child, stack, CLONE_VM | CLONE_VFORK | SIGCHLD, &p);
    if (c < 0) rc = PX_EAGAIN, snprintf(err, errlen, "clone: %s", strerror(errno));
  }
  if (fds[1] >= 0) close(fds[1]);
  px_strvec_free_all(&env);
  if (rc) {
    if (fds[0] >= 0) close(fds[0]);
    return rc;
  }
  /* Also set the group from here: whichever of parent and child runs first. */
  setpgid(c, t->pgid ? t->pgid : c);
  ssize_t n;
  char msg[512];
  do n = read(fds[0], msg, sizeof msg - 1);
  while (n < 0 && errno == EINTR);
  close(fds[0]);
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
