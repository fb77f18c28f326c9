import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDIS_URL, redisAvailable, tempDir } from '../helper.js';
import { runJsonScript } from '../process.js';

/** The optional packages a server process built with `env` has loaded. */
function loadedBy(env: Record<string, string>): Promise<Record<string, boolean>> {
  return runJsonScript('test/ops/loaded-modules.script.ts', env);
}

const NONE = { pg: false, ioredis: false, 'prom-client': false, '@fastify/swagger': false, '@fastify/swagger-ui': false, yaml: false, 'fast-jwt': false, ws: false, confusables: false, 'linkify-it': false, tlds: false, ajv: false, '@fastify/fast-json-stringify-compiler': false, qs: false };

test('an SQLite server without Redis or metrics never loads pg, ioredis or prom-client, nor the API documentation, the token verifier, the WebSocket server, the moderation tables, Ajv, fast-json-stringify or qs until asked', async () => {
  assert.deepEqual(await loadedBy({ DATA_DIR: tempDir() }), NONE);
});

test('each is loaded when its setting asks for it (so the check above can fail)', { skip: !(await redisAvailable()) && 'no Redis' }, async () => {
  const loaded = await loadedBy({ DATA_DIR: tempDir(), REDIS_URL, REDIS_PREFIX: `oa-test-lazy-${process.pid}`, METRICS_TOKEN: 'lazy-deps-token-0123456789' });
  assert.equal(loaded.ioredis, true);
  assert.equal(loaded['prom-client'], true);
  assert.equal(loaded.pg, false);
});

test('the documentation packages load on the first request for /docs (so the check above can fail)', async () => {
  assert.deepEqual(await loadedBy({ DATA_DIR: tempDir(), ASK_URL: '/docs/' }), { ...NONE, '@fastify/swagger': true, '@fastify/swagger-ui': true, yaml: true, ajv: true, '@fastify/fast-json-stringify-compiler': true });
});

test('the token verifier (fast-jwt and its key-format packages) loads on the first real-time token checked', async () => {
  assert.deepEqual(await loadedBy({ DATA_DIR: tempDir(), CHECK_TOKEN: 'a.b.c' }), { ...NONE, 'fast-jwt': true });
});

test('the WebSocket server (ws) loads on the first real-time connection, which it then upgrades', async () => {
  assert.deepEqual(await loadedBy({ DATA_DIR: tempDir(), UPGRADE: '1' }), { ...NONE, ws: true });
});

test('the look-alike table and the link finder load on the first text moderated', async () => {
  assert.deepEqual(await loadedBy({ DATA_DIR: tempDir(), CHECK_TEXT: 'see exаmple.com' }), { ...NONE, confusables: true, 'linkify-it': true, tlds: true });
});

test('Ajv and fast-json-stringify load on the first request a route validates and answers by its schema', async () => {
  assert.deepEqual(await loadedBy({ DATA_DIR: tempDir(), ASK_URL: '/api/v1/alerts/donations?page=abc' }), { ...NONE, ajv: true, '@fastify/fast-json-stringify-compiler': true });
});
