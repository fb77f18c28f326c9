// The child side of test/other-process.ts: opens the database named by DATABASE_URL and runs the
// calls it is sent, one module function at a time, until told to close.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { envToConfig } from '../src/config/config.js';
import { readEnv } from '../src/config/env.js';
import { createDatabase } from '../src/db/database.js';

// src/ beside this file as it runs: the compiled tree's under `npm test` (scripts/test.js), whose
// import.meta.url names the .ts source, where only tsx finds a module by its .js name. Callers name
// a module either way (`x.ts` or `x.js`); the compiled tree holds only the .js.
const COMPILED = process.env.OPENALERTS_TEST_COMPILED;
const SRC = COMPILED ? pathToFileURL(path.join(COMPILED, 'src/')) : new URL('../src/', import.meta.url);
const moduleUrl = (module: string): string => new URL(COMPILED ? module.replace(/\.ts$/, '.js') : module, SRC).href;

const config = envToConfig(readEnv({ DATABASE_URL: process.env.DATABASE_URL, DATA_DIR: process.cwd() }));
const database = createDatabase(config.database);

process.on('message', async (message: { id: number; module: string; fn: string; args: unknown[] } | 'close') => {
  if (message === 'close') {
    await database.close();
    process.disconnect();
    return;
  }
  const { id, module, fn, args } = message;
  try {
    const exports = (await import(moduleUrl(module))) as Record<string, (...a: unknown[]) => unknown>;
    if (typeof exports[fn] !== 'function') throw new Error(`src/${module} exports no function ${fn}`);
    process.send!({ id, ok: true, value: await exports[fn](database.db, ...args) });
  } catch (err) {
    const e = err as Error;
    // The class name, not `name` (domain errors keep Error's): callers check which one it was.
    process.send!({ id, ok: false, name: e?.constructor?.name ?? 'Error', message: e?.message ?? String(err) });
  }
});
process.send!('ready');
