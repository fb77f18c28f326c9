// Imported first by workers-conformance.test.ts: every server test/process.ts starts from here on
// runs as `serve --workers 2` (see defaultTestWorkers).
process.env.OPENALERTS_TEST_WORKERS = '2';
