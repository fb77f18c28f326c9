/**
 * Signed merchandise-sale throughput: `npx tsx bench/sales.ts [--connections 32] [--seconds 5] [--rounds 3] [--warm-up 2] [--dialect sqlite|postgres|both]` (or `--rounds=3`);
 * `--against <other checkout> [--dialect postgres]` compares two trees in one run (`compareTrees`).
 *
 * A real listening server in its own process (SQLite file in a temp dir, production durability:
 * WAL + synchronous=FULL, every sale committed before its 201) and autocannon in this process.
 * Every request is a new sale (unique external_id) with a valid signature and a client-credentials
 * bearer token, so each one does the whole job: token, signature (both sort orders), validation,
 * merchant/merchandise/user look-ups, revenue, the sale row, two ledger rows and the outbox event.
 * Rounds alternate with a baseline — a bare POST route on the same server, same form body, no
 * work — so the ratio says what the sale costs over Fastify itself on this machine. At the end the
 * number of sales in the database must equal the number of 201s. `--dialect both` serves SQLite and
 * PostgreSQL from two server processes and alternates baseline, SQLite and PostgreSQL rounds (in
 * rotating order), so the PostgreSQL ÷ SQLite ratio of each round is taken on the same machine state.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { alternateRounds, autocannon, cpuSecondsOf, dialectArg, isServerProcess, median, numberArg, postgresBackendPids, printReport, serveBenchApp, startServer, type AutocannonResult } from './lib.js';

interface Seed {
  url: string;
  token: string;
  clientSecret: string;
  userId: number;
  merchantIdentifier: string;
  merchandiseIdentifier: string;
}

async function server(): Promise<void> {
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createApp, setMerchandiseAccess } = await import('../src/modules/apps/apps.service.js');
  const { createMerchant } = await import('../src/modules/merchants/merchants.service.js');
  const { createMerchandise } = await import('../src/modules/merchandise/merchandise.service.js');
  let statements = 0;
  // The per-application API limit would cap the run at 60/min; raise it to its maximum.
  await serveBenchApp(
    { RATE_LIMIT_PER_MINUTE: '1000000' },
    async (app): Promise<Omit<Seed, 'url'>> => {
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
      // Every statement the server runs from here on (sales, the outbox relay, idle polls), per sale stored.
      app.ctx.database.onQuery(() => statements++);
      return { token: accessToken, clientSecret, userId: streamer.id, merchantIdentifier: merchant.identifier, merchandiseIdentifier: 'hoodie' };
    },
    async (app) => {
      const counted = statements;
      const count = await app.ctx.db.selectFrom('merchandise_sales').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      return { sales: Number(count.n), statements: counted };
    },
  );
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

/** `--dialect sqlite|postgres|both` (either form); `both` runs a server of each and alternates them. */
function dialectsArg(): ('sqlite' | 'postgres')[] {
  const args = process.argv.slice(2);
  const both = args.some((a, i) => a === '--dialect=both' || (a === '--dialect' && args[i + 1] === 'both'));
  return both ? ['sqlite', 'postgres'] : [dialectArg()];
}

