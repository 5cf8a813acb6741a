/* proxy_conf.c - endpoints, slots and HAProxy's configuration (proxy_conf.h). */
#include "agent/proxy_conf.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the endpoints answer ---- */

static int ep_decode(json_t *e, const char *port_name, const char *ctx, struct px_pep *out, struct px_diag *d) {
  json_t *host = json_object_get(e, "host"), *ports = json_object_get(e, "ports");
  if (!json_is_string(host) || !json_string_length(host) || json_string_length(host) >= sizeof out->host)
    return px_diag_set(d, PX_EINVAL, -1, "%s.host: expected a host name of 1-63 bytes", ctx);
  json_t *p = json_is_object(ports) ? json_object_get(ports, port_name) : NULL;
  if (!json_is_integer(p) || json_integer_value(p) < 1 || json_integer_value(p) > 65535)
    return px_diag_set(d, PX_EINVAL, -1, "%s.ports.%s: expected a TCP port", ctx, port_name);
  snprintf(out->host, sizeof out->host, "%s", json_string_value(host));
  out->port = (uint16_t)json_integer_value(p);
  return 0;
}

static int svc_decode(json_t *s, uint32_t i, struct px_psvc *out, struct px_diag *d) {
  char ctx[96];
  snprintf(ctx, sizeof ctx, "services[%u]", i);
  json_t *name = json_object_get(s, "name"), *ports = json_object_get(s, "ports"),
         *eps = json_object_get(s, "endpoints");
  if (!json_is_object(s)) return px_diag_set(d, PX_EINVAL, -1, "%s: expected an object", ctx);
  if (!json_is_string(name) || json_string_length(name) >= sizeof out->name)
    return px_diag_set(d, PX_EINVAL, -1, "%s.name: expected a string of at most 63 bytes", ctx);
  snprintf(out->name, sizeof out->name, "%s", json_string_value(name));
  if (ports && !json_is_array(ports)) return px_diag_set(d, PX_EINVAL, -1, "%s.ports: expected an array", ctx);
  if (eps && !json_is_array(eps)) return px_diag_set(d, PX_EINVAL, -1, "%s.endpoints: expected an array", ctx);
  json_t *first = json_array_get(ports, 0);
  if (first && !json_is_string(first)) return px_diag_set(d, PX_EINVAL, -1, "%s.ports[0]: expected a string", ctx);
  size_t n = first ? json_array_size(eps) : 0;
  if (!(out->eps = calloc(n ? n : 1, sizeof *out->eps))) return px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  for (size_t k = 0; k < n; k++) {
    char ectx[128];
    snprintf(ectx, sizeof ectx, "%s.endpoints[%zu]", ctx, k);
    int rc = ep_decode(json_array_get(eps, k), json_string_value(first), ectx, &out->eps[out->neps++], d);
    if (rc) return rc;
  }
  return 0;
}

int px_proxy_endpoints_decode(const char *text, struct px_pstate *out, struct px_diag *d) {
  json_error_t e;
  json_t *j = json_loads(text ? text : "", JSON_REJECT_DUPLICATES, &e);
  if (!j) return px_diag_set(d, PX_EPARSE, e.position, "JSON line %d column %d: %s", e.line, e.column, e.text);
  struct px_pstate st = {0};
  json_t *seq = json_object_get(j, "seq"), *svcs = json_object_get(j, "services");
  int rc = 0;
  if (!json_is_integer(seq) || json_integer_value(seq) < 0) rc = px_diag_set(d, PX_EINVAL, -1, "seq: expected an integer >= 0");
  else if (!json_is_array(svcs)) rc = px_diag_set(d, PX_EINVAL, -1, "services: expected an array");
  else if (!(st.svcs = calloc(json_array_size(svcs) + 1, sizeof *st.svcs))) rc = px_diag_set(d, PX_ENOMEM, -1, "out of memory");
  if (!rc) st.seq = (uint64_t)json_integer_value(seq);
  for (size_t i = 0; !rc && i < json_array_size(svcs); i++) {
    rc = svc_decode(json_array_get(svcs, i), (uint32_t)i, &st.svcs[st.nsvcs], d);
    st.nsvcs++;
  }
  json_decref(j);
  if (rc) {
    px_proxy_state_fini(&st);
    return rc;
  }
  *out = st;
  return 0;
}

void px_proxy_state_fini(struct px_pstate *st) {
  for (uint32_t i = 0; st->svcs && i < st->nsvcs; i++) free(st->svcs[i].eps);
  free(st->svcs);
  memset(st, 0, sizeof *st);
}

/* ---- slots ---- */

uint32_t px_proxy_slots_for(uint32_t n) {
  uint32_t s = PX_PROXY_SLOTS_MIN;
  while (s < 2 * n && s < PX_PROXY_SLOTS_MAX) s *= 2;
  return s;
}

static bool ep_eq(const struct px_pep *a, const struct px_pep *b) {
  return a->port == b->port && strcmp(a->host, b->host) == 0;
}

static bool listed(const struct px_psvc *s, const struct px_pep *ep) {
  for (uint32_t i = 0; i < s->neps; i++)
    if (ep_eq(&s->eps[i], ep)) return true;
  return false;
}

