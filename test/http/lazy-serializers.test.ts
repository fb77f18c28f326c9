import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { lazySerializers } from '../../src/http/lazy-serializers.js';

function server() {
  return Fastify({ logger: false, schemaController: { compilersFactory: { buildSerializer: lazySerializers() } } });
}

test('a response serializer is built on its route’s first response, not while the server gets ready', async () => {
  const app = server();
  // A reference that cannot be resolved: Fastify's own serializer compiler refuses it at ready().
  app.get('/broken', { schema: { response: { 200: { type: 'object', properties: { a: { $ref: 'nowhere#/a' } } } } } }, async () => ({ a: 1 }));
  app.get('/fine', async () => ({ ok: true }));
  await app.ready();
  assert.equal((await app.inject({ url: '/fine' })).statusCode, 200);
  assert.equal((await app.inject({ url: '/broken' })).statusCode, 500);
  await app.close();
});

test('the serializer built later is fast-json-stringify’s: the schema’s shape, properties outside it left out', async () => {
  const app = server();
  const schema = { response: { 200: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } } } };
  app.get('/user', { schema }, async () => ({ name: 'Abc', count: '7', password: 'secret' }));
  for (let i = 0; i < 2; i++) {
    const res = await app.inject({ url: '/user' });
    assert.deepEqual(res.json(), { name: 'Abc', count: 7 });
  }
  await app.close();
});