async function main(): Promise<void> {
  const connections = numberArg('connections', 32);
  const seconds = numberArg('seconds', 5);
  const rounds = numberArg('rounds', 3);
  const warmUp = numberArg('warm-up', 2);
  const dialects = dialectsArg();
  const profile = process.env.BENCH_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROFILE}`] : [];
  const loadBefore = os.loadavg()[0]!;
  const servers = await Promise.all(
    dialects.map(async (dialect) => {
      const server = await startServer<Seed>(import.meta.url, { execArgv: profile, args: ['--dialect', dialect] });
      const bodies = signedBodies(server.ready, 12_000 * (seconds * rounds + warmUp), `${dialect}-${Date.now().toString(36)}`);
      return { dialect, server, bodies, next: 0, results: [] as AutocannonResult[], warmUp: undefined as AutocannonResult | undefined };
    }),
  );
  const baselineSeed = servers[0]!.server.ready;
  const baselineBody = servers[0]!.bodies[servers[0]!.bodies.length - 1]!;
  const sale = (side: (typeof servers)[number], duration: number) =>
    autocannon({
      url: `${side.server.ready.url}/api/v1/merchandise_sale`,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${side.server.ready.token}` },
          setupRequest: (req: Record<string, unknown>) => ({ ...req, body: side.bodies[side.next++] ?? 'exhausted' }),
        },
      ],
    });
  const baseline = (duration: number) =>
    autocannon({
      url: `${baselineSeed.url}/bench/baseline`,
      connections,
      duration,
      requests: [{ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${baselineSeed.token}` }, body: baselineBody }],
    });

  // JIT, page cache; its sales count in the final check. The JIT is still busy a few seconds in
  // (bench/README.md): --warm-up 15 measures a server that has settled.
  for (const side of servers) side.warmUp = await sale(side, warmUp);
  await baseline(1);
  // CPU per answered request, of the server process and (PostgreSQL) of its database backends, and
  // the share of one core this load generator used: on a loaded machine the requests per second
  // swing with everyone else's work, the CPU a request costs much less.
  const cpu: Record<string, { server_us_per_request: number; postgres_us_per_request?: number; client_core_share: number }[]> = {};
  const backendsOf = async (side: (typeof servers)[number]) => {
    const pids = side.dialect === 'postgres' ? await postgresBackendPids(side.server.child.pid!) : [];
    return new Map(pids.map((pid) => [pid, cpuSecondsOf([pid])]));
  };
  const measured = async (name: string, side: (typeof servers)[number], run: () => Promise<AutocannonResult>) => {
    const serverPid = side.server.child.pid!;
    const backends = await backendsOf(side);
    const before = { server: cpuSecondsOf([serverPid]), client: process.cpuUsage(), at: performance.now() };
    const result = await run();
    const wallMs = performance.now() - before.at;
    const client = process.cpuUsage(before.client);
    const server = cpuSecondsOf([serverPid]) - before.server;
    // Backends opened during the round started from 0.
    let database = 0;
    for (const [pid, cpuNow] of await backendsOf(side)) database += cpuNow - (backends.get(pid) ?? 0);
    const answered = result['2xx'] + result.non2xx;
    (cpu[name] ??= []).push({
      server_us_per_request: Math.round((server * 1e6) / answered),
      ...(side.dialect === 'postgres' && name !== 'baseline' ? { postgres_us_per_request: Math.round((database * 1e6) / answered) } : {}),
      client_core_share: Number(((client.user + client.system) / 1000 / wallMs).toFixed(2)),
    });
    return result;
  };
  const sides = ['baseline', ...dialects] as const;
  const results = await alternateRounds(
    rounds,
    sides,
    (side) =>
      side === 'baseline'
        ? measured('baseline', servers[0]!, () => baseline(seconds))
        : measured(side, servers.find((s) => s.dialect === side)!, () => sale(servers.find((s) => s.dialect === side)!, seconds)),
    { rotate: true },
  );
  const loadAfter = os.loadavg()[0]!;
  const rps = (r: AutocannonResult[]) => r.map((x) => Math.round(x.requests.average));
  const baseRps = rps(results.baseline);
  const perDialect: Record<string, unknown> = {};
  for (const side of servers) {
    const sales = results[side.dialect];
    const { sales: stored, statements } = (await side.server.stop()) as { sales: number; statements: number };
    const created201 = [side.warmUp!, ...sales].reduce((n, r) => n + (r.statusCodeStats['201']?.count ?? 0), 0);
    const saleRps = rps(sales);
    perDialect[side.dialect] = {
      durability: side.dialect === 'postgres' ? 'PostgreSQL, synchronous_commit as configured (default on), group commit' : 'SQLite WAL synchronous=FULL, group commit',
      sale_requests_per_second: saleRps,
      sale_median: median(saleRps),
      ratio_sale_to_baseline: Number((median(saleRps) / median(baseRps)).toFixed(3)),
      ratio_per_round: saleRps.map((r, i) => Number((r / baseRps[i]!).toFixed(3))),
      sale_latency_ms: sales.map((r) => ({ p50: r.latency.p50, p99: r.latency.p99 })),
      // Server CPU per sale ÷ server CPU per bare request, per round: what a sale costs over Fastify itself.
      cpu: cpu[side.dialect],
      server_cpu_ratio_to_baseline_per_round: cpu[side.dialect]!.map((c, i) => Number((c.server_us_per_request / cpu.baseline![i]!.server_us_per_request).toFixed(2))),
      sale_non_2xx: sales.reduce((n, r) => n + r.non2xx, 0),
      sale_errors: sales.reduce((n, r) => n + r.errors, 0),
      sale_201_responses_including_warm_up: created201,
      sales_in_database: stored,
      statements_per_sale: Number((statements / stored).toFixed(2)),
      // Requests still in flight when a round ends commit without their 201 being counted: at most `connections` per round.
      every_201_durable: stored >= created201,
    };
  }
  const pgOverSqlite =
    dialects.length === 2 ? { postgres_over_sqlite_per_round: results.postgres.map((r, i) => Number((r.requests.average / results.sqlite[i]!.requests.average).toFixed(2))) } : {};
  printReport('POST /api/v1/merchandise_sale, signed, new sale per request', {
    connections,
    seconds_per_round: seconds,
    rounds,
    load_average_1min_start_end: [Number(loadBefore.toFixed(1)), Number(loadAfter.toFixed(1))],
    baseline_requests_per_second: baseRps,
    baseline_median: median(baseRps),
    baseline_cpu: cpu.baseline,
    ...pgOverSqlite,
    ...perDialect,
  });
}

/**
 * `--against <checkout>`: this tree's server and one started from another checkout of the project
 * (its own bench/sales.ts and src/, e.g. a worktree of main), one dialect, alternating rounds in
 * one run — each tree's bare route and then its sale, the order of the trees switching every round.
 * Prints per round each tree's requests per second and server CPU per request (and its PostgreSQL
 * backends'), and the sale ÷ bare ratios: before/after figures taken on the same machine state.
 */
async function compareTrees(against: string): Promise<void> {
  const connections = numberArg('connections', 32);
  const seconds = numberArg('seconds', 4);
  const rounds = numberArg('rounds', 3);
  const warmUp = numberArg('warm-up', 4);
  const dialect = dialectArg();
  const trees = { A: path.resolve(against), B: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..') };
  const loadBefore = os.loadavg()[0]!;
  const servers = await Promise.all(
    (['A', 'B'] as const).map(async (name) => {
      const server = await startServer<Seed>(pathToFileURL(`${trees[name]}/bench/sales.ts`).href, { args: ['--dialect', dialect] });
      const bodies = signedBodies(server.ready, 12_000 * (seconds * rounds + warmUp), `${name}-${Date.now().toString(36)}`);
      return { name, dialect, server, bodies, next: 0 };
    }),
  );
  type Side = (typeof servers)[number];
  const headers = (side: Side) => ({ 'content-type': 'application/x-www-form-urlencoded', authorization: `Bearer ${side.server.ready.token}` });
  const sale = (side: Side, duration: number) =>
    autocannon({
      url: `${side.server.ready.url}/api/v1/merchandise_sale`,
      connections,
      duration,
      requests: [{ method: 'POST', headers: headers(side), setupRequest: (req: Record<string, unknown>) => ({ ...req, body: side.bodies[side.next++] ?? 'exhausted' }) }],
    });
  const bare = (side: Side, duration: number) =>
    autocannon({ url: `${side.server.ready.url}/bench/baseline`, connections, duration, requests: [{ method: 'POST', headers: headers(side), body: side.bodies.at(-1)! }] });
  // JIT and caches of both trees warm before the first measured round.
  for (const side of servers) {
    await sale(side, warmUp);
    await bare(side, 2);
  }
  const rows: Record<string, unknown>[] = [];
  const measure = async (side: Side, kind: 'sale' | 'bare') => {
    const pids = dialect === 'postgres' && kind === 'sale' ? await postgresBackendPids(side.server.child.pid!) : [];
    const b0 = new Map(pids.map((p) => [p, cpuSecondsOf([p])]));
    const s0 = cpuSecondsOf([side.server.child.pid!]);
    const load = os.loadavg()[0]!;
    const r = await (kind === 'sale' ? sale(side, seconds) : bare(side, seconds));
    const n = r['2xx'] + r.non2xx;
    let be = 0;
    if (pids.length) for (const [p, c] of b0) be += cpuSecondsOf([p]) - c;
    return {
      tree: side.name,
      kind,
      rps: Math.round(r.requests.average),
      server_us: Math.round(((cpuSecondsOf([side.server.child.pid!]) - s0) * 1e6) / n),
      pg_us: pids.length ? Math.round((be * 1e6) / n) : undefined,
      non2xx: r.non2xx,
      load: Number(load.toFixed(1)),
    };
  };
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? [servers[0]!, servers[1]!] : [servers[1]!, servers[0]!];
    for (const side of order) {
      const b = await measure(side, 'bare');
      const s = await measure(side, 'sale');
      rows.push({ round, ...s, bare_rps: b.rps, bare_server_us: b.server_us, rps_ratio: Number((s.rps / b.rps).toFixed(3)), cpu_ratio: Number((s.server_us / b.server_us).toFixed(2)) });
      console.error(JSON.stringify(rows[rows.length - 1])); // progress
    }
  }
  const stopped: Record<string, unknown> = {};
  for (const side of servers) stopped[side.name] = await side.server.stop();
  printReport('POST /api/v1/merchandise_sale, two checkouts alternating (A: --against, B: this tree)', {
    trees,
    dialect,
    connections,
    seconds_per_round: seconds,
    load_average_1min_start_end: [Number(loadBefore.toFixed(1)), Number(os.loadavg()[0]!.toFixed(1))],
    rounds: rows,
    sales_and_statements: stopped,
  });
}

function againstArg(): string | undefined {
  const args = process.argv.slice(2);
  const at = args.findIndex((a) => a === '--against' || a.startsWith('--against='));
  return at < 0 ? undefined : args[at]!.includes('=') ? args[at]!.slice('--against='.length) : args[at + 1];
}

if (isServerProcess) await server();
else if (againstArg()) await compareTrees(againstArg()!);
else await main();
