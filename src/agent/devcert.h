/*
 * devcert.h - the throwaway certificates of `phalanx dev` (devcert.c): a CA
 * made for this one cluster and a server certificate it signs, so that the
 * dev cluster's agents talk to its server over TLS as real nodes do.
 */
#ifndef PX_AGENT_DEVCERT_H
#define PX_AGENT_DEVCERT_H

#include <stddef.h>

/* Writes DIR/ca.pem, DIR/server.pem and DIR/server.key (0600): a CA valid
 * for 30 days and a server certificate for localhost, 127.0.0.1 and ::1.
 * The CA's key is never written: nothing else can be signed with it.
 * 0, or PX_EIO with why in err. */
int px_devcert_make(const char *dir, char *err, size_t errlen);

#endif
