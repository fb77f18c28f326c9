// Imported first by the workers variants of the suites (test/e2e/workers-conformance.test.ts,
// test/realtime/workers-*.test.ts), which then `await import()` the suites: from here on every server test/process.ts starts runs as
// `serve --workers 2` (see defaultTestWorkers), and test/realtime/helpers.ts's startServer builds
// the two-node topology of the workers instead of one node.
process.env.OPENALERTS_TEST_WORKERS = '2';
