/**
 * What the benches share: the server process (a fork of the bench file itself, so the load generator
 * never runs on the server's event loop), alternating rounds, and the report.
 */
import { fork, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';

/** The part of autocannon's API the benches use (the package ships no type declarations). */
export interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
  statusCodeStats: Record<string, { count: number }>;
}
export const autocannon = createRequire(import.meta.url)('autocannon') as (options: Record<string, unknown>) => Promise<AutocannonResult>;

/**
 * The text of `--name=V` or `--name V` on the command line (the last one given), '' for a `--name`
 * that ends the line, undefined when there is none.
 */
export function textArg(name: string): string | undefined {
  const args = process.argv.slice(2);
  let text: string | undefined;
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith(`--${name}=`)) text = args[i]!.slice(name.length + 3);
    else if (args[i] === `--${name}`) text = args[i + 1] ?? '';
  }
  return text;
}

/**
 * `--name=N` or `--name N` from the command line, else `fallback`. Anything that is not a positive
 * number stops the bench with a message rather than running it with NaN rounds or seconds.
 */
export function numberArg(name: string, fallback: number): number {
  const text = textArg(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    console.error(`--${name} needs a positive number (got ${JSON.stringify(text)}), as in --${name}=${fallback} or --${name} ${fallback}.`);
    process.exit(2);
  }
  return value;
}

/** The value below which a fraction `q` of `xs` lies (the lower of two middles for an even median). */
export const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!;
export const median = (xs: number[]): number => quantile(xs, 0.5);

export function machine(): string {
  const cpu = os.cpus();
  return `${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()}, load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`;
}

/** Prints the result as one JSON object: what was measured, on what machine, then the numbers. */
export function printReport(benchmark: string, numbers: Record<string, unknown>): void {
  console.log(JSON.stringify({ benchmark, machine: machine(), ...numbers }, null, 2));
}

/** True in the forked server process (see `startServer`). */
export const isServerProcess = process.argv[2] === '--server';

export interface ServerHandle<Ready> {
  child: ChildProcess;
  /** The server's first message: its address and whatever the bench seeded. */
  ready: Ready;
  /** Asks the server to finish (`serveBenchApp`); resolves with its `onStop` answer. */
  stop(): Promise<unknown>;
}

/**
 * Forks `benchFile` (a bench's `import.meta.url`) with `--server` and `args`, and waits for its first
 * message. `execArgv` adds Node flags (a CPU profile); `inheritOutput` shows the server's stdout/stderr.
 */
