/*
 * since.c - since when an agent's state directory holds every job it was
 * given (agent.h, px_agent_since): the wall time written to DIR/since the
 * first time, read back afterwards. An agent keeps each job it started until
 * the server acknowledges its end, so a job started after that time that the
 * agent does not know never reached it (a launch order lost in a takeover,
 * issue 16): the server may send it again. A node whose state was wiped
 * (reinstalled) writes a new time, and its lost jobs end NODE_FAIL as before.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "agent/since.h"

int64_t px_agent_since(const char *dir) {
  char path[4096], buf[32] = "";
  snprintf(path, sizeof path, "%s/since", dir);
  FILE *f = fopen(path, "re");
  if (f) {
    long long v = fgets(buf, sizeof buf, f) ? strtoll(buf, NULL, 10) : 0;
    fclose(f);
    if (v > 0) return v;
  }
  int64_t now = time(NULL);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return 0; /* not said: the server ends such jobs as before */
  int n = snprintf(buf, sizeof buf, "%lld\n", (long long)now);
  bool ok = write(fd, buf, (size_t)n) == n && fsync(fd) == 0;
  close(fd);
  return ok ? now : 0;
}
