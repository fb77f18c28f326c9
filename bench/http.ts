/**
 * HTTP benchmark (issue 3): GET /api/v1/alerts/donations?page=1 with a valid bearer token against
 * 100k donations (100 streamers × 1k, interleaved as they would arrive) on SQLite (or PostgreSQL
 * with `--dialect postgres`: a fresh schema, the table freshly loaded, never vacuumed), alternated in
 * the same run with a bare Fastify JSON route serving a body of the same size. Target: API ≥ 50 %
 * of the bare route. The API is measured twice: as served (page cache on) and with the page cache
 * switched off, which is the query path every first read and every read after a write takes.
 *
 *   node --import tsx bench/http.ts [--rounds 5] [--duration 5] [--connections 20] [--only api|nocache|bare] [--dialect sqlite|postgres]
 *
 * `--only` hammers one side (with BENCH_CPU_PROF=<dir> the server writes a CPU profile there).
 * The servers run in a child process (one event loop, like `openalerts serve`), autocannon in this
 * one, so the load generator never runs on the servers' loop. Both servers live in that child and
 * are hammered in turns, so they see the same machine state.
 */
import type { ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import { alternateRounds, autocannon, benchApp, dialectArg, isServerProcess, machine, median, startServer } from './lib.js';

const STREAMERS = 100;
const PER_STREAMER = 1000;

type Side = 'api' | 'nocache' | 'bare';
type ToServer = { cache: boolean } | 'stop';
interface Ready {
  apiAddress: string;
  bareAddress: string;
  accessToken: string;
  bytes: number;
  seedMs: number;
  donations: number;
}

async function serve(): Promise<void> {
  const { default: Fastify } = await import('fastify');
  const { readCacheSwitch } = await import('../src/api/read-cache.js');
  const { createApp } = await import('../src/modules/apps/apps.service.js');

  // A limit no run reaches, so throttling never skews the numbers (the limiter still runs).
  const bench = await benchApp({ RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_URL: 'https://alerts.example.com' }, dialectArg());
  const { app } = bench;
  const db = app.ctx.db;

  const seedStart = performance.now();
  const now = Date.now();
  const userIds: number[] = [];
  await db.transaction().execute(async (tx) => {
    for (let i = 0; i < STREAMERS; i++) {
      const row = await tx
        .insertInto('users')
        .values({
          email: `bench${i}@example.com`, password_hash: '!', code: `bench_${i}`, name: `Bench Streamer ${i}`, name_key: `bench streamer ${i}`, avatar: null,
          language: 'en_US', currency: 'USD', is_active: 1, role: 'streamer', merchandise_promocode: `BENCH${i}`, created_at: now, updated_at: now,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      userIds.push(row.id);
    }
  });
  const currencies = ['USD', 'EUR', 'RUB', 'BRL', 'TRY'];
  const total = STREAMERS * PER_STREAMER;
  const ROWS_PER_INSERT = 500; // 12 columns each: well under SQLite's 32766 bound parameters
  const INSERTS_PER_TX = 20;
  for (let start = 0; start < total; start += ROWS_PER_INSERT * INSERTS_PER_TX) {
    await db.transaction().execute(async (tx) => {
      for (let b = start; b < Math.min(start + ROWS_PER_INSERT * INSERTS_PER_TX, total); b += ROWS_PER_INSERT) {
        const rows = Array.from({ length: ROWS_PER_INSERT }, (_, k) => {
          const n = b + k;
          const amount = 100 + ((n * 37) % 5000);
          return {
            user_id: userIds[n % STREAMERS]!, username: `Donor ${n % 977}`, message_type: 'text' as const, message: `Thanks for the stream! Donation number ${n}, keep it up.`,
            amount, currency: currencies[n % currencies.length]!, amount_in_user_currency: amount, user_currency: 'USD', payin_system: n % 3 ? null : 'Card',
            is_shown: n % 2, created_at: now - (total - n) * 1000, shown_at: n % 2 ? now : null,
          };
        });
        await tx.insertInto('donations').values(rows).execute();
      }
    });
  }
  const seedMs = performance.now() - seedStart;

  const { app: client } = await createApp(db, app.ctx.secrets.encryptionKey, { ownerId: userIds[0]!, name: 'Bench', redirectUris: ['https://bench.example.com/cb'] });
  const streamer = userIds[STREAMERS / 2]!;
  const grantId = await app.ctx.tokens.createGrant(db, { clientId: client.client_id, userId: streamer, scopes: ['oauth-donation-index'], kind: 'authorization_code' });
  const { accessToken } = await app.ctx.tokens.issue(db, { grantId, clientId: client.client_id, userId: streamer, scopes: ['oauth-donation-index'] }, false);

  const apiAddress = await app.listen({ host: '127.0.0.1', port: 0 });
  const sample = await fetch(`${apiAddress}/api/v1/alerts/donations?page=1`, { headers: { authorization: `Bearer ${accessToken}` } });
  const sampleText = await sample.text();
  if (sample.status !== 200) throw new Error(`API answered ${sample.status}: ${sampleText}`);
  const payload = JSON.parse(sampleText) as unknown;

  // The baseline: nothing but Fastify and a JSON body of the same size (serialized per request).
  const bare = Fastify({ logger: false });
  bare.get('/bare', async () => payload);
  const bareAddress = await bare.listen({ host: '127.0.0.1', port: 0 });

  process.on('message', async (msg: ToServer) => {
    if (msg === 'stop') {
      await Promise.all([bench.close(), bare.close()]);
      process.send!({ stopped: null });
      process.exit(0);
    }
    readCacheSwitch.enabled = msg.cache;
    process.send!('ok');
  });
  const ready: Ready = { apiAddress, bareAddress, accessToken, bytes: Buffer.byteLength(sampleText), seedMs, donations: total };
  process.send!(ready);
}

function ask(child: ChildProcess, msg: ToServer): Promise<void> {
  return new Promise((resolve) => {
    child.once('message', () => resolve());
    child.send(msg);
  });
}

async function drive(): Promise<void> {
  const { values } = parseArgs({
    options: { rounds: { type: 'string', default: '5' }, duration: { type: 'string', default: '5' }, connections: { type: 'string', default: '20' }, only: { type: 'string' }, dialect: { type: 'string', default: 'sqlite' } },
  });
  const rounds = Number(values.rounds);
  const duration = Number(values.duration);
  const connections = Number(values.connections);

  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [];
  const server = await startServer<Ready>(import.meta.url, { execArgv: profile, inheritOutput: true, args: ['--dialect', dialectArg()] });
  const { child, ready: info } = server;
  console.log(`seeded ${info.donations} donations in ${(info.seedMs / 1000).toFixed(1)} s; response body ${info.bytes} bytes`);
  console.log(`machine: ${machine()}; ${dialectArg()}; ${connections} connections, ${rounds} × ${duration} s per side`);

  const api = { url: `${info.apiAddress}/api/v1/alerts/donations?page=1`, headers: { authorization: `Bearer ${info.accessToken}` } };
  const targets: Record<Side, { url: string; headers: Record<string, string> }> = { api, nocache: api, bare: { url: `${info.bareAddress}/bare`, headers: {} } };
  const run = async (side: Side, seconds: number) => {
    if (side !== 'bare') await ask(child, { cache: side === 'api' });
    const result = await autocannon({ ...targets[side], connections, duration: seconds });
    if (result.errors || result.non2xx) throw new Error(`${side}: ${result.errors} errors, ${result.non2xx} non-2xx responses`);
    return result;
  };

  const sides = (['api', 'nocache', 'bare'] as Side[]).filter((s) => !values.only || s === values.only);
  for (const side of sides) await run(side, 2); // warm-up: JIT, caches

  const rps = await alternateRounds(
    rounds,
    sides,
    async (side, round) => {
      const r = await run(side, duration);
      console.log(`round ${round + 1} ${side.padEnd(7)} ${r.requests.average.toFixed(0).padStart(6)} req/s  p50 ${r.latency.p50} ms  p99 ${r.latency.p99} ms`);
      return r.requests.average;
    },
    { rotate: true },
  );
  await server.stop();
  if (values.only) return;

  const ratio = (side: Side) => {
    const perRound = rps[side].map((a, i) => ((a / rps.bare[i]!) * 100).toFixed(0)).join(' / ');
    return `${median(rps[side]).toFixed(0)} req/s = ${((median(rps[side]) / median(rps.bare)) * 100).toFixed(1)} % of bare (per round ${perRound} %)`;
  };
  console.log(`machine after: ${machine()}`);
  console.log(`\nmedians: bare ${median(rps.bare).toFixed(0)} req/s`);
  console.log(`  api (as served, page cache on): ${ratio('api')}; target ≥ 50 %`);
  console.log(`  api, page cache off (query path): ${ratio('nocache')}`);
}

if (isServerProcess) await serve();
else await drive();