export async function startServer<Ready>(
  benchFile: string,
  options: { args?: string[]; execArgv?: string[]; inheritOutput?: boolean } = {},
): Promise<ServerHandle<Ready>> {
  const child = fork(fileURLToPath(benchFile), ['--server', ...(options.args ?? [])], {
    execArgv: ['--import', 'tsx', ...(options.execArgv ?? [])],
    ...(options.inheritOutput ? { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] } : {}),
  });
  const ready = await new Promise<Ready>((resolve, reject) => {
    child.once('message', (m) => resolve(m as Ready));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
  return {
    child,
    ready,
    stop: () =>
      new Promise((resolve) => {
        child.once('message', (m) => resolve((m as { stopped: unknown }).stopped));
        child.send('stop');
      }),
  };
}

/** The app as `openalerts serve` builds it, on a SQLite file in a fresh temp dir (production durability), or a fresh PostgreSQL schema. */
export async function benchApp(env: Record<string, string> = {}, dialect: 'sqlite' | 'postgres' = 'sqlite'): Promise<{ app: FastifyInstance; close(): Promise<void> }> {
  const { buildApp } = await import('../src/app.js');
  const { envToConfig } = await import('../src/config/config.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-bench-'));
  const schema = dialect === 'postgres' ? await postgresSchema() : null;
  const app = await buildApp(envToConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', ...schema?.env, ...env }), { logger: false });
  return {
    app,
    async close() {
      await app.close();
      await schema?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** PostgreSQL for `--dialect postgres`: BENCH_DATABASE_URL, else the local test database. */
export const BENCH_PG_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema of BENCH_PG_URL for one bench run (freshly loaded tables, never vacuumed by hand), dropped by `drop`. */
async function postgresSchema(): Promise<{ env: { DATABASE_URL: string }; drop(): Promise<void> }> {
  const { default: pg } = await import('pg');
  const schema = `bench_${process.pid}_${Date.now().toString(36)}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: BENCH_PG_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create schema ${schema}`);
  const url = new URL(BENCH_PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  // Names this process's backends in pg_stat_activity, so a bench can count their CPU (`postgresBackendPids`).
  url.searchParams.set('application_name', benchApplicationName(process.pid));
  return { env: { DATABASE_URL: url.toString() }, drop: () => admin(`drop schema ${schema} cascade`) };
}

/** A `donation.created` webhook body of the usual size (about 450 bytes), for the row benches. */
export const WEBHOOK_BENCH_BODY = JSON.stringify({
  type: 'donation.created',
  timestamp: '2026-11-28T15:00:00.000Z',
  data: { id: 123456, name: 'donation', username: 'bench', message_type: 'text', message: 'Great stream, keep going!', payin_system: null, amount: 5, currency: 'USD', is_shown: 0, amount_in_user_currency: 5, recipient_name: 'streamer', recipient: { user_id: 1, code: 'streamer', name: 'streamer', avatar: null }, created_at: '2026-11-28 15:00:00', shown_at: null, reason: 'Donation' },
});

/**
 * One connection of BENCH_PG_URL in a schema of its own, created for `fn` with `statements` and
 * dropped after it, committing asynchronously as the webhook dispatcher's connections do; `fn` gets
 * the connection and its backend's pid (for its CPU in /proc).
 */
export async function inScratchSchema<T>(schema: string, statements: readonly string[], fn: (client: import('pg').Client, pid: number) => Promise<T>): Promise<T> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: BENCH_PG_URL });
  await client.connect();
  try {
    await client.query(`create schema ${schema}`);
    await client.query(`set search_path = ${schema}; set synchronous_commit = off`);
    for (const statement of statements) await client.query(statement);
    const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    return await fn(client, pid);
  } finally {
    await client.query(`drop schema ${schema} cascade`).catch(() => {});
    await client.end();
  }
}

/**
 * Only the writes a donation must make in its durable transaction, whatever decides them: its row
 * and its `donation.created` outbox event (architecture.md: every change's event is written with
 * it), on the service's own tables, so the counters' trigger (the per-streamer version every write
 * bumps, which the donation pages' cache rests on) and the foreign-key check run as they do for
 * every writer. Nothing read, checked or claimed: no streamer's context, no moderation row, no
 * stamp, no claim for the relay. The least a donation's commit can cost on these tables; a floor
 * for the benches, not a form to serve. Parameters: `requiredDonation`.
 */
export const REQUIRED_DONATION_WRITE = {
  /** One statement, $1…$7 in `requiredDonation`'s order. */
  postgres: `with d as (
    insert into donations (user_id, username, message_type, message, amount, currency, amount_in_user_currency, user_currency, payin_system, is_shown, created_at, shown_at, poll_option_id)
    values ($1, $2, 'text', $3, $4, 'USD', $4, 'USD', null, 0, $5, null, null) returning id, user_id, created_at
  )
  insert into outbox (type, user_id, channels, payload, created_at)
  select 'donation.created', d.user_id, $6, '{"id":' || d.id || $7, d.created_at from d returning id as event_id`,
  /** Two statements between BEGIN IMMEDIATE and COMMIT, with named parameters: the donation, then its event (`id`: the donation's). */
  sqlite: {
    donation: `insert into donations (user_id, username, message_type, message, amount, currency, amount_in_user_currency, user_currency, payin_system, is_shown, created_at, shown_at, poll_option_id)
    values (@userId, @username, 'text', @message, @amount, 'USD', @amount, 'USD', null, 0, @at, null, null) returning id`,
    event: `insert into outbox (type, user_id, channels, payload, created_at) values ('donation.created', @userId, @channels, '{"id":' || @id || @payloadAfterId, @at) returning id`,
  },
};

/** REQUIRED_DONATION_WRITE's parameters for a donation of the usual size to `userId` at `at` (epoch ms). */
export function requiredDonation(userId: number, at: number) {
  const payloadAfterId = `,"name":"donation","username":"Bench donor","message_type":"text","message":"ts:${at}","payin_system":null,"amount":5,"currency":"USD","is_shown":0,"amount_in_user_currency":5,"recipient_name":"Bench","created_at":"2026-12-07 12:00:00","shown_at":null,"reason":"default"}`;
  return { userId, username: 'Bench donor', message: `ts:${at}`, amount: 500, at, channels: JSON.stringify([`$alerts:donation_${userId}`, `$widget:alerts_${userId}`]), payloadAfterId };
}

/** `requiredDonation` as REQUIRED_DONATION_WRITE.postgres's positional parameters. */
export const requiredPostgresValues = (d: ReturnType<typeof requiredDonation>): unknown[] => [d.userId, d.username, d.message, d.amount, d.at, d.channels, d.payloadAfterId];

/** A PostgreSQL cluster started for one bench run, with its connection URL. */
export interface BenchCluster {
  url: string;
  /** What it is, for the report: where its data lives and how it was set up. */
  label: string;
  /** Stops it and removes its data directory; safe to call twice. */
  stop(): void;
}

/**
 * `--pg-cluster=tmpfs`: a throwaway cluster whose data directory (WAL included) is in RAM
 * (/dev/shm), so a run shows what our software costs apart from the storage device. It runs with
 * the settings of BENCH_PG_URL's server (shared_buffers, WAL sizes, autovacuum…: the same
 * statements take the same paths) and with fsync and synchronous_commit on: every commit still
 * waits for its WAL flush — which, on tmpfs, returns as soon as the kernel has the pages.
 *
 * Binaries: `--pg-bin=DIR`, else `pg_config --bindir`. As root it runs as the `postgres` OS user
 * (initdb refuses root) through `runuser`. Stopped and removed when the bench process exits, on
 * failure and Ctrl-C too.
 *
 * For diagnosis: `--pg-set=NAME=VALUE` (repeatable) adds a setting after those (e.g.
 * `shared_preload_libraries=auto_explain`, `auto_explain.log_min_duration=0`), and
 * `--pg-keep-log=FILE` copies the server's log there before the directory is removed.
 */
export async function tmpfsCluster(port: number): Promise<BenchCluster> {
  const { spawnSync } = await import('node:child_process');
  const { default: pg } = await import('pg');
  const binDir = process.argv.find((a) => a.startsWith('--pg-bin='))?.slice(9) ?? spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout?.trim();
  if (!binDir || !fs.existsSync(path.join(binDir, 'initdb'))) {
    throw new Error('--pg-cluster=tmpfs needs the PostgreSQL server binaries: install them (initdb, pg_ctl) or name their folder with --pg-bin=DIR');
  }
  if (!fs.existsSync('/dev/shm')) throw new Error('--pg-cluster=tmpfs puts the cluster in /dev/shm, which this system does not have');
  // The disk cluster's own settings, minus what names its files, addresses and logs.
  const like = new pg.Client({ connectionString: BENCH_PG_URL });
  await like.connect();
  const { rows } = await like
    .query<{ name: string; setting: string }>(`select name, setting from pg_settings where source in ('configuration file', 'command line') order by name`)
    .finally(() => like.end());
  const skipped = /^(port|listen_addresses|unix_socket_|external_pid_file|cluster_name|data_directory|hba_file|ident_file|config_file|ssl|log|archive_|restore_command|primary_)/;
  const extra = process.argv.filter((a) => a.startsWith('--pg-set=')).map((a) => a.slice(9));
  const settings = [...rows.filter((r) => !skipped.test(r.name) && r.name !== 'fsync' && r.name !== 'synchronous_commit').map((r) => `${r.name}=${r.setting}`), 'fsync=on', 'synchronous_commit=on', ...extra];
  const keepLog = process.argv.find((a) => a.startsWith('--pg-keep-log='))?.slice(14);

  const asRoot = process.getuid?.() === 0;
  const owner = asRoot ? { uid: Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout), gid: Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout) } : null;
  if (owner && !(owner.uid > 0)) throw new Error('--pg-cluster=tmpfs as root runs PostgreSQL as the `postgres` OS user, which does not exist here: create it, or run the bench as another user');
  const dir = fs.mkdtempSync('/dev/shm/openalerts-bench-pg-');
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);
  const run = (bin: string, args: string[]) => {
    const command = asRoot ? ['runuser', ['-u', 'postgres', '--', path.join(binDir, bin), ...args]] as const : [path.join(binDir, bin), args] as const;
    const done = spawnSync(command[0], command[1], { cwd: dir, encoding: 'utf8' });
    if (done.status !== 0) throw new Error(`${bin} failed (${done.status}): ${done.stderr || done.stdout}`);
  };
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    try {
      if (fs.existsSync(path.join(dir, 'postmaster.pid'))) run('pg_ctl', ['-D', dir, '-m', 'immediate', '-w', 'stop']);
      if (keepLog && fs.existsSync(path.join(dir, 'server.log'))) fs.copyFileSync(path.join(dir, 'server.log'), keepLog);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  };
  process.once('exit', stop);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
  try {
    // --no-sync: initdb's own files only; the cluster itself runs with fsync on.
    run('initdb', ['-D', dir, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--no-sync']);
    // pg_ctl hands these to a shell: each setting quoted (DateStyle's value has a space).
    const quoted = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
    const options = [`-p ${port}`, `-k ${quoted(dir)}`, '-c listen_addresses=127.0.0.1', ...settings.map((s) => `-c ${quoted(s)}`)].join(' ');
    run('pg_ctl', ['-D', dir, '-l', path.join(dir, 'server.log'), '-o', options, '-w', 'start']);
  } catch (error) {
    // The server's own words, before its directory goes.
    const log = fs.existsSync(path.join(dir, 'server.log')) ? fs.readFileSync(path.join(dir, 'server.log'), 'utf8').split('\n').slice(-15).join('\n') : '';
    stop();
    throw new Error(`${(error as Error).message}${log ? `\nserver.log:\n${log}` : ''}`);
  }
  return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, label: `tmpfs cluster ${dir} on port ${port} (${settings.join(', ')})`, stop };
}

