// Run in a child process by lazy-deps.test.ts: builds the app as `serve` would for the given
// environment, answers a GET of ASK_URL, checks a real-time token CHECK_TOKEN, upgrades one
// real-time connection (UPGRADE) and moderates a text (CHECK_TEXT) if asked, then prints which
// optional packages the process has loaded.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { buildApp } from '../../src/app.js';
import { envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';

const app = await buildApp(envToConfig(readEnv()), { logger: false });
await app.ready();
if (process.env.ASK_URL) await app.inject({ url: process.env.ASK_URL });
// What a real-time connection does first: check its token (any token: a refusal checks it too).
if (process.env.CHECK_TOKEN) await app.ctx.realtimeTokens.verify(process.env.CHECK_TOKEN).catch(() => {});
if (process.env.CHECK_TEXT) (await import('../../src/modules/moderation/rules.js')).linkSpans(process.env.CHECK_TEXT);
if (process.env.UPGRADE) {
  // A WebSocket handshake by hand (a client library here would load `ws` itself): 101 or bust.
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/connection/websocket', headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' } });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve();
    });
    req.on('response', (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
    req.on('error', reject);
    req.end();
  });
}
const loaded = Object.keys(createRequire(import.meta.url).cache);
const has = (pkg: string) => loaded.some((file) => file.includes(`/node_modules/${pkg}/`));
const OPTIONAL = ['pg', 'ioredis', 'prom-client', '@fastify/swagger', '@fastify/swagger-ui', 'yaml', 'fast-jwt', 'ws', 'confusables', 'linkify-it', 'tlds', 'ajv', '@fastify/fast-json-stringify-compiler', 'qs'];
process.stdout.write(JSON.stringify(Object.fromEntries(OPTIONAL.map((pkg) => [pkg, has(pkg)]))) + '\n');
await app.close();
