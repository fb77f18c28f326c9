/**
 * The real-time conformance suites, unmodified, against the topology of `serve --workers 2`
 * without Redis (issue 16: the conformance behaviour is unchanged with workers): the primary's
 * broker authority, two nodes reaching it over real IPC channels, connections alternating between
 * them (see startServer in helpers.ts and workers-topology.ts).
 */
import '../workers-switch.js';
import './v2.test.js';
import './legacy.test.js';
import './clients.test.js';
import './late-delivery.test.js';
import './overload.test.js';
import './cluster.test.js';
