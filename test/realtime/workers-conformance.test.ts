/**
 * The real-time conformance suites, unmodified, against the topology of `serve --workers 2`
 * without Redis (issue 16: the conformance behaviour is unchanged with workers): the primary's
 * broker authority, two nodes reaching it over real IPC channels, connections alternating between
 * them (see startServer in helpers.ts and workers-topology.ts).
 */
import '../workers-switch.js';
// Imported once the switch above is set: under `npm test` (scripts/test.js, which bundles test/)
// static imports of other chunks need not run in the order written here.
await import('./v2.test.js');
await import('./legacy.test.js');
await import('./clients.test.js');
await import('./late-delivery.test.js');
await import('./overload.test.js');
await import('./cluster.test.js');
