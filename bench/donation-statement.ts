/**
 * What a donation's committing statement costs on PostgreSQL, in forms side by side:
 * `npx tsx bench/donation-statement.ts [--count 600] [--gap-ms 5 | --back-to-back] [--forms=current,serial-lookup,no-triggers,required,one-row] [--settings N] [--dead N]`.
 *
 * A fresh schema of BENCH_DATABASE_URL (else the local test database). One real `createDonation`
 * gives the statement as the app sends it (`insertDonationsWithAlerts`: text and values, captured
 * from pg); then each form runs `--count` times on a connection of its own, the forms taking turns
 * statement by statement, `--gap-ms` apart (paced, as single donations come), or back to back.
 * After each, untimed, its event is marked published by id, as the relay does. Forms:
 *
 * - `current`: the statement as the app sends it (named: prepared once per connection).
 * - `serial-lookup`: the same with each id drawn by `nextval(pg_get_serial_sequence(…))`, the
 *   sequence looked up in the catalog for every row (the text before the sequences were named).
 * - `no-triggers`: `current` on a session with `session_replication_role = replica`, which skips the
 *   donation counters' trigger and the foreign-key checks: what they cost (not a form to serve).
 * - `required`: only the writes a donation must make, nothing decided or checked (lib.ts
 *   `REQUIRED_DONATION_WRITE`): the least a donation's statement can cost on these tables.
 * - `one-row`: a one-row INSERT into a table of its own — the floor for any durable commit.
 *
 * `--settings N`: N other streamers with moderation settings and N without, then ANALYZE (as
 * autovacuum would): the statement reads one streamer's settings however many others have some.
 * `--dead N`: N events of 5,000 other streamers written unpublished and then marked published
 * together before the run, as a drained backlog leaves them (a broker down for a while, an
 * import): their dead entries stay in `outbox_pending`'s pages until a VACUUM, and the statement's
 * look for older unpublished events reads through those pages. (Events published one by one as
 * they come leave nothing behind: the index drops an entry marked dead from the page it is adding
 * to before that page splits.)
 *
 * Reports per form how often PostgreSQL used its generic plan and how often it planned anew, the
 * round trip's p10 / p50 / p90 (ms), the p50 of each thousand statements in turn, and the backend's CPU per statement, its mark included (µs, from /proc: PostgreSQL on this
 * machine), the first 50 of each left out.
 */
import { createRequire } from 'node:module';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { sql } from 'kysely';
import { benchApp, cpuSecondsOf, numberArg, printReport, quantile, REQUIRED_DONATION_WRITE, requiredDonation, requiredPostgresValues } from './lib.js';

type PgClient = {
  query(config: unknown, values?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
  connect(): Promise<void>;
  end(): Promise<void>;
};
const pg = createRequire(import.meta.url)('pg') as { Client: { new (config: object): PgClient; prototype: PgClient } };

const count = numberArg('count', 600);
// 0 is a valid gap, which numberArg refuses: --back-to-back says it.
const gapMs = process.argv.includes('--back-to-back') ? 0 : numberArg('gap-ms', 5);
const ALL_FORMS = ['current', 'serial-lookup', 'no-triggers', 'required', 'one-row'] as const;
type Form = (typeof ALL_FORMS)[number];
const forms = (process.argv.find((a) => a.startsWith('--forms='))?.slice(8).split(',') ?? [...ALL_FORMS]) as Form[];
for (const form of forms) if (!ALL_FORMS.includes(form)) throw new Error(`unknown form ${form}: pick from ${ALL_FORMS.join(', ')}`);

// The app's statement as sent: the first query that writes donations.
let captured: { text: string; values: unknown[] } | null = null;
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: PgClient, config: unknown, values?: unknown[]) {
  const text = typeof config === 'string' ? config : (config as { text?: string })?.text;
  if (!captured && text?.includes('insert into donations')) captured = { text, values: (config as { values?: unknown[] }).values ?? values ?? [] };
  return query.call(this, config, values);
};

const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
const { createDonation } = await import('../src/modules/donations/donations.service.js');
const bench = await benchApp({}, 'postgres');
await bench.app.ready();
const db = bench.app.ctx.db;
// --settings N (see the header).
const withSettings = numberArg('settings', 0);
if (withSettings > 0) {
  await sql`insert into users (email, password_hash, code, name, name_key, language, currency, is_active, role, merchandise_promocode, created_at, updated_at)
    select 'settings' || g || '@example.test', '!', 'st_' || g, 'Streamer ' || g, 'streamer ' || g, 'en_US', 'USD', 1, 'streamer', 'ST' || g, 0, 0
    from generate_series(1, ${withSettings * 2}) g`.execute(db);
  await sql`insert into moderation_settings (user_id, updated_at) select id, 0 from users where code like 'st_%' and id % 2 = 0`.execute(db);
  await sql`analyze`.execute(db);
}
const streamer = await createAccount(db, { email: 'statement@example.test', password: 'a long passphrase', name: 'Statement bench' });
// --dead N (see the header).
const dead = numberArg('dead', 0);
if (dead > 0) {
  await sql`insert into outbox (type, user_id, channels, payload, created_at)
    select 'donation.created', ${streamer.id}::bigint + 1 + g % 5000, '[]', '{}', 0 from generate_series(1, ${dead}) g`.execute(db);
  await sql`update outbox set published_at = 1 where published_at is null`.execute(db);
}
await createDonation(db, { userId: streamer.id, amount: '5', currency: 'USD', username: 'Donor', message: 'hello' });
pg.Client.prototype.query = query;
if (!captured) throw new Error('createDonation sent no statement that writes donations');
const statement: { text: string; values: unknown[] } = captured;

