/**
 * revocation.test.ts, unmodified, against the workers of `serve --workers 2` without Redis (see
 * realtimeTestApp in app-topology.ts): what is revoked through one worker's app closes the sockets
 * on both workers, the other one hearing it from the primary, and both refuse the tokens after.
 */
import '../workers-switch.js';
import './revocation.test.js';
