/**
 * revocation.test.ts, unmodified, against the workers of `serve --workers 2` without Redis (see
 * realtimeTestApp in app-topology.ts): what is revoked through one worker's app closes the sockets
 * on both workers, the other one hearing it from the primary, and both refuse the tokens after.
 */
import '../workers-switch.js';
// Imported once the switch above is set: under `npm test` (scripts/test.js, which bundles test/)
// static imports of other chunks need not run in the order written here.
await import('./revocation.test.js');
