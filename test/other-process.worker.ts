// The child side of test/other-process.ts: opens the database named by DATABASE_URL and runs the
// calls it is sent, one module function at a time, until told to close.
import { envToConfig } from '../src/config/config.js';
import { readEnv } from '../src/config/env.js';
import { createDatabase } from '../src/db/database.js';

// The src/ modules callers may name (`x.ts` or `x.js`), each imported by a literal path: under
// `npm test` (scripts/test.js) test/ and src/ are bundled, and a module exists there only as code
// that some import reaches, not as a file at a name built at run time.
const MODULES: Record<string, () => Promise<unknown>> = {
  'modules/accounts/accounts.repository': () => import('../src/modules/accounts/accounts.repository.js'),
  'modules/apps/apps.service': () => import('../src/modules/apps/apps.service.js'),
  'modules/currencies/currencies.service': () => import('../src/modules/currencies/currencies.service.js'),
  'modules/donations/donations.repository': () => import('../src/modules/donations/donations.repository.js'),
  'modules/donations/donations.service': () => import('../src/modules/donations/donations.service.js'),
  'modules/goals/goals.service': () => import('../src/modules/goals/goals.service.js'),
  'modules/moderation/moderation.service': () => import('../src/modules/moderation/moderation.service.js'),
  'modules/polls/polls.service': () => import('../src/modules/polls/polls.service.js'),
};
const load = (module: string): Promise<unknown> => {
  const loader = MODULES[module.replace(/\.[jt]s$/, '')];
  if (!loader) throw new Error(`src/${module} is not one test/other-process.worker.ts can call: add it to MODULES there`);
  return loader();
};

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
    const exports = (await load(module)) as Record<string, (...a: unknown[]) => unknown>;
    if (typeof exports[fn] !== 'function') throw new Error(`src/${module} exports no function ${fn}`);
    process.send!({ id, ok: true, value: await exports[fn](database.db, ...args) });
  } catch (err) {
    const e = err as Error;
    // The class name, not `name` (domain errors keep Error's): callers check which one it was.
    process.send!({ id, ok: false, name: e?.constructor?.name ?? 'Error', message: e?.message ?? String(err) });
  }
});
process.send!('ready');
