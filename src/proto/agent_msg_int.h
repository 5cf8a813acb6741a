/*
 * agent_msg_int.h - private to proto/agent_msg*.c: the codec of a launch's
 * "service" object and of a task report's ports and health
 * (agent_msg_svc.c), called by the launch and task report codecs.
 */
#ifndef PX_PROTO_AGENT_MSG_INT_H
#define PX_PROTO_AGENT_MSG_INT_H

#include <jansson.h>

#include "proto/agent_msg.h"
#include "proto/json_rd.h"

/* The "service" object of a launch, or NULL on ENOMEM. */
json_t *px_svc_launch_to_json(const struct px_launch_service *s);
/* Reads rd's "service" field (absent: *out stays NULL). On error the reader
 * holds it and nothing is allocated. */
void px_svc_launch_read(struct px_rd *rd, struct px_launch_service **out);

/* Adds "ports", "health", "health_reason" when r->has_service. */
int px_svc_report_write(json_t *o, const struct px_task_report *r);
/* Reads them into r (has_service when "health" is present). */
void px_svc_report_read(struct px_rd *rd, struct px_task_report *r);

#endif
