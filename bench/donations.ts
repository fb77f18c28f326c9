/**
 * Donations through the service, PostgreSQL beside SQLite: `npx tsx bench/donations.ts [--concurrency 64]
 * [--seconds 4] [--rounds 3]` (or `--rounds=3`).
 *
 * Two server processes, one per dialect (SQLite file in a temp dir with production durability — WAL,
 * synchronous=FULL; PostgreSQL: a fresh schema of BENCH_DATABASE_URL), each with 100 streamers, a
 * tenth of them with moderation rules (masked words, an alert delay). In each round every server
 * runs `createDonation` — the function the donor page, the sandbox and the CLI call — from
 * `concurrency` concurrent callers for `seconds`, in rotating order, so each round's PostgreSQL ÷
 * SQLite ratio is taken on the same machine state. Every donation is durable (and its alert queued)
 * when its call resolves; the outbox relay publishes them meanwhile, as in `serve`. At the end the
 * donations in each database must equal the calls that resolved.
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { alternateRounds, callIpc, machine, median, numberArg, serveIpc } from './lib.js';

const STREAMERS = 100;

async function server(dialect: 'sqlite' | 'postgres'): Promise<void> {
  const { benchApp } = await import('./lib.js');
  const { createDonation } = await import('../src/modules/donations/donations.service.js');
  const { DEFAULT_SETTINGS, saveModerationSettings } = await import('../src/modules/moderation/moderation.service.js');
  const bench = await benchApp({}, dialect);
  const db = bench.app.ctx.db;
  const now = Date.now();
  const rows = Array.from({ length: STREAMERS }, (_, i) => ({
    email: `d${i}@example.test`, password_hash: '!', code: `d_${i}`, name: `Donations Streamer ${i}`, name_key: `donations streamer ${i}`, avatar: null,
    language: 'en_US', currency: ['USD', 'EUR', 'RUB'][i % 3]!, is_active: 1, role: 'streamer' as const, merchandise_promocode: `D${i}`, created_at: now, updated_at: now,
  }));
  const ids = (await db.insertInto('users').values(rows).returning('id').execute()).map((r) => r.id);
  for (const id of ids.filter((_, i) => i % 10 === 0)) await saveModerationSettings(db, id, { ...DEFAULT_SETTINGS, bannedWords: ['crap'], alertDelaySeconds: 5 });
  let statements = 0;
  bench.app.ctx.database.onQuery(() => statements++);
  let seq = 0;
  serveIpc({
    async run(m) {
      const until = Date.now() + (m.seconds as number) * 1000;
      const cpu0 = process.cpuUsage();
      const statements0 = statements;
      let done = 0;
      let failed = 0;
      await Promise.all(
        Array.from({ length: m.concurrency as number }, async () => {
          while (Date.now() < until) {
            const n = seq++;
            try {
              await createDonation(db, { userId: ids[n % ids.length]!, amount: `${1 + (n % 50)}.50`, currency: ['USD', 'EUR', 'RUB'][n % 3]!, username: `Donor ${n % 97}`, message: `Thanks for the stream, number ${n}!`, payinSystem: 'Sandbox' });
              done++;
            } catch {
              failed++;
            }
          }
        }),
      );
      const cpu = process.cpuUsage(cpu0);
      return { done, failed, seconds: m.seconds, cpuMs: (cpu.user + cpu.system) / 1000, statements: statements - statements0 };
    },
    async count() {
      const row = await db.selectFrom('donations').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async stop() {
      await bench.close();
      setImmediate(() => process.exit(0));
      return true;
    },
  });
}

interface Round {
  done: number;
  failed: number;
  seconds: number;
  cpuMs: number;
  statements: number;
  load: number;
}

async function main(): Promise<void> {
  const concurrency = numberArg('concurrency', 64);
  const seconds = numberArg('seconds', 4);
  const rounds = numberArg('rounds', 3);
  const servers: Record<'sqlite' | 'postgres', ChildProcess> = {
    sqlite: fork(process.argv[1]!, ['--role=server', '--dialect=sqlite'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' }),
    postgres: fork(process.argv[1]!, ['--role=server', '--dialect=postgres'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' }),
  };
  try {
    for (const child of Object.values(servers)) await callIpc(child, 'count');
    console.log(`# donations bench: ${machine()}`);
    console.log(`${concurrency} concurrent createDonation callers per server, ${seconds} s per round, ${rounds} rotating rounds\n`);
    const results = await alternateRounds(
      rounds,
      ['sqlite', 'postgres'] as const,
      async (dialect) => ({ ...(await callIpc<Omit<Round, 'load'>>(servers[dialect], 'run', { concurrency, seconds })), load: os.loadavg()[0]! }),
      { rotate: true },
    );
    const rate = (r: Round) => r.done / r.seconds;
    console.log('round | SQLite donations/s | PostgreSQL donations/s | PG ÷ SQLite | CPU ms per donation SQLite / PG | statements per donation SQLite / PG | failed | load (1 min)');
    for (let i = 0; i < rounds; i++) {
      const s = results.sqlite[i]!;
      const p = results.postgres[i]!;
      console.log(
        `${i + 1} | ${rate(s).toFixed(0)} | ${rate(p).toFixed(0)} | ${(rate(p) / rate(s)).toFixed(2)} | ${(s.cpuMs / s.done).toFixed(3)} / ${(p.cpuMs / p.done).toFixed(3)} | ${(s.statements / s.done).toFixed(2)} / ${(p.statements / p.done).toFixed(2)} | ${s.failed + p.failed} | ${s.load.toFixed(1)} / ${p.load.toFixed(1)}`,
      );
    }
    const ratios = results.sqlite.map((s, i) => rate(results.postgres[i]!) / rate(s));
    console.log(`\nmedian: SQLite ${median(results.sqlite.map(rate)).toFixed(0)}/s, PostgreSQL ${median(results.postgres.map(rate)).toFixed(0)}/s, PG ÷ SQLite ${median(ratios).toFixed(2)} (per round ${ratios.map((r) => r.toFixed(2)).join(' / ')})`);
    for (const dialect of ['sqlite', 'postgres'] as const) {
      const acknowledged = results[dialect].reduce((a, r) => a + r.done, 0);
      const stored = await callIpc<number>(servers[dialect], 'count');
      console.log(`${dialect}: ${acknowledged} donations resolved, ${stored} in the database${stored === acknowledged ? '' : '  <-- MISMATCH'}`);
    }
    console.log(`load average at the end: ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  } finally {
    await Promise.all(Object.values(servers).map((child) => callIpc(child, 'stop')));
  }
}

const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
if (role === 'server') void server(process.argv.includes('--dialect=postgres') ? 'postgres' : 'sqlite');
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
