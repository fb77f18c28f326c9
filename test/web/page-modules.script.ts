// Run in a child process by page-routes.test.ts: builds the app as `serve` would, answers a GET of
// ASK_URL if given, then prints which page modules (src/web/pages/**/*.pages.ts) were imported,
// as a module resolve hook saw them. Under `npm test` (scripts/test.js) src/ is bundled into chunks:
// a chunk loaded stands for every module its source map lists. esbuild puts modules reached from
// the same entries and dynamic imports in one chunk, so that is the set tsx would load one by one.
import fs from 'node:fs';
import { register } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel } from 'node:worker_threads';

const { port1, port2 } = new MessageChannel();
const seen = new Set<string>();
port1.on('message', (url: string) => seen.add(url));
port1.unref();
const hook = `let port;
export function initialize(data) { port = data.port; }
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (result.url.startsWith('file:')) port.postMessage(result.url);
  return result;
}`;
register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { port: port2 }, transferList: [port2] });

const { buildApp } = await import('../../src/app.js');
const { envToConfig } = await import('../../src/config/config.js');
const { readEnv } = await import('../../src/config/env.js');
const app = await buildApp(envToConfig(readEnv()), { logger: false });
await app.ready();
if (process.env.ASK_URL) await app.inject({ url: process.env.ASK_URL });
// Messages from the hooks' thread arrive on this thread's event loop: let them in.
await new Promise((resolve) => setTimeout(resolve, 100));
const PAGE = /\/src\/web\/pages\/.*\.pages\.ts$/;
const modules = [...seen].flatMap((url) => {
  const file = fileURLToPath(url);
  if (!file.endsWith('.js') || !fs.existsSync(`${file}.map`)) return [file];
  const map = JSON.parse(fs.readFileSync(`${file}.map`, 'utf8')) as { sources: string[] };
  return map.sources.map((source) => path.resolve(path.dirname(file), source));
});
const names = [...new Set(modules.filter((file) => PAGE.test(file)).map((file) => path.basename(file, '.ts')))].sort();
process.stdout.write(JSON.stringify(names) + '\n');
await app.close();