const benchApplicationName = (serverPid: number) => `openalerts-bench-${serverPid}`;

/** The PostgreSQL backends serving the bench server process `serverPid` (PostgreSQL on this machine). */
export async function postgresBackendPids(serverPid: number): Promise<number[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: BENCH_PG_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where application_name = $1', [benchApplicationName(serverPid)]);
    return rows.map((r) => r.pid);
  } finally {
    await client.end();
  }
}

/**
 * CPU seconds (user + system) the processes `pids` have used so far, from /proc (Linux): a bench
 * takes it before and after a round. Processes that are gone count as 0. Resolution: 10 ms.
 */
export function cpuSecondsOf(pids: readonly number[]): number {
  let ticks = 0;
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
      const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return ticks / 100;
}

/** `--dialect sqlite|postgres` (either form), sqlite by default. */
export function dialectArg(): 'sqlite' | 'postgres' {
  const value = textArg('dialect') ?? 'sqlite';
  if (value !== 'sqlite' && value !== 'postgres') {
    console.error(`--dialect must be sqlite or postgres, not ${value}`);
    process.exit(2);
  }
  return value;
}

/**
 * The server process of a bench run by `startServer`: `seed` prepares data on a `benchApp`, then the
 * app listens and sends `{url, ...seeded}`. On the parent's `stop`, `onStop` runs on the still open
 * app (a final count), its answer goes back, and the process cleans up and exits.
 */
