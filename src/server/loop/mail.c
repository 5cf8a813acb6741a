/*
 * mail.c - --mail-type/--mail-user: the server runs MailProg (slurm.conf's
 * key; Slurm's default /bin/mail) as `MailProg -s SUBJECT RECIPIENT`, with
 * an empty body and Slurm's subjects, when a job it journals begins, ends,
 * fails or is requeued:
 *
 *   Slurm Job_id=12 Name=train Began, Queued time 00:00:05
 *   Slurm Job_id=12 Name=train Ended, Run time 01:02:03, COMPLETED, ExitCode 0
 *   Slurm Job_id=12 Name=train Failed, Run time 00:00:09, FAILED, ExitCode 3
 *   Slurm Job_id=12 Name=train Requeued, Run time 00:10:00, REQUEUED
 *
 * The recipient is --mail-user, else the job's user, with "@MailDomain"
 * added to a bare name when MailDomain= is set. SLURM_JOB_ID, SLURM_JOB_NAME,
 * SLURM_JOB_USER, SLURM_JOB_STATE and SLURM_JOB_MAIL_TYPE are in its
 * environment, as Slurm sets them. Only live events send (recovery and a
 * standby replaying the journal do not mail again); the program runs
 * detached from the main loop (posix_spawn) and is reaped by the timers.
 * Not sent: TIME_LIMIT_* warnings, INVALID_DEPEND, STAGE_OUT.
 */
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/event.h"
#include "server/loop/loop.h"
#include "server/tables.h"
#include "util/log.h"
#include "util/units.h"

#define MAIL_RUNNING_MAX 64

extern char **environ;

struct px_mailer {
  pid_t pids[MAIL_RUNNING_MAX];
  uint32_t n;
  bool warned;                  /* MailProg missing: said once */
};

static bool wants(const char *types, const char *word) {
  if (!types) return false;
  size_t n = strlen(word);
  for (const char *p = types; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncasecmp(p, word, n) && (p[n] == ',' || !p[n])) return true;
  return false;
}


static int64_t since(int64_t now, int64_t t) { return now > t ? now - t : 0; } /* a clock step back: 0 */

/* The subject and the state name for ev on j, or false: nothing to send. */
static bool subject(const struct px_sjob *j, const struct px_event *ev, int64_t now, char *buf, size_t n,
                    const char **state) {
  const char *types = j->spec.mail_type, *name = j->spec.name ? j->spec.name : "";
  char t[32];
  unsigned long long id = (unsigned long long)j->id;
  if (ev->kind == PX_EV_START && wants(types, "BEGIN")) {
    px_duration_format_hms(since(now, j->eligible ? j->eligible : j->submit), t, sizeof t);
    *state = "RUNNING";
    return snprintf(buf, n, "Slurm Job_id=%llu Name=%s Began, Queued time %s", id, name, t) > 0;
  }
  px_duration_format_hms(j->start ? since(now, j->start) : 0, t, sizeof t);
  if (ev->kind == PX_EV_REQUEUE && wants(types, "REQUEUE")) {
    *state = "REQUEUED";
    return snprintf(buf, n, "Slurm Job_id=%llu Name=%s Requeued, Run time %s, REQUEUED", id, name, t) > 0;
  }
  if (ev->kind != PX_EV_END || !j->start) return false;
  bool failed = ev->state != PX_JOB_COMPLETED;
  *state = px_job_state_name(ev->state);
  if (failed && wants(types, "FAIL"))
    return snprintf(buf, n, "Slurm Job_id=%llu Name=%s Failed, Run time %s, %s, ExitCode %d", id, name, t, *state,
                    (int)ev->exit_code) > 0;
  if (wants(types, "END"))
    return snprintf(buf, n, "Slurm Job_id=%llu Name=%s Ended, Run time %s, %s, ExitCode %d", id, name, t, *state,
                    (int)ev->exit_code) > 0;
  return false;
}

static void spawn(struct px_server *s, const char *prog, char *const argv[], char *const env[]) {
  struct px_mailer *m = s->mailer;
  if (access(prog, X_OK)) {
    if (!m->warned) px_warn("mail: MailProg %s cannot run: no mail sent (set MailProg= in slurm.conf)", prog);
    m->warned = true;
    return;
  }
  if (m->n == MAIL_RUNNING_MAX) return px_warn("mail: %d mails still being sent: one dropped", MAIL_RUNNING_MAX);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0); /* an empty body, as Slurm's */
  pid_t pid;
  int rc = posix_spawn(&pid, prog, &fa, NULL, argv, env);
  posix_spawn_file_actions_destroy(&fa);
  if (rc) px_warn("mail: cannot run %s: %s", prog, strerror(rc));
  else m->pids[m->n++] = pid;
}

void px_mail_note(struct px_server *s, const struct px_event *ev, int64_t now) {
  if (ev->kind != PX_EV_START && ev->kind != PX_EV_END && ev->kind != PX_EV_REQUEUE) return;
  struct px_sjob *j = px_jobs_find(s, ev->job_id);
  char subj[512], to[320], e[5][320];
  const char *state = "";
  if (!j || !j->spec.mail_type || !subject(j, ev, now, subj, sizeof subj, &state)) return;
  if (!s->mailer && !(s->mailer = calloc(1, sizeof *s->mailer))) return;
  const char *user = j->spec.mail_user ? j->spec.mail_user : j->spec.user ? j->spec.user : "root";
  const char *domain = s->conf->phalanx.mail_domain;
  snprintf(to, sizeof to, "%s%s%s", user, domain && !strchr(user, '@') ? "@" : "",
           domain && !strchr(user, '@') ? domain : "");
  snprintf(e[0], sizeof e[0], "SLURM_JOB_ID=%llu", (unsigned long long)j->id);
  snprintf(e[1], sizeof e[1], "SLURM_JOB_NAME=%s", j->spec.name ? j->spec.name : "");
  snprintf(e[2], sizeof e[2], "SLURM_JOB_USER=%s", j->spec.user ? j->spec.user : "");
  snprintf(e[3], sizeof e[3], "SLURM_JOB_STATE=%s", state);
  snprintf(e[4], sizeof e[4], "SLURM_JOB_MAIL_TYPE=%s", j->spec.mail_type);
  char *env[] = {e[0], e[1], e[2], e[3], e[4], "PATH=/usr/local/bin:/usr/bin:/bin", NULL};
  const char *prog = s->conf->phalanx.mail_prog ? s->conf->phalanx.mail_prog : "/bin/mail";
  char *argv[] = {(char *)prog, "-s", subj, to, NULL};
  spawn(s, prog, argv, env);
}

void px_mail_reap(struct px_server *s) {
  struct px_mailer *m = s->mailer;
  for (uint32_t i = 0; m && i < m->n;) {
    int ws;
    pid_t r = waitpid(m->pids[i], &ws, WNOHANG);
    if (r == 0) {
      i++;
      continue;
    }
    if (r > 0 && (!WIFEXITED(ws) || WEXITSTATUS(ws)))
      px_warn("mail: MailProg (pid %d) failed with status %d", (int)m->pids[i], WIFEXITED(ws) ? WEXITSTATUS(ws) : -1);
    m->pids[i] = m->pids[--m->n];
  }
}

void px_mail_free(struct px_mailer *m) { free(m); }