static bool placed(const struct px_pback *b, const struct px_pep *ep) {
  for (uint32_t i = 0; i < b->nslots; i++)
    if (b->slot[i].used && ep_eq(&b->slot[i].ep, ep)) return true;
  return false;
}

bool px_proxy_fit(struct px_pback *b, uint32_t bi, const struct px_psvc *svc, struct px_slot_change *ch, uint32_t *nch) {
  uint32_t fresh = 0;
  for (uint32_t i = 0; i < svc->neps; i++) {
    bool dup = false; /* the same endpoint twice counts once */
    for (uint32_t k = 0; k < i && !dup; k++) dup = ep_eq(&svc->eps[k], &svc->eps[i]);
    fresh += !dup && !placed(b, &svc->eps[i]);
  }
  /* new endpoints go into slots free now (not those being emptied: their
   * server may still finish requests), so both must fit at once */
  uint32_t busy = 0;
  for (uint32_t i = 0; i < b->nslots; i++) busy += b->slot[i].used;
  if (busy + fresh > b->nslots) return false;
  for (uint32_t i = 0; i < svc->neps; i++) {
    if (placed(b, &svc->eps[i])) continue;
    uint32_t s = 0;
    while (b->slot[s].used) s++;
    b->slot[s] = (struct px_slot){.ep = svc->eps[i], .used = true};
    ch[(*nch)++] = (struct px_slot_change){.backend = bi, .slot = s + 1, .used = true, .ep = svc->eps[i]};
  }
  for (uint32_t i = 0; i < b->nslots; i++) {
    if (!b->slot[i].used || listed(svc, &b->slot[i].ep)) continue;
    b->slot[i].used = false;
    ch[(*nch)++] = (struct px_slot_change){.backend = bi, .slot = i + 1, .used = false, .ep = b->slot[i].ep};
  }
  return true;
}

/* ---- the configuration ---- */

bool px_proxy_name_ok(const char *name) {
  if (!name[0] || strlen(name) > 63) return false;
  for (const char *p = name; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-' || *p == '_')) return false;
  return true;
}

struct buf {
  char *p;
  size_t len, cap;
  bool oom;
};

__attribute__((format(printf, 2, 3))) static void put(struct buf *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = b->oom ? -1 : vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = (b->cap + (size_t)n) * 2;
    char *p = realloc(b->p, cap);
    if (!p) return (void)(b->oom = true);
    b->p = p, b->cap = cap;
  }
}

/* Why each setting is there: docs/proxy.md. */
static const char *const head =
    "# generated by phalanx proxy; rewritten on every change of the set of services\n"
    "global\n"
    "    stats socket %s mode 600 level admin\n"
    "    hard-stop-after 30s\n"
    "defaults\n"
    "    mode http\n"
    "    timeout connect 2s\n"
    "    timeout client 60s\n"
    "    timeout server 60s\n"
    "    timeout http-request 10s\n"
    "    timeout queue 10s\n"
    "    retries 3\n"
    "    option redispatch 1\n"
    "    retry-on conn-failure empty-response response-timeout\n"
    "    option idle-close-on-response\n"
    "    default-server check inter 1s fastinter 200ms downinter 100ms rise 1 fall 2\n"
    "frontend services\n"
    "    bind %s\n";

char *px_proxy_config(const struct px_proxy_cfg *c, const struct px_pback *b, uint32_t n) {
  struct buf o = {0};
  put(&o, head, c->admin_sock, c->listen);
  /* path prefix /NAME/ (stripped) first, then Host NAME or NAME.anything */
  for (uint32_t i = 0; i < n; i++) {
    const char *s = b[i].name;
    put(&o, "    acl path_%s path -m reg ^/%s(/|$)\n", s, s);
    put(&o, "    http-request set-var(txn.svc) str(%s) if path_%s\n", s, s);
    put(&o, "    http-request set-path %%[path,regsub(^/%s/?,/)] if path_%s\n", s, s);
  }
  for (uint32_t i = 0; i < n; i++)
    put(&o, "    http-request set-var(txn.svc) str(%s) if !{ var(txn.svc) -m found } "
            "{ req.hdr(host),lower -m reg ^%s(\\.[^:]*)?(:[0-9]+)?$ }\n",
        b[i].name, b[i].name);
  put(&o, "    http-request return status 404 content-type text/plain string \"no such service\\n\" "
          "unless { var(txn.svc) -m found }\n"
          "    use_backend svc_%%[var(txn.svc)]\n");
  for (uint32_t i = 0; i < n; i++) {
    put(&o, "backend svc_%s\n    balance leastconn\n", b[i].name);
    for (uint32_t k = 0; k < b[i].nslots; k++) {
      const struct px_slot *sl = &b[i].slot[k];
      if (sl->used) put(&o, "    server s%u %s:%u\n", k + 1, sl->ep.host, sl->ep.port);
      else put(&o, "    server s%u 127.0.0.1:9 disabled\n", k + 1);
    }
  }
  if (o.oom) {
    free(o.p);
    return NULL;
  }
  return o.p;
}
