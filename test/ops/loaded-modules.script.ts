// Run in a child process by lazy-deps.test.ts: builds the app as `serve` would for the given
// environment, answers a GET of ASK_URL and checks a real-time token CHECK_TOKEN if given, then prints which optional packages the process
// has loaded.
import { createRequire } from 'node:module';
import { buildApp } from '../../src/app.js';
import { envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';

const app = await buildApp(envToConfig(readEnv()), { logger: false });
await app.ready();
if (process.env.ASK_URL) await app.inject({ url: process.env.ASK_URL });
// What a real-time connection does first: check its token (any token: a refusal checks it too).
if (process.env.CHECK_TOKEN) await app.ctx.realtimeTokens.verify(process.env.CHECK_TOKEN).catch(() => {});
const loaded = Object.keys(createRequire(import.meta.url).cache);
const has = (pkg: string) => loaded.some((file) => file.includes(`/node_modules/${pkg}/`));
const OPTIONAL = ['pg', 'ioredis', 'prom-client', '@fastify/swagger', '@fastify/swagger-ui', 'yaml', 'fast-jwt'];
process.stdout.write(JSON.stringify(Object.fromEntries(OPTIONAL.map((pkg) => [pkg, has(pkg)]))) + '\n');
await app.close();
