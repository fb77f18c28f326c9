/**
 * What one sale statement costs, client and database: `npx tsx bench/sale-statements.ts [--batch 10] [--calls 1000]`.
 *
 * PostgreSQL only (BENCH_DATABASE_URL, else the local test database; a fresh schema). One client
 * runs each of the sale path's statements — the merchant_auth version read, the batch look-up
 * (`findSaleContexts`) and the batch write (`insertSalesWithCredits`), `--batch` sales each — in a
 * loop, with the exact text and values the repositories send, once as an unnamed statement (parsed
 * and planned on every call) and once as a named one (prepared once per connection), alternating.
 * Reports per call this process's CPU (Kysely building the query, pg, the socket), the backend's
 * CPU (from /proc) and the wall time. New sales every call, so the tables grow as in a real run.
 */
import { Kysely, PostgresDialect } from 'kysely';
import { benchApp, cpuSecondsOf, numberArg, printReport } from './lib.js';

const batch = numberArg('batch', 10);
const calls = numberArg('calls', 1000);
const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
const { createApp, setMerchandiseAccess } = await import('../src/modules/apps/apps.service.js');
const { createMerchant } = await import('../src/modules/merchants/merchants.service.js');
const { createMerchandise } = await import('../src/modules/merchandise/merchandise.service.js');
const { merchantAuthVersion } = await import('../src/modules/merchants/merchants.repository.js');
const { findSaleContexts, insertSalesWithCredits } = await import('../src/modules/sales/sales.repository.js');
type SaleWrite = Parameters<typeof insertSalesWithCredits>[1][number];

const bench = await benchApp({}, 'postgres');
const db = bench.app.ctx.db;
const owner = await createAccount(db, { email: 'merchant@example.test', password: 'correct horse battery', name: 'Bench Merchant' });
const streamer = await createAccount(db, { email: 'streamer@example.test', password: 'correct horse battery', name: 'Bench Streamer', currency: 'EUR' });
const { app: client } = await createApp(db, bench.app.ctx.secrets.encryptionKey, { ownerId: owner.id, name: 'Bench shop', redirectUris: ['https://bench.example.test/cb'] });
await setMerchandiseAccess(db, client.client_id, true);
const merchant = await createMerchant(db, { clientId: client.client_id, identifier: 'bench-shop', name: 'Bench Shop' });
const merchandise = await createMerchandise(db, client.client_id, { merchantIdentifier: 'bench-shop', identifier: 'hoodie', title: { en_US: 'Hoodie' }, isActive: 1, isPercentage: 1, currency: 'USD', priceUser: 1250, priceService: 500 });

let next = 0;
const keys = () => Array.from({ length: batch }, () => ({ merchantIdentifier: 'bench-shop', merchandiseIdentifier: 'hoodie', userId: streamer.id, externalId: `bench-${next++}` }));
const credit = (account: 'streamer' | 'service', userId: number | null) => ({ account, user_id: userId, source: 'merchandise_sale' as const, amount: 500, currency: 'EUR', rate: 1, credited_amount: 500, credited_currency: 'EUR', created_at: Date.now() });
const write = (externalId: string): SaleWrite => ({
  sale: { merchant_id: merchant.id, merchandise_id: merchandise.id, user_id: streamer.id, external_id: externalId, amount: 1099, currency: 'EUR', bought_amount: 1, username: 'Customer', message: null, is_shown: 0, created_at: Date.now(), shown_at: null },
  credits: [credit('streamer', streamer.id), credit('service', null)],
  event: { type: 'merchandise_sale.created', userId: streamer.id, channels: [`alerts:${streamer.id}`], payloadAfterId: ',"name":"merchandise-sale"}' },
});

// The repositories' statements, captured as sent (text and values), then run through one real pg client.
let captured: { text: string; values: unknown[] } | undefined;
const capturing = { query: async (text: string, values: unknown[]) => ((captured = { text, values }), { rows: [] }), release() {} };
const capture = new Kysely<any>({ dialect: new PostgresDialect({ pool: { connect: async () => capturing, end: async () => {} } as never }) });
const { default: pg } = await import('pg');
const connection = new pg.Client({ connectionString: (bench.app.ctx.config.database as { url: string }).url });
await connection.connect();
const [{ pid }] = (await connection.query<{ pid: number }>('select pg_backend_pid() as pid')).rows as [{ pid: number }];

const statements: Record<string, () => Promise<unknown>> = {
  version_read: () => merchantAuthVersion(capture),
  [`look_up_${batch}`]: () => findSaleContexts(capture, keys()),
  [`write_${batch}`]: () => insertSalesWithCredits(capture, keys().map((k) => write(k.externalId))),
};
const results: Record<string, Record<string, { client_us: number; backend_us: number; wall_us: number }[]>> = {};
for (let round = 0; round < 2; round++) {
  for (const [name, build] of Object.entries(statements)) {
    for (const named of [false, true]) {
      const run = async () => {
        await build();
        const { text, values } = captured!;
        await connection.query(named ? { name, text, values } : { text, values });
      };
      await run();
      const backend0 = cpuSecondsOf([pid]);
      const cpu0 = process.cpuUsage();
      const start = performance.now();
      for (let i = 0; i < calls; i++) await run();
      const cpu = process.cpuUsage(cpu0);
      ((results[name] ??= {})[named ? 'named' : 'unnamed'] ??= []).push({
        client_us: Math.round((cpu.user + cpu.system) / calls),
        backend_us: Math.round(((cpuSecondsOf([pid]) - backend0) * 1e6) / calls),
        wall_us: Math.round(((performance.now() - start) * 1000) / calls),
      });
    }
  }
}
await connection.end();
await bench.close();
printReport('sale statements, one client, unnamed vs named (per call)', { batch, calls, rounds: 2, results });
