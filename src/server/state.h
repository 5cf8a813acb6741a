/*
 * state.h - everything of the server at once, for its composition root
 * (server.c, which starts and stops every group) and for code written
 * before the server's files were grouped. A file inside a group includes
 * what it uses instead, so that includes run one way (check-style.sh):
 *
 *   http/     api.h, http/http.h      the API's routes and handlers
 *     -> loop/     loop/loop.h        main loop, request handlers, snapshots
 *       -> journal/  journal/journal.h  group commit, recovery, checkpoints
 *       -> nodes/    nodes/nodes.h      orders to agents, node liveness
 *         -> tables.h, server.h, auth/auth.h   the object, the job table,
 *                                      the event road, requests, snapshots
 */
#ifndef PX_SERVER_STATE_H
#define PX_SERVER_STATE_H

#include "server/http/http.h"
#include "server/journal/journal.h"
#include "server/loop/loop.h"
#include "server/nodes/nodes.h"
#include "server/step_table.h"
#include "server/tables.h"

#endif
