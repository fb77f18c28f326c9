/**
 * Signed merchandise-sale throughput: `npx tsx bench/sales.ts [--connections=32] [--seconds=5] [--rounds=3]`.
 *
 * A real listening server in its own process (SQLite file in a temp dir, production durability:
 * WAL + synchronous=FULL, every sale committed before its 201) and autocannon in this process.
 * Every request is a new sale (unique external_id) with a valid signature and a client-credentials
 * bearer token, so each one does the whole job: token, signature (both sort orders), validation,
 * merchant/merchandise/user look-ups, revenue, the sale row, two ledger rows and the outbox event.
 * Rounds alternate with a baseline — a bare POST route on the same server, same form body, no
 * work — so the ratio says what the sale costs over Fastify itself on this machine. At the end the
 * number of sales in the database must equal the number of 201s.
 */
import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The part of autocannon's API used here (the package ships no type declarations). */
interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  statusCodeStats: Record<string, { count: number }>;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const AUTOCANNON: string = 'autocannon';
const autocannon = ((await import(AUTOCANNON)) as { default: Autocannon }).default;

interface Seed {
  url: string;
  token: string;
  clientSecret: string;
  userId: number;
  merchantIdentifier: string;
  merchandiseIdentifier: string;
}

const arg = (name: string, fallback: number) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
};

async function server(): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { envToConfig } = await import('../src/config/config.js');
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createApp, setMerchandiseAccess } = await import('../src/modules/apps/apps.service.js');
  const { createMerchant } = await import('../src/modules/merchants/merchants.service.js');
  const { createMerchandise } = await import('../src/modules/merchandise/merchandise.service.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-bench-'));
  // The per-application API limit would cap the run at 60/min; raise it to its maximum.
  const config = envToConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000' });
  const app = await buildApp(config, { logger: false });
  app.post('/bench/baseline', async (_request, reply) => reply.status(201).send({ data: {} }));
  const db = app.ctx.db;
  const owner = await createAccount(db, { email: 'merchant@example.test', password: 'correct horse battery', name: 'Bench Merchant' });
  const streamer = await createAccount(db, { email: 'streamer@example.test', password: 'correct horse battery', name: 'Bench Streamer', currency: 'EUR' });
  const { app: client, clientSecret } = await createApp(db, app.ctx.secrets.encryptionKey, { ownerId: owner.id, name: 'Bench shop', redirectUris: ['https://bench.example.test/cb'] });
  await setMerchandiseAccess(db, client.client_id, true);
  const merchant = await createMerchant(db, { clientId: client.client_id, identifier: 'bench-shop', name: 'Bench Shop' });
  await createMerchandise(db, client.client_id, {
    merchantIdentifier: merchant.identifier,
    identifier: 'hoodie',
    title: { en_US: 'Hoodie' },
    isActive: 1,
    isPercentage: 1,
    currency: 'USD',
    priceUser: 1250,
    priceService: 500,
  });
  const grantId = await app.ctx.tokens.createGrant(db, { clientId: client.client_id, userId: null, scopes: [], kind: 'client_credentials' });
  const { accessToken } = await app.ctx.tokens.issue(db, { grantId, clientId: client.client_id, userId: null, scopes: [] }, false);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  process.send!({ url: address, token: accessToken, clientSecret, userId: streamer.id, merchantIdentifier: merchant.identifier, merchandiseIdentifier: 'hoodie' } satisfies Seed);
  process.on('message', async () => {
    const count = await db.selectFrom('merchandise_sales').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    process.send!({ sales: Number(count.n) });
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

/** Signed bodies prepared ahead, so the client spends its CPU on sending, not hashing. */
function signedBodies(seed: Seed, count: number, runId: string): string[] {
  const bodies: string[] = [];
  for (let i = 0; i < count; i++) {
    const params: Record<string, string> = {
      user_id: String(seed.userId),
      external_id: `${runId}-${i}`,
      merchant_identifier: seed.merchantIdentifier,
      merchandise_identifier: seed.merchandiseIdentifier,
      amount: String(10 + (i % 90)) + '.99',
      currency: ['EUR', 'USD', 'RUB', 'BRL', 'TRY'][i % 5]!,
      bought_amount: String(1 + (i % 3)),
      username: `Customer ${i % 100}`,
    };
    const signature = createHash('sha256').update(Object.values(params).sort().join('') + seed.clientSecret).digest('hex');
    bodies.push(new URLSearchParams({ ...params, signature }).toString());
  }
  return bodies;
}

async function main(): Promise<void> {
  const connections = arg('connections', 32);
  const seconds = arg('seconds', 5);
  const rounds = arg('rounds', 3);
  const child = fork(fileURLToPath(import.meta.url), ['--server'], { execArgv: ['--import', 'tsx', ...(process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [])] });
  const seed = await new Promise<Seed>((resolve) => child.once('message', (m) => resolve(m as Seed)));
  const bodies = signedBodies(seed, 12_000 * (seconds * rounds + 2), Date.now().toString(36));
  const baselineBody = bodies[bodies.length - 1]!;
  let next = 0;
  const headers = { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${seed.token}` };
  const run = (target: 'sale' | 'baseline', duration: number) =>
    autocannon({
      url: `${seed.url}${target === 'sale' ? '/api/v1/merchandise_sale' : '/bench/baseline'}`,
      connections,
      duration,
      requests: [{ method: 'POST', headers, setupRequest: (req: Record<string, unknown>) => ({ ...req, body: target === 'sale' ? (bodies[next++] ?? 'exhausted') : baselineBody }) }],
    });

  const warmUp = await run('sale', 2); // JIT, page cache; its sales count in the final check
  await run('baseline', 1);
  const sales: AutocannonResult[] = [];
  const baselines: AutocannonResult[] = [];
  for (let i = 0; i < rounds; i++) {
    baselines.push(await run('baseline', seconds));
    sales.push(await run('sale', seconds));
  }
  child.send('count');
  const { sales: stored } = await new Promise<{ sales: number }>((resolve) => child.once('message', (m) => resolve(m as { sales: number })));
  const created201 = [warmUp, ...sales].reduce((n, r) => n + (r.statusCodeStats['201']?.count ?? 0), 0);
  const rps = (r: AutocannonResult[]) => r.map((x) => Math.round(x.requests.average));
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const saleRps = rps(sales);
  const baseRps = rps(baselines);
  const cpu = os.cpus();
  console.log(
    JSON.stringify(
      {
        benchmark: 'POST /api/v1/merchandise_sale, signed, new sale per request; SQLite WAL synchronous=FULL (group commit)',
        machine: `${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()}`,
        connections,
        seconds_per_round: seconds,
        sale_requests_per_second: saleRps,
        baseline_requests_per_second: baseRps,
        sale_median: median(saleRps),
        baseline_median: median(baseRps),
        ratio_sale_to_baseline: Number((median(saleRps) / median(baseRps)).toFixed(3)),
        sale_latency_ms: sales.map((r) => ({ p50: r.latency.p50, p99: r.latency.p99 })),
        sale_non_2xx: sales.reduce((n, r) => n + r.non2xx, 0),
        sale_errors: sales.reduce((n, r) => n + r.errors, 0),
        sale_201_responses_including_warm_up: created201,
        sales_in_database: stored,
        // Requests still in flight when a round ends commit without their 201 being counted: at most `connections` per round.
        every_201_durable: stored >= created201,
      },
      null,
      2,
    ),
  );
}

if (process.argv[2] === '--server') await server();
else await main();
