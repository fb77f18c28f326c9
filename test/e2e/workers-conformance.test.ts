/**
 * The real-time end-to-end cases that run real `openalerts serve` processes, again against
 * `serve --workers 2` (issue 16: the conformance behaviour is unchanged with workers). The switch
 * is test/process.ts's OPENALERTS_TEST_WORKERS; the cases are the files below, unmodified:
 * centrifuge-js 5 recovering every missed donation once, at consecutive offsets, in the same epoch,
 * across a SIGTERM and a kill -9 of the whole server (primary and workers), on SQLite, PostgreSQL
 * and PostgreSQL + Redis.
 */
import '../workers-switch.js';
// Imported once the switch above is set: under `npm test` (scripts/test.js, which bundles test/)
// static imports of other chunks need not run in the order written here.
await import('./restart-recovery.test.js');
