/*
 * loop.h - what the main loop (src/server/loop/) offers besides the request
 * queue and the snapshots (server.h, shared with the HTTP threads): the
 * request handlers, the scheduling cycle, publishing, the reservations'
 * listing and the job steps' table. It uses the journal and the node
 * links; HTTP uses it; nothing below includes it.
 */
#ifndef PX_SERVER_LOOP_LOOP_H
#define PX_SERVER_LOOP_LOOP_H

#include <stdbool.h>
#include <stdint.h>

struct px_server;
struct px_req;
struct px_task_report;

/* ---- the main loop (loop.c) and request handlers (handle.c) ---- */
void px_handle_request(struct px_server *s, struct px_req *r, int64_t now);
/* Runs one scheduling cycle and applies its actions (journal first). */
int px_loop_cycle(struct px_server *s, int64_t now);

/* ---- snapshots (publish.c) ---- */
int px_publish(struct px_server *s, int64_t now);
/* The nodes' listing, node by node (pub_nodes.c): renders the nodes that
 * changed since the last call; *listing: the listing changed, *states: a
 * node's state or allocation did (not only its heartbeat). */
struct px_pub_nodes;
struct px_node_view;
int px_pub_nodes_update(struct px_server *s, bool *listing, bool *states);
struct px_blob *px_pub_nodes_blob(struct px_server *s); /* {"nodes":[...]} */
const char *px_pub_node_state(const struct px_server *s, uint32_t node, const struct px_node_view *v);
void px_pub_nodes_free(struct px_pub_nodes *p);

/* ---- reservations made through the API (resv.c) ---- */
/* {"reservations":[...]}: the configured ones, then the created ones. */
struct px_blob *px_resv_blob(struct px_server *s);

/* ---- job steps (steps.c), on the main thread ---- */
void px_steps_handle(struct px_server *s, struct px_req *r, int64_t now);

/* ---- sstat's figures (usage.c), on the main thread ---- */
/* A heartbeat's running jobs (JSON array text, NULL: none). */
void px_usage_note(struct px_server *s, const char *node, const char *jobs_text, int64_t now);
void px_usage_answer(struct px_server *s, struct px_req *r); /* PX_REQ_JOB_STAT */

/* ---- --mail-type (mail.c), on the main thread ---- */
struct px_event;
struct px_mailer;
/* A live event just journaled: runs MailProg when the job asked for it. */
void px_mail_note(struct px_server *s, const struct px_event *ev, int64_t now);
/* Reaps finished MailProg runs (the timers). */
void px_mail_reap(struct px_server *s);
void px_mail_free(struct px_mailer *m);
/* A step's end on node (conf index): its HTTP status (200, also when forgotten). */
int px_steps_report(struct px_server *s, const struct px_task_report *t, int node, int64_t now);

#endif
