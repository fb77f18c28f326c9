// Run in a child process by lazy-deps.test.ts: builds the app as `serve` would for the given
// environment, then prints which optional packages the process has loaded.
import { createRequire } from 'node:module';
import { buildApp } from '../../src/app.js';
import { envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';

const app = await buildApp(envToConfig(readEnv()), { logger: false });
await app.ready();
const loaded = Object.keys(createRequire(import.meta.url).cache);
const has = (pkg: string) => loaded.some((file) => file.includes(`/node_modules/${pkg}/`));
process.stdout.write(JSON.stringify({ pg: has('pg'), ioredis: has('ioredis'), 'prom-client': has('prom-client') }) + '\n');
await app.close();