const SERIAL_LOOKUP = statement.text
  .replace(`nextval('donations_id_seq'::regclass)`, `nextval(pg_get_serial_sequence('donations', 'id'))`)
  .replace(`nextval('outbox_id_seq'::regclass)`, `nextval(pg_get_serial_sequence('outbox', 'id'))`);
if (forms.includes('serial-lookup') && SERIAL_LOOKUP === statement.text) throw new Error('the statement no longer names its sequences: update the serial-lookup form');

const url = (bench.app.ctx.config.database as { url: string }).url;
const connections = new Map<Form, { client: PgClient; pid: number }>();
for (const form of forms) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  if (form === 'no-triggers') await client.query('set session_replication_role = replica');
  if (form === 'one-row') await client.query('create table if not exists statement_bench_floor (id bigint generated by default as identity primary key, note text)');
  const pid = Number((await client.query('select pg_backend_pid() as pid')).rows[0]!.pid);
  connections.set(form, { client, pid });
}

// For a profiler (`perf record -p`): each form's backend.
console.error(`backends: ${[...connections].map(([form, { pid }]) => `${form}=${pid}`).join(' ')}`);

const run = async (form: Form, client: PgClient): Promise<number> => {
  const start = performance.now();
  if (form === 'one-row') {
    await client.query({ name: 'floor', text: 'insert into statement_bench_floor (note) values ($1)', values: ['x'] });
    return performance.now() - start;
  }
  const { text, values } =
    form === 'required'
      ? { text: REQUIRED_DONATION_WRITE.postgres, values: requiredPostgresValues(requiredDonation(streamer.id, Date.now())) }
      : { text: form === 'serial-lookup' ? SERIAL_LOOKUP : statement.text, values: statement.values };
  const { rows } = await client.query({ name: form, text, values });
  const took = performance.now() - start;
  const eventId = rows[0]?.event_id;
  if (eventId === null || eventId === undefined) throw new Error(`the ${form} form wrote no event: the streamer's context changed under the bench`);
  await client.query({ name: 'published', text: 'update outbox set published_at = $1 where id = $2', values: [Date.now(), eventId] });
  return took;
};

const WARM = 50;
const times = new Map<Form, number[]>(forms.map((f) => [f, []]));
const cpuFrom = new Map<Form, number>();
for (let i = 0; i < count + WARM; i++) {
  // Rotating order: no form always runs right after the same one.
  for (let k = 0; k < forms.length; k++) {
    const form = forms[(i + k) % forms.length]!;
    const { client, pid } = connections.get(form)!;
    if (i === WARM) cpuFrom.set(form, cpuSecondsOf([pid]));
    const took = await run(form, client);
    if (i >= WARM) times.get(form)!.push(took);
    if (gapMs > 0) await new Promise((resolve) => setTimeout(resolve, gapMs));
  }
}

// Whether PostgreSQL kept one generic plan for the named statement or planned it every time.
const plansOf = new Map<Form, string>();
for (const [form, { client }] of connections) {
  const { rows } = await client.query(`select generic_plans, custom_plans from pg_prepared_statements where name = $1`, [form === 'one-row' ? 'floor' : form]);
  plansOf.set(form, rows[0] ? `${rows[0].generic_plans} generic, ${rows[0].custom_plans} custom` : 'unnamed');
}
const results = Object.fromEntries(
  forms.map((form) => {
    const xs = times.get(form)!;
    const backendUs = ((cpuSecondsOf([connections.get(form)!.pid]) - cpuFrom.get(form)!) * 1e6) / count;
    // The p50 of each thousand in turn: whether the statement slows as the published events pile up.
    const byThousand = Array.from({ length: Math.ceil(xs.length / 1000) }, (_, k) => +quantile(xs.slice(k * 1000, (k + 1) * 1000), 0.5).toFixed(3));
    return [form, { plans: plansOf.get(form), p10_ms: +quantile(xs, 0.1).toFixed(3), p50_ms: +quantile(xs, 0.5).toFixed(3), p90_ms: +quantile(xs, 0.9).toFixed(3), p50_ms_by_thousand: byThousand, backend_cpu_us_per_statement: Math.round(backendUs) }];
  }),
);
for (const { client } of connections.values()) await client.end();
await bench.close();
printReport('donation committing statement on PostgreSQL, forms side by side', { count, gapMs, forms, loadAverage: os.loadavg().map((l) => +l.toFixed(2)), results });
process.exit(0);
