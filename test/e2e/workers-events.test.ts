/**
 * The in-process end-to-end suites of real clients, unmodified, against the workers of
 * `serve --workers 2` without Redis (test/realtime/app-topology.ts): donations written by the
 * service or by the CLI in another process reach raw and centrifuge-js 5 subscribers, and
 * centrifuge-js 2.8.5 in Chromium through its subscribeEndpoint, whichever worker each connection
 * and request lands on, through the primary's relay and broker.
 */
import '../workers-switch.js';
// Imported once the switch above is set: under `npm test` (scripts/test.js, which bundles test/)
// static imports of other chunks need not run in the order written here.
await import('./donation-events.test.js');
await import('./centrifuge2-browser.test.js');