export async function serveBenchApp<Seeded extends object>(
  env: Record<string, string>,
  seed: (app: FastifyInstance) => Promise<Seeded>,
  onStop: (app: FastifyInstance) => Promise<unknown> = async () => null,
): Promise<void> {
  const bench = await benchApp(env, dialectArg());
  const seeded = await seed(bench.app);
  const url = await bench.app.listen({ port: 0, host: '127.0.0.1' });
  process.send!({ url, ...seeded });
  process.once('message', async () => {
    process.send!({ stopped: await onStop(bench.app) });
    await bench.close();
    process.exit(0);
  });
}

/**
 * Runs every side once per round, in turns, so all sides see the same machine state; with `rotate`
 * the order shifts each round, so no side always runs right after the same one.
 */
export async function alternateRounds<Side extends string, R>(
  rounds: number,
  sides: readonly Side[],
  run: (side: Side, round: number) => Promise<R>,
  { rotate = false } = {},
): Promise<Record<Side, R[]>> {
  const results = Object.fromEntries(sides.map((s) => [s, [] as R[]])) as Record<Side, R[]>;
  for (let round = 0; round < rounds; round++) {
    const order = rotate ? sides.map((_, i) => sides[(i + round) % sides.length]!) : sides;
    for (const side of order) results[side].push(await run(side, round));
  }
  return results;
}

// Request/response over the fork channel between a bench and its child processes.

export type IpcMessage = { id?: number; cmd: string; [k: string]: unknown };

/** In a child: answers each command of the parent with its handler's result. */
export function serveIpc(handlers: Record<string, (m: IpcMessage) => Promise<unknown> | unknown>): void {
  process.on('message', async (m: IpcMessage) => {
    const result = await handlers[m.cmd]!(m);
    process.send!({ id: m.id, result });
  });
}

let nextIpcId = 1;
/** In the parent: sends a command to a child and resolves with its answer. */
export function callIpc<T = any>(child: ChildProcess, cmd: string, args: Record<string, unknown> = {}): Promise<T> {
  const id = nextIpcId++;
  return new Promise((resolve) => {
    const on = (m: { id: number; result: T }): void => {
      if (m.id !== id) return;
      child.off('message', on);
      resolve(m.result);
    };
    child.on('message', on);
    child.send({ id, cmd, ...args });
  });
}
