/*
 * dev_proxy.h - `phalanx dev`'s traffic to services: a `phalanx proxy`
 * (cmd_proxy.c) on a free loopback port, following the dev server through
 * its Unix socket, so that `curl http://ADDR/NAME/` reaches service NAME.
 * Started only where HAProxy is installed; without it dev says how to get it.
 */
#ifndef PX_AGENT_DEV_PROXY_H
#define PX_AGENT_DEV_PROXY_H

#include <stddef.h>
#include <sys/types.h>

/* self: the phalanx binary; dir: dev's state directory (the proxy's files go
 * to DIR/proxy, its log to DIR/proxy.log). The proxy's pid once it serves
 * (addr gets "127.0.0.1:PORT"), or 0. */
pid_t px_dev_proxy_start(const char *self, const char *dir, const char *sock, char *addr, size_t size);
void px_dev_proxy_stop(pid_t pid);

#endif
