/**
 * Where a PostgreSQL donation's time goes, stage by stage: `npx tsx bench/pg-donation-stages.ts
 * [count=300] [gapMs=5]`. The app as `serve` builds it (fresh schema of BENCH_DATABASE_URL, the
 * relay started, an in-process broker), 50 streamers; `count` donations one at a time, `gapMs`
 * apart (paced, as single requests come), the first 50 not counted. Every statement the app sends
 * is timed from its send to its answer (pg's `Client.query`), with the relay's publication
 * (`onPublished`) and createDonation's resolution; printed: the median time of each stage from the
 * call, in ms. To compare with an older tree, copy this file into its bench/ and run it there,
 * alternating. No sockets: the publication is the relay handing the event to the broker.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { benchApp } from './lib.js';

const require = createRequire(import.meta.url);
const pg = require('pg');
const now = () => performance.now();
let events: { t: number; what: string }[] = [];
const mark = (what: string) => events.push({ t: now(), what });
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, config: unknown, values: unknown, callback: unknown) {
  const text: string = typeof config === 'string' ? config : ((config as { text?: string })?.text ?? '');
  const label = text.replace(/\s+/g, ' ').trim().slice(0, 36);
  mark(`sent: ${label}`);
  const result = query.call(this, config, values, callback);
  if (result && typeof result.then === 'function') result.then(() => mark(`answered: ${label}`), () => mark(`failed: ${label}`));
  return result;
};

const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
const { createDonation } = await import('../src/modules/donations/donations.service.js');
const bench = await benchApp({}, 'postgres');
const { app } = bench;
await app.ready();
const db = app.ctx.db;
app.ctx.relay.onPublished(() => mark('published (relay → broker)'));
const count = Number(process.argv[2] ?? 300);
const gap = Number(process.argv[3] ?? 5);
const users: number[] = [];
for (let i = 0; i < 50; i++) users.push((await createAccount(db, { email: `s${i}@example.test`, password: 'a long passphrase', name: `Stages ${i}` })).id);
const stages = new Map<string, number[]>();
for (let i = 0; i < count; i++) {
  events = [];
  const t0 = now();
  await createDonation(db, { userId: users[i % users.length]!, amount: '5', currency: 'USD', username: 'Donor', message: 'hello' });
  mark('createDonation resolved');
  await new Promise((resolve) => setTimeout(resolve, gap));
  if (i < 50) continue;
  const seen = new Set<string>();
  for (const e of events) {
    const key = seen.has(e.what) ? `${e.what} (again)` : e.what;
    seen.add(e.what);
    stages.set(key, [...(stages.get(key) ?? []), e.t - t0]);
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
console.log(`# ${count - 50} donations ${gap} ms apart; load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
console.log('ms from the call (median) | in how many donations | stage');
for (const [what, xs] of [...stages].sort((a, b) => median(a[1]) - median(b[1]))) {
  if (xs.length >= (count - 50) / 10) console.log(`${median(xs).toFixed(3)} | ${xs.length} | ${what}`);
}
await bench.close();
process.exit(0);
