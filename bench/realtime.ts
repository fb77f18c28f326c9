/**
 * Real-time load script: `npx tsx bench/realtime.ts [maxSubscribers] [--rounds=2] [--messages=20]
 * [--latency-seconds=5] [--client-procs=2] [--dialect=sqlite|postgres|both] [--only=latency]
 * [--shapes=1k,realistic] [--before=DIR] [--profile=DIR] [--only=memory] [--memory-rounds=2]
 * [--pg-cluster=disk|tmpfs] [--pg-cluster-port=N] [--pg-bin=DIR] [--pg-set=NAME=VALUE] [--pg-keep-log=FILE]
 * [--cold]`.
 *
 * 1. Fan-out: N subscribers (1k/5k/10k, capped by maxSubscribers) receive bursts of publications,
 *    alternately from a raw `ws` broadcast server (JSON.stringify once, ws.send(string) to every socket)
 *    and from a RealtimeNode (memory broker, legacy protocol, `node.publish`). Both send the same bytes
 *    per frame. Reported: deliveries/s measured at the receivers, server CPU per delivery, and ratios.
 * 2. Latency, two shapes: 1k subscribers on one channel at 100 messages/s, and the realistic one —
 *    5,000 streamers × 2 subscribers, 200 donations/s spread over the streamers; p50/p99 across all
 *    deliveries, alternating the node alone (publish → subscriber) and the whole service (`buildApp`
 *    on SQLite and/or PostgreSQL: donation created → commit → outbox relay → node → subscriber).
 *    With SQLite, each round also times each donation's COMMIT statement (its WAL write and fsync),
 *    a raw storage flush floor in TMPDIR (a WAL-sized file, a commit's frames, fsync) and the writes
 *    a donation must make, straight on a database of the service's schema (sqliteRequiredFloor). With
 *    PostgreSQL, a floor of its own in each round: a one-row durable INSERT, the writes a donation
 *    must make (its row and outbox event) and a `select 1` on the same server, paced alike
 *    (postgresFloor) — the least any commit-then-publish path adds, and the least ours can.
 *    PostgreSQL is BENCH_DATABASE_URL's server (`--pg-cluster=disk`, the default), or with
 *    `--pg-cluster=tmpfs` a throwaway cluster in RAM with the same settings (lib.ts `tmpfsCluster`):
 *    the same statements and WAL flushes without the storage device, which shows our share alone.
 *    For diagnosis, `--pg-set` adds a setting to that cluster (auto_explain, log_min_duration_statement…)
 *    and `--pg-keep-log` keeps its server log.
 *    Before the rounds every seeded streamer receives one donation (the apps of both sides), as a
 *    service that has been running has seen its streamers; `--cold` leaves that out, so each
 *    donation of the realistic shape is its streamer's first in that process.
 * 3. Memory: RSS and heap per idle connected+subscribed connection, fresh server processes, counted
 *    from half the connections to all of them (`--only=memory [--memory-rounds=2]` runs it alone).
 *
 * Each server and each client group runs in its own process (a file-descriptor limit applies per
 * process); timestamps are CLOCK_MONOTONIC (`now` below), which every local process reads alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import v8 from 'node:v8';
import WebSocket, { WebSocketServer } from 'ws';
import { MemoryBroker } from '../src/realtime/broker-memory.js';
import { RealtimeNode } from '../src/realtime/node.js';
import { signChannelToken, signConnectionToken } from '../src/security/jwt.js';
import { alternateRounds, BENCH_PG_URL, callIpc, median, numberArg as arg, serveIpc } from './lib.js';

const SECRET = 'bench-secret';
const CHANNEL = '$alerts:donation_1';
/**
 * Milliseconds on CLOCK_MONOTONIC, one clock for every process of the machine: a timestamp taken in
 * the server and read in a client process. Not `performance.timeOrigin + performance.now()`: each
 * process ties its own clock to the wall clock once, at its start, and processes forked together on
 * a busy machine disagreed by tenths of a millisecond — a side's p50 came out below its own commit
 * time (0.00–0.22 ms against 0.37–0.54). Defined here, not in lib.ts: `--before` runs a copy of this
 * file against an older checkout's lib.ts.
 */
const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

/**
 * Latency histograms: 10 µs bins up to 2 s. The node alone's p50 is a few tenths of a millisecond
 * on a quiet machine, so 0.1 ms bins moved its ratio by 0.5–1 per bin.
 */
const BINS_PER_MS = 100;
const BINS = 2000 * BINS_PER_MS;
const newHistogram = (): Uint32Array => new Uint32Array(BINS + 1);
function record(hist: Uint32Array, ms: number): void {
  hist[Math.min(BINS, Math.max(0, Math.round(ms * BINS_PER_MS)))]++;
}
/** The non-empty bins as [bin, count] pairs: what goes over IPC. */
const sparse = (hist: Uint32Array): [number, number][] => Array.from(hist.entries()).filter(([, n]) => n > 0);
function merged(parts: [number, number][][]): Uint32Array {
  const hist = newHistogram();
  for (const part of parts) for (const [bin, n] of part) hist[bin]! += n;
  return hist;
}

type Memory = NodeJS.MemoryUsage & { newSpace: number };
/** After GC: process memory, and the young generation's resident size (V8's new space). */
function memoryNow(): Memory {
  gc();
  gc();
  return { ...process.memoryUsage(), newSpace: v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.physical_space_size ?? 0 };
}

/** A donation-sized payload (~300 bytes encoded). */
function payload(i: number): Record<string, unknown> {
  return {
    id: i, name: 'Donor Name', username: 'donor', message_type: 'text', message: 'Thanks for the stream! '.repeat(4),
    amount: 100, currency: 'EUR', is_shown: 0, created_at: '2024-01-01 12:00:00', shown_at: null, reason: 'default', ts: now(),
  };
}


function spawn(role: string): ChildProcess {
  return fork(process.argv[1]!, [`--role=${role}`], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: 'inherit' });
}

// ---------------------------------------------------------------------------------------------------
// Server processes.

/** Calls `send` `rate` times a second for `seconds`, on schedule (a late call does not delay the next ones' start times). */
async function paced(rate: number, seconds: number, send: () => Promise<unknown>): Promise<void> {
  const total = Math.round(rate * seconds);
  const start = now();
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - now();
    // Behind schedule, still yield to the event loop as separate requests would: the relay's
    // rounds and the sockets' I/O run between two donations.
    if (wait > 0) await sleep(wait);
    else await new Promise(setImmediate);
    await send();
  }
}

async function listen(server: http.Server): Promise<number> {
  server.listen(0, '127.0.0.1', 4096);
  await new Promise((r) => server.once('listening', r));
  return (server.address() as AddressInfo).port;
}

async function rawServer(): Promise<void> {
  const server = http.createServer();
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  const port = await listen(server);
  let seq = 0;
  serveIpc({
    port: () => port,
    count: () => wss.clients.size,
    mem: memoryNow,
    cpu: () => process.cpuUsage(),
    async burst(m) {
      for (let i = 0; i < (m.messages as number); i++) {
        seq++;
        // The same bytes the node sends to a legacy subscriber.
        const frame = JSON.stringify({ result: { channel: CHANNEL, data: { data: payload(seq), offset: seq, seq } } });
        for (const ws of wss.clients) ws.send(frame);
        await new Promise(setImmediate);
      }
    },
  });
}

async function nodeServer(): Promise<void> {
  const server = http.createServer();
  const node = new RealtimeNode({
    tokenSecret: SECRET, broker: new MemoryBroker(), pingIntervalMs: 3600_000, connectTimeoutMs: 600_000, maxQueueBytes: 64 << 20,
  });
  node.attach(server);
  const port = await listen(server);
  let seq = 0;
  serveIpc({
    port: () => port,
    count: () => node.stats().subscriptions,
    mem: memoryNow,
    cpu: () => process.cpuUsage(),
    async burst(m) {
      for (let i = 0; i < (m.messages as number); i++) {
        await node.publish(CHANNEL, payload(++seq));
        await new Promise(setImmediate);
      }
    },
    // Round-robin over `channels` channels ($alerts:donation_1 …), as donations spread over streamers.
    paced: (m) => {
      const channels = (m.channels as number | undefined) ?? 1;
      return paced(m.rate as number, m.seconds as number, () => {
        seq++;
        return node.publish(channels === 1 ? CHANNEL : `$alerts:donation_${1 + (seq % channels)}`, payload(seq));
      });
    },
  });
}

/** A streamer's `users` row as an account has it, without hashing a password (none can sign in). */
function streamerRow(code: string, name: string, at: number) {
  return {
    email: `${code}@example.test`, password_hash: '!', code, name, name_key: name.toLowerCase(), avatar: null,
    language: 'en_US', currency: 'USD', is_active: 1, role: 'streamer' as const, merchandise_promocode: code.toUpperCase(), created_at: at, updated_at: at,
  };
}

/**
 * The whole service as `openalerts serve` runs it (SQLite with durable commits, or PostgreSQL): a
 * donation is written with its outbox row, the relay publishes it after commit, the node fans it
 * out. The donation's message carries the time it was created, so clients time the full path.
 * `--streamers=N` more streamer rows are seeded (bulk insert) for the realistic shape.
 */
async function appServer(): Promise<void> {
  const { benchApp } = await import('./lib.js');
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createDonation } = await import('../src/modules/donations/donations.service.js');
  const { donationChannel } = await import('../src/modules/outbox/channels.js');
  const dialect = process.argv.find((a) => a.startsWith('--app-dialect='))?.slice(14) === 'postgres' ? 'postgres' : 'sqlite';
  const bench = await benchApp({}, dialect);
  const { app } = bench;
  const db = app.ctx.db;
  const user = await createAccount(db, { email: 'bench@example.test', password: 'a long passphrase', name: 'Bench' });
  // Streamers for the realistic shape: rows as an account has them (no password hashing per row).
  const streamers = Number(process.argv.find((a) => a.startsWith('--streamers='))?.slice(12) ?? 0);
  const ids: number[] = [];
  const now0 = Date.now();
  for (let start = 0; start < streamers; start += 500) {
    const rows = Array.from({ length: Math.min(500, streamers - start) }, (_, k) => streamerRow(`rt_${start + k}`, `Realtime Streamer ${start + k}`, now0));
    ids.push(...(await db.insertInto('users').values(rows).returning('id').execute()).map((r) => r.id));
  }
  if (process.argv.includes('--warm')) {
    for (let start = 0; start < ids.length; start += 500) {
      await Promise.all(ids.slice(start, start + 500).map((userId) => createDonation(db, { userId, amount: '1', currency: 'USD', username: 'Warm-up', message: 'warm-up' })));
    }
  }
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  let seq = 0;
  let commitHist = newHistogram();
  // When the donation's commit returned (durable), from its start: the first commit this process
  // reports after it (one donation is under way at a time). The rest of its path is the event's.
  let durableHist = newHistogram();
  let waitingFrom = 0;
  // The COMMIT statement alone: on SQLite, writing the transaction's WAL frames and their fsync
  // (synchronous = FULL). Kysely logs it before the commit listeners are called, so the last
  // statement timed when the donation's commit is reported is its COMMIT.
  let commitStatementHist = newHistogram();
  let lastStatementMs = 0;
  app.ctx.database.onQuery((seconds) => {
    lastStatementMs = seconds * 1000;
  });
  app.ctx.database.onCommit(() => {
    if (waitingFrom === 0) return;
    record(durableHist, now() - waitingFrom);
    record(commitStatementHist, lastStatementMs);
    waitingFrom = 0;
  });
  serveIpc({
    port: () => port,
    // Real-time tokens name a real, active account (the service checks it at connect): the first
    // streamer's; channel tokens are signed for each streamer's channel.
    info: () => ({ secret: app.ctx.secrets.realtimeTokenSecret, channel: donationChannel(user.id), user: String(user.id), channels: ids.map(donationChannel) }),
    count: () => app.ctx.realtime.node.stats().subscriptions,
    cpu: () => process.cpuUsage(),
    paced: async (m) => {
      const spread = (m.channels as number | undefined) ?? 1;
      commitHist = newHistogram();
      durableHist = newHistogram();
      commitStatementHist = newHistogram();
      const stopProfile = await profileSteadyState(`${dialect}-${spread}ch`);
      await paced(m.rate as number, m.seconds as number, async () => {
        const userId = spread === 1 ? user.id : ids[seq++ % Math.min(spread, ids.length)]!;
        const t0 = now();
        waitingFrom = t0;
        await createDonation(db, { userId, amount: '5', currency: 'USD', username: 'Bench donor', message: `ts:${t0}` });
        record(commitHist, now() - t0);
        waitingFrom = 0;
      });
      await stopProfile();
    },
    // How long createDonation took (to durable commit) in the last paced run.
    commits: () => sparse(commitHist),
    // How long each took to its durable commit (the commit listeners' call) in the last paced run.
    durable: () => sparse(durableHist),
    // How long each donation's COMMIT statement took in the last paced run.
    commitStatements: () => sparse(commitStatementHist),
    // Closes the app and removes its data directory (or PostgreSQL schema); the process then exits.
    async stop() {
      await bench.close();
      setImmediate(() => process.exit(0));
      return true;
    },
  });
}

/**
 * `--profile=DIR`: a CPU profile of the app server during each paced run only (node:inspector), as
 * DIR/app-<dialect>-<channels>ch-<pid>-<n>.cpuprofile — the steady state, without the connections' set-up.
 */
let profiles = 0;
async function profileSteadyState(name: string): Promise<() => Promise<void>> {
  const dir = process.argv.find((a) => a.startsWith('--profile='))?.slice(10);
  if (!dir) return async () => {};
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 200 });
  await session.post('Profiler.start');
  return async () => {
    // The deliveries still under way (the orchestrator waits 500 ms after the run too).
    await sleep(300);
    const { profile } = await session.post('Profiler.stop');
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, `app-${name}-${process.pid}-${++profiles}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  };
}

// ---------------------------------------------------------------------------------------------------
// Client processes: hold sockets, count or time what they receive.

async function clients(): Promise<void> {
  const socks: Record<string, WebSocket[]> = { raw: [], node: [], app: [] };
  let mode: 'count' | 'latency' = 'count';
  let received = 0;
  let target = 0;
  let doneAt = 0;
  let onDone: (() => void) | null = null;
  let hist = newHistogram();

  function onFrame(data: WebSocket.RawData): void {
    // Publications that went out together share one message, one per line.
    if (mode === 'latency') {
      // The payload ends with "ts":<publish time>: read it without parsing the whole frame.
      const t = now();
      for (const text of data.toString().split('\n')) {
        const at = text.lastIndexOf('ts":');
        const ts = at >= 0 ? parseFloat(text.slice(at + 4)) : parseFloat(text.slice(text.indexOf('"message":"ts:') + 14));
        record(hist, t - ts);
      }
      return;
    }
    const text = data.toString();
    let lines = 1;
    for (let i = text.indexOf('\n'); i >= 0; i = text.indexOf('\n', i + 1)) lines++;
    const before = received;
    received += lines;
    if (before < target && received >= target) {
      doneAt = now();
      onDone?.();
    }
  }

  async function openNode(url: string, user: string, secret = SECRET, channel = CHANNEL): Promise<WebSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    ws.send(JSON.stringify({ id: 1, params: { token: await signConnectionToken(secret, user) } }));
    const [conn] = await new Promise<WebSocket.RawData[]>((r) => ws.once('message', (d) => r([d])));
    const client = JSON.parse(conn.toString()).result.client as string;
    const token = await signChannelToken(secret, { client, channel });
    ws.send(JSON.stringify({ id: 2, method: 1, params: { channel, token } }));
    // The reply, then the JOIN push.
    await new Promise<void>((r) => {
      let n = 0;
      const on = (): void => {
        if (++n < 2) return;
        ws.off('message', on);
        r();
      };
      ws.on('message', on);
    });
    ws.on('message', onFrame);
    return ws;
  }

  async function openRaw(url: string): Promise<WebSocket> {
    const ws = new WebSocket(url, { perMessageDeflate: false });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    ws.on('message', onFrame);
    return ws;
  }

  serveIpc({
    async connect(m) {
      const kind = m.kind as string;
      const url = `ws://127.0.0.1:${m.port as number}${kind === 'raw' ? '/' : '/connection/websocket'}`;
      const base = socks[kind]!.length;
      for (let done = 0; done < (m.count as number); ) {
        const batch = Math.min(250, (m.count as number) - done);
        const opened = await Promise.all(
          Array.from({ length: batch }, (_, i) =>
            kind === 'raw'
              ? openRaw(url)
              : openNode(
                  url,
                  (m.user as string) ?? String(done + i),
                  (m.secret as string) ?? SECRET,
                  // One channel for all, or socket j of this process on channels[j % length].
                  m.channels ? (m.channels as string[])[(base + done + i) % (m.channels as string[]).length]! : ((m.channel as string) ?? CHANNEL),
                ),
          ),
        );
        socks[kind]!.push(...opened);
        done += batch;
      }
      return socks[kind]!.length;
    },
    expect(m) {
      mode = 'count';
      received = 0;
      doneAt = 0;
      target = (m.messages as number) * socks[m.kind as string]!.length;
      return true;
    },
    async done() {
      if (received < target) await new Promise<void>((r) => (onDone = r));
      onDone = null;
      return doneAt;
    },
    latency() {
      mode = 'latency';
      hist = newHistogram();
      return true;
    },
    histogram: () => sparse(hist),
    async close(m) {
      const list = socks[m.kind as string]!;
      await Promise.all(list.map((ws) => new Promise((r) => (ws.once('close', r), ws.close()))));
      list.length = 0;
      return true;
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Orchestrator.

/** In ms, to the histogram's 0.01 ms. */
function percentile(hist: Uint32Array, p: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i]!;
    if (acc >= total * p) return i / BINS_PER_MS;
  }
  return NaN;
}

async function waitCount(server: ChildProcess, n: number): Promise<void> {
  while ((await callIpc<number>(server, 'count')) !== n) await sleep(20);
}

async function main(): Promise<void> {
  // The max-subscribers number, not the value of a `--name N` option before it.
  const positional = process.argv.slice(2).find((a, i, args) => /^\d+$/.test(a) && !(i > 0 && /^--[^=]+$/.test(args[i - 1]!)));
  const max = positional ? Number(positional) : 10_000;
  const rounds = arg('rounds', 2);
  const messages = arg('messages', 20);
  const procs = arg('client-procs', 2);
  const latencySeconds = arg('latency-seconds', 5);
  const sizes = [1000, 5000, 10_000].filter((n) => n <= max);
  if (sizes.length === 0 || sizes[sizes.length - 1] !== max) sizes.push(max);
  const latencySubs = Math.min(1000, max);
  const option = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  // --only=latency skips fan-out and memory (--only=memory runs memory alone); --shapes=1k,realistic picks latency shapes; --dialect the whole service's database.
  const onlyLatency = option('only') === 'latency';
  // --only=memory runs the memory section alone.
  if (option('only') === 'memory') {
    const group = Array.from({ length: procs }, () => spawn('clients'));
    console.log(`# realtime bench: node ${process.version}, ${os.cpus().length} CPUs, ${procs} client processes`);
    console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    await memory(group, (n, i) => Math.floor(n / procs) + (i < n % procs ? 1 : 0), max, arg('memory-rounds', 2));
    for (const c of group) c.kill();
    return;
  }
  const shapeNames = (option('shapes') ?? '1k,realistic').split(',');
  const dialectOption = option('dialect') ?? 'sqlite';
  if (!['sqlite', 'postgres', 'both'].includes(dialectOption)) {
    console.error(`--dialect must be sqlite, postgres or both, not ${dialectOption}`);
    process.exit(2);
  }
  const latencyDialects: ('sqlite' | 'postgres')[] = dialectOption === 'both' ? ['sqlite', 'postgres'] : [dialectOption as 'sqlite' | 'postgres'];

  const clusterOption = option('pg-cluster') ?? 'disk';
  if (!['disk', 'tmpfs'].includes(clusterOption)) {
    console.error(`--pg-cluster must be disk (BENCH_DATABASE_URL's server) or tmpfs (a throwaway cluster in /dev/shm), not ${clusterOption}`);
    process.exit(2);
  }
  let pgLabel = `disk: ${BENCH_PG_URL.replace(/\/\/[^@/]*@/, '//')}`;
  if (latencyDialects.includes('postgres') && clusterOption === 'tmpfs') {
    // Imported here, not at the top: a copy of this file runs against an older lib.ts (--before).
    const { tmpfsCluster } = await import('./lib.js');
    const cluster = await tmpfsCluster(Number(option('pg-cluster-port') ?? (await freePort())));
    // The app servers forked below (both sides) take it from their environment.
    process.env.BENCH_DATABASE_URL = cluster.url;
    pgLabel = cluster.label;
  }

  const raw = spawn('raw');
  const node = spawn('node');
  const group = Array.from({ length: procs }, () => spawn('clients'));
  const ports = { raw: await callIpc<number>(raw, 'port'), node: await callIpc<number>(node, 'port') };
  const servers = { raw, node } as const;
  const share = (n: number, i: number): number => Math.floor(n / procs) + (i < n % procs ? 1 : 0);

  console.log(`# realtime bench: node ${process.version}, ${os.cpus().length} CPUs, ${procs} client processes`);
  console.log(`load average ${os.loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  if (latencyDialects.includes('postgres')) console.log(`PostgreSQL ${pgLabel}`);
  console.log(process.argv.includes('--cold') ? 'streamers cold: no donation before the rounds' : 'streamers warm: one donation each before the rounds');
  if (!onlyLatency) console.log(`\n## Fan-out (${messages} publications per burst, ${rounds} rounds, alternating raw/node)`);
  if (!onlyLatency) console.log('subscribers | raw deliveries/s | node deliveries/s | ratio | raw CPU µs/delivery | node CPU µs/delivery | CPU ratio (raw/node)');
  for (const n of onlyLatency ? [] : sizes) {
    for (const kind of ['raw', 'node'] as const) {
      await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind, port: ports[kind], count: share(n, i) })));
      await waitCount(servers[kind], n);
    }
    const burst = await alternateRounds(
      rounds,
      ['raw', 'node'] as const,
      async (kind) => {
        await Promise.all(group.map((c) => callIpc(c, 'expect', { kind, messages })));
        const cpu0 = await callIpc<NodeJS.CpuUsage>(servers[kind], 'cpu');
        const t0 = now();
        await callIpc(servers[kind], 'burst', { messages });
        const ends = await Promise.all(group.map((c) => callIpc<number>(c, 'done')));
        const elapsed = Math.max(...ends) - t0;
        const cpu1 = await callIpc<NodeJS.CpuUsage>(servers[kind], 'cpu');
        await sleep(200);
        return { rate: (n * messages) / (elapsed / 1000), cpu: (cpu1.user - cpu0.user + cpu1.system - cpu0.system) / (n * messages) };
      },
      { rotate: true },
    );
    const rate = (kind: 'raw' | 'node'): number => median(burst[kind].map((b) => b.rate));
    const cpu = (kind: 'raw' | 'node'): number => median(burst[kind].map((b) => b.cpu));
    const [rr, nr, rc, nc] = [rate('raw'), rate('node'), cpu('raw'), cpu('node')];
    console.log(
      `${n} | ${rr.toFixed(0)} | ${nr.toFixed(0)} | ${(nr / rr).toFixed(2)} | ${rc.toFixed(2)} | ${nc.toFixed(2)} | ${(rc / nc).toFixed(2)}`,
    );
    for (const kind of ['raw', 'node'] as const) {
      await Promise.all(group.map((c) => callIpc(c, 'close', { kind })));
      await waitCount(servers[kind], 0);
    }
  }

  {
    const shapes: Shape[] = [
      { name: '1k subscribers', channels: 1, perChannel: latencySubs, rate: 100 },
      { name: 'realistic', channels: 5000, perChannel: 2, rate: 200 },
    ].filter((shape) => shapeNames.some((n) => shape.name.startsWith(n)));
    await latencyRuns(group, node, ports.node, shapes, latencyDialects, rounds, latencySeconds);
  }
  raw.kill();
  node.kill();
  if (onlyLatency) {
    for (const c of group) c.kill();
    return;
  }

  await memory(group, share, max, arg('memory-rounds', 1));
  for (const c of group) c.kill();
}

/**
 * Memory per idle connection (connected and subscribed for the node, open for raw `ws`), in a fresh
 * server process per side and round, sides alternating. Half of the connections are opened first
 * and not counted: what the first connections cost once — compiled code, the young generation that
 * V8 grows while a burst of connections allocates (up to 2 × 16 MiB of semi-spaces, resident as it
 * is used) — is not a cost per connection, and at 1,000 connections it was most of the RSS growth.
 * The figures are the growth from then to all `idle` connections, divided by the second half:
 * RSS, heap after GC (the objects a connection keeps), and the young generation's resident size
 * (which should not grow between the two readings); then, for comparison with earlier runs, the
 * growth from the idle server to all connections divided by all of them. With --before=DIR the
 * node of an older checkout is a third side, in the same alternating rounds.
 */
/**
 * A copy of this file in an older checkout's bench/ (--before=DIR), which serves that checkout's
 * side; removed when the bench exits, as the temporary data directories are.
 */
function benchCopyIn(before: string): string {
  const copy = path.join(before, 'bench', 'realtime-bench-copy.ts');
  fs.copyFileSync(process.argv[1]!, copy);
  process.once('exit', () => fs.rmSync(copy, { force: true }));
  return copy;
}

async function memory(group: ChildProcess[], share: (n: number, i: number) => number, idle: number, rounds = 1): Promise<void> {
  // --before=DIR: the node of an older checkout too, served by a copy of this file in DIR/bench.
  const before = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
  const copy = before ? benchCopyIn(before) : null;
  const sides = copy ? (['node', 'node-before', 'raw'] as const) : (['node', 'raw'] as const);
  const half = Math.floor(idle / 2);
  console.log(`\n## Memory (${idle} idle connections, fresh server process each, after GC; per connection: growth from ${half} to ${idle} connections ÷ ${idle - half})`);
  const results = await alternateRounds(rounds, sides as readonly ('node' | 'node-before' | 'raw')[], async (side) => {
    const server = side === 'node-before' ? fork(copy!, ['--role=node'], { execArgv: ['--import', 'tsx', '--expose-gc'], stdio: 'inherit' }) : spawn(side);
    const kind = side === 'raw' ? 'raw' : 'node';
    const port = await callIpc<number>(server, 'port');
    const connect = async (n: number, total: number): Promise<Memory> => {
      await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind, port, count: share(n, i) })));
      await waitCount(server, total);
      await sleep(500);
      return callIpc<Memory>(server, 'mem');
    };
    await sleep(300);
    const atZero = await callIpc<Memory>(server, 'mem');
    const atHalf = await connect(half, half);
    const atAll = await connect(idle - half, idle);
    await Promise.all(group.map((c) => callIpc(c, 'close', { kind })));
    server.kill();
    const per = (k: keyof Memory): number => (atAll[k] - atHalf[k]) / (idle - half) / 1024;
    const fromZero = (k: keyof Memory): number => (atAll[k] - atZero[k]) / idle / 1024;
    return { rss: per('rss'), heapUsed: per('heapUsed'), rssFromZero: fromZero('rss'), heapFromZero: fromZero('heapUsed'), newSpace: (atAll.newSpace - atHalf.newSpace) / 1048576, newSpaceAtHalf: atHalf.newSpace / 1048576 };
  });
  const labels = { node: 'RealtimeNode (connected + subscribed)', 'node-before': `RealtimeNode of ${before} (connected + subscribed)`, raw: 'raw ws (open)' };
  for (const side of sides) {
    const rs = results[side];
    const list = (f: (r: (typeof rs)[number]) => number, digits = 2): string => rs.map((r) => f(r).toFixed(digits)).join(' / ');
    console.log(
      `${labels[side]}: RSS ${list((r) => r.rss)} KiB/conn, heap ${list((r) => r.heapUsed)} KiB/conn ` +
        `(young generation resident ${list((r) => r.newSpaceAtHalf, 1)} MiB at ${half}, growth after ${list((r) => r.newSpace, 1)} MiB); ` +
        `counted from 0 connections, one-time costs included: RSS ${list((r) => r.rssFromZero)} KiB/conn, heap ${list((r) => r.heapFromZero)} KiB/conn`,
    );
  }
}

/** A latency shape: `channels` channels (streamers), `perChannel` subscribers each, `rate` donations/s spread over them. */
interface Shape {
  name: string;
  channels: number;
  perChannel: number;
  rate: number;
}

/** SQLite's WAL: a 32-byte file header, then frames of a 24-byte header and one page. */
const WAL_HEADER = 32;
const FRAME_HEADER = 24;
const PAGE = 4096;
/** Pages a donation's commit writes (bench/README.md, fourth pass: fixed by the schema). */
const DONATION_PAGES = 9;
/** About the most frames the WAL holds before the checkpoint thread lets it start over. */
const WAL_FRAMES = 1400;

/**
 * The storage flush floor, measured in the same run on the file system the app servers' data
 * directories are on (TMPDIR): what a commit's durable write costs the device with no SQLite and no
 * service around it. A file the WAL's size is written once and synced, then each commit's pattern
 * is repeated as SQLite writes it: `DONATION_PAGES` frames (a frame header and a page each, 18
 * pwrites) over already-allocated bytes, then fsync (better-sqlite3's SQLite calls fsync).
 *
 * Twice: paced at the shape's rate, as the donations come, and back to back. On a file system that
 * keeps timestamps on disk, a write in a new clock tick changes the file's mtime, and the sync must
 * then also write the inode: at 200 commits/s each commit is in a tick of its own (4 ms at HZ=250),
 * back to back most are not — the difference is that inode write.
 */
async function storageFloor(rate: number, seconds: number): Promise<{ paced: Uint32Array; backToBack: Uint32Array }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-floor-'));
  const file = path.join(dir, 'floor-wal');
  const fd = fs.openSync(file, 'w+');
  try {
    const size = WAL_HEADER + WAL_FRAMES * (FRAME_HEADER + PAGE);
    fs.writeSync(fd, Buffer.alloc(size), 0, size, 0);
    fs.fsyncSync(fd);
    const header = Buffer.alloc(FRAME_HEADER, 1);
    const page = Buffer.alloc(PAGE, 2);
    let frame = 0;
    const commit = (): number => {
      const t0 = now();
      for (let i = 0; i < DONATION_PAGES; i++) {
        if (frame === WAL_FRAMES) frame = 0;
        const at = WAL_HEADER + frame++ * (FRAME_HEADER + PAGE);
        fs.writeSync(fd, header, 0, FRAME_HEADER, at);
        fs.writeSync(fd, page, 0, PAGE, at + FRAME_HEADER);
      }
      fs.fsyncSync(fd);
      return now() - t0;
    };
    const paced = newHistogram();
    const total = Math.round(rate * seconds);
    const start = now();
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / rate - now();
      if (wait > 0) await sleep(wait);
      record(paced, commit());
    }
    const backToBack = newHistogram();
    for (let i = 0; i < Math.min(total, 400); i++) record(backToBack, commit());
    return { paced, backToBack };
  } finally {
    fs.closeSync(fd);
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A database made as the service makes it (its migrations), with one streamer, whose id is
 * returned: the tables of the required-writes floors (lib.ts `REQUIRED_DONATION_WRITE`).
 */
async function floorDatabase(config: { dialect: 'sqlite'; file: string } | { dialect: 'postgres'; url: string; schema: string }): Promise<number> {
  // Imported here, not at the top: `--before` runs a copy of this file in an older checkout.
  const { createDatabase } = await import('../src/db/database.js');
  const { migrateToLatest } = await import('../src/db/migrate.js');
  const database = createDatabase(config, { max: 1 });
  try {
    await migrateToLatest(database.db);
    return (await database.db.insertInto('users').values(streamerRow('floor', 'Floor', Date.now())).returning('id').executeTakeFirstOrThrow()).id;
  } finally {
    await database.close();
  }
}

/**
 * SQLite's required-writes floor, in the same run on the file system of the app servers' data
 * directories: the writes a donation must make (lib.ts `REQUIRED_DONATION_WRITE`: BEGIN IMMEDIATE,
 * its row, its outbox event, COMMIT) on a database opened as the service opens it (WAL,
 * synchronous = FULL), straight on the connection, paced at the shape's rate. Untimed between
 * commits, as the service does them off the donation's path: the relay's marks, 20 events to a
 * transaction, and a checkpoint every 200 commits (the service's checkpoint thread; none inside a
 * commit).
 */
async function sqliteRequiredFloor(rate: number, seconds: number): Promise<Uint32Array> {
  const { openSqlite } = await import('../src/db/database.js');
  const { REQUIRED_DONATION_WRITE, requiredDonation } = await import('./lib.js');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-floor-db-'));
  const file = path.join(dir, 'floor.db');
  try {
    const streamer = await floorDatabase({ dialect: 'sqlite', file });
    const sqlite = openSqlite(file);
    try {
      sqlite.pragma('wal_autocheckpoint = 0');
      const [begin, commit, donation, event, published] = ['begin immediate', 'commit', REQUIRED_DONATION_WRITE.sqlite.donation, REQUIRED_DONATION_WRITE.sqlite.event, 'update outbox set published_at = ? where id = ?'].map((text) => sqlite.prepare(text));
      const markAll = sqlite.transaction((ids: number[]) => ids.forEach((id) => published!.run(Date.now(), id)));
      const hist = newHistogram();
      const unmarked: number[] = [];
      let commits = 0;
      await paced(rate, seconds, async () => {
        const written = requiredDonation(streamer, Date.now());
        const t0 = now();
        begin!.run();
        const { id } = donation!.get(written) as { id: number };
        unmarked.push((event!.get({ ...written, id }) as { id: number }).id);
        commit!.run();
        record(hist, now() - t0);
        if (unmarked.length === 20) markAll(unmarked.splice(0));
        if (++commits % 200 === 0) sqlite.pragma('wal_checkpoint(PASSIVE)');
      });
      return hist;
    } finally {
      sqlite.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The PostgreSQL floor, measured in the same run on the server the app servers use, from this
 * process on a connection of its own at the shape's rate: a one-row INSERT committed durably
 * (synchronous_commit on, as a donation's write) — what any service that commits a donation before
 * it publishes it adds to the node alone's path, with nothing of ours in it; then the writes a
 * donation of this service must make, and nothing else (lib.ts `REQUIRED_DONATION_WRITE`: its row
 * and its outbox event on a schema migrated as the service's, the counters' trigger and the
 * foreign-key check included; each event marked published after it, untimed, as the relay does);
 * then `select 1`: the round trip and the backend's wake-up alone, without a commit.
 */
async function postgresFloor(rate: number, seconds: number): Promise<{ insert: Uint32Array; required: Uint32Array; roundTrip: Uint32Array }> {
  const { default: pg } = await import('pg');
  // Imported here, not at the top: `--before` runs a copy of this file against an older lib.ts.
  const { REQUIRED_DONATION_WRITE, requiredDonation, requiredPostgresValues } = await import('./lib.js');
  // The environment first: --pg-cluster=tmpfs names its cluster there after lib.ts read BENCH_PG_URL.
  const url = process.env.BENCH_DATABASE_URL ?? BENCH_PG_URL;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const schema = `bench_floor_${process.pid}`;
  try {
    await client.query(`create schema if not exists ${schema}`);
    const streamer = await floorDatabase({ dialect: 'postgres', url, schema });
    await client.query(`set search_path = ${schema}`);
    await client.query('create table if not exists floor (id bigserial primary key, v integer not null)');
    const timed = async (during: number, statement: () => { name: string; text: string; values?: unknown[] }, after?: (rows: Record<string, unknown>[]) => Promise<unknown>) => {
      const hist = newHistogram();
      await paced(rate, during, async () => {
        const next = statement();
        const t0 = now();
        const { rows } = await client.query(next);
        record(hist, now() - t0);
        await after?.(rows);
      });
      return hist;
    };
    const insert = await timed(seconds, () => ({ name: 'floor-insert', text: 'insert into floor (v) values ($1)', values: [1] }));
    const required = await timed(
      seconds,
      () => ({ name: 'floor-required', text: REQUIRED_DONATION_WRITE.postgres, values: requiredPostgresValues(requiredDonation(streamer, Date.now())) }),
      (rows) => client.query({ name: 'floor-published', text: 'update outbox set published_at = $1 where id = $2', values: [Date.now(), rows[0]!.event_id] }),
    );
    const roundTrip = await timed(seconds / 2, () => ({ name: 'floor-select', text: 'select 1' }));
    return { insert, required, roundTrip };
  } finally {
    await client.query(`drop schema ${schema} cascade`).catch(() => {});
    await client.end();
  }
}

/**
 * Latency of the node alone (publish → subscriber) and of the whole service (donation created →
 * subscriber: commit, outbox relay, node) on each dialect, in alternating rounds, per shape.
 */
async function latencyRuns(group: ChildProcess[], node: ChildProcess, nodePort: number, shapes: Shape[], dialects: ('sqlite' | 'postgres')[], rounds: number, seconds: number): Promise<void> {
  const procs = group.length;
  const share = (n: number, i: number): number => Math.floor(n / procs) + (i < n % procs ? 1 : 0);
  const streamers = Math.max(0, ...shapes.map((s) => (s.channels > 1 ? s.channels : 0)));
  const apps = new Map<string, { child: ChildProcess; port: number; info: { secret: string; channel: string; user: string; channels: string[] } }>();
  // --before=DIR: the same service from an older checkout too (`git archive <commit> | tar -x -C DIR`
  // and a node_modules symlink), served by a copy of this file placed in DIR/bench.
  const before = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
  const sources: [string, string][] = [['app', process.argv[1]!]];
  if (before) sources.push(['before', benchCopyIn(before)]);
  for (const dialect of dialects) {
    for (const [name, file] of sources) {
      const profile = process.argv.find((a) => a.startsWith('--profile='));
      const warm = process.argv.includes('--cold') ? [] : ['--warm'];
      const child = fork(file, ['--role=app', `--app-dialect=${dialect}`, `--streamers=${streamers}`, ...warm, ...(profile ? [`${profile}/${name}`] : [])], {
        execArgv: ['--import', 'tsx', '--expose-gc'],
        stdio: 'inherit',
      });
      apps.set(`${name}-${dialect}`, { child, port: await callIpc<number>(child, 'port'), info: await callIpc(child, 'info') });
    }
  }
  // SQLite's durable commit is a write and fsync in the data directory: the storage floor is a side of its own in the rotation.
  // PostgreSQL's: a durable one-row commit on the same server (postgresFloor), also a side of its own.
  const kinds = ['node', ...apps.keys(), ...(dialects.includes('sqlite') ? ['floor'] : []), ...(dialects.includes('postgres') ? ['pgfloor'] : [])];
  try {
    for (const shape of shapes) {
      const subscribers = shape.channels * shape.perChannel;
      const runs: Record<string, { hist: Uint32Array; commits: Uint32Array | null; durable: Uint32Array | null; commitStatements: Uint32Array | null; cpuMs: number; load: number }[]> = Object.fromEntries(
        kinds.map((k) => [k, []]),
      );
      const floors: { paced: Uint32Array; backToBack: Uint32Array; required: Uint32Array; load: number }[] = [];
      const pgFloors: { insert: Uint32Array; required: Uint32Array; roundTrip: Uint32Array; load: number }[] = [];
      for (let round = 0; round < rounds; round++) {
        // Rotate the order each round, so no side always runs first.
        for (const kind of kinds.map((_, i) => kinds[(i + round) % kinds.length]!)) {
          if (kind === 'floor') {
            floors.push({ ...(await storageFloor(shape.rate, seconds)), required: await sqliteRequiredFloor(shape.rate, seconds), load: os.loadavg()[0]! });
            continue;
          }
          if (kind === 'pgfloor') {
            pgFloors.push({ ...(await postgresFloor(shape.rate, seconds)), load: os.loadavg()[0]! });
            continue;
          }
          const app = apps.get(kind);
          const server = app ? app.child : node;
          const channels =
            shape.channels === 1 ? undefined : app ? app.info.channels.slice(0, shape.channels) : Array.from({ length: shape.channels }, (_, k) => `$alerts:donation_${k + 1}`);
          const extra = app ? { secret: app.info.secret, user: app.info.user, channel: app.info.channel } : {};
          await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind: 'app', port: app ? app.port : nodePort, count: share(subscribers, i), channels, ...extra })));
          await waitCount(server, subscribers);
          await Promise.all(group.map((c) => callIpc(c, 'latency')));
          const cpu0 = await callIpc<NodeJS.CpuUsage>(server, 'cpu');
          await callIpc(server, 'paced', { rate: shape.rate, seconds, channels: shape.channels });
          await sleep(500);
          const cpu1 = await callIpc<NodeJS.CpuUsage>(server, 'cpu');
          const hists = await Promise.all(group.map((c) => callIpc<[number, number][]>(c, 'histogram')));
          const commits = app ? merged([await callIpc<[number, number][]>(server, 'commits')]) : null;
          const durable = app ? merged([await callIpc<[number, number][]>(server, 'durable')]) : null;
          const commitStatements = app ? merged([await callIpc<[number, number][]>(server, 'commitStatements')]) : null;
          runs[kind]!.push({ hist: merged(hists), commits, durable, commitStatements, cpuMs: (cpu1.user - cpu0.user + cpu1.system - cpu0.system) / 1000, load: os.loadavg()[0]! });
          await Promise.all(group.map((c) => callIpc(c, 'close', { kind: 'app' })));
          await waitCount(server, 0);
        }
      }
      console.log(`\n## Latency: ${shape.name} (${shape.channels} channel(s) × ${shape.perChannel} subscribers, ${shape.rate} messages/s, ${seconds} s, ${rounds} rotating rounds)`);
      console.log('round | path | deliveries (expected) | p50 ms | p99 ms | max ms | p50 ÷ node p50 | durable commit p50 / p99 ms | COMMIT statement p50 / p99 ms | createDonation p50 / p99 ms | server CPU ms | load (1 min)');
      for (let round = 0; round < rounds; round++) {
        const nodeP50 = percentile(runs.node![round]!.hist, 0.5);
        for (const kind of kinds) {
          if (kind === 'floor' || kind === 'pgfloor') continue;
          const { hist, commits, durable, commitStatements, cpuMs, load } = runs[kind]![round]!;
          const samples = hist.reduce((a, b) => a + b, 0);
          const p50 = percentile(hist, 0.5);
          const label = kind === 'node' ? 'node alone (publish → subscriber)' : `whole service, ${kind.replace('app-', '').replace('before-', 'before: ')}`;
          const commit = commits ? `${percentile(commits, 0.5)} / ${percentile(commits, 0.99)}` : '–';
          const durableAt = durable ? `${percentile(durable, 0.5)} / ${percentile(durable, 0.99)}` : '–';
          const statement = commitStatements ? `${percentile(commitStatements, 0.5)} / ${percentile(commitStatements, 0.99)}` : '–';
          console.log(
            `${round + 1} | ${label} | ${samples} (${shape.perChannel * shape.rate * seconds}) | ${p50} | ${percentile(hist, 0.99)} | ${percentile(hist, 1)} | ${(p50 / nodeP50).toFixed(2)} | ${durableAt} | ${statement} | ${commit} | ${cpuMs.toFixed(0)} | ${load.toFixed(1)}`,
          );
        }
      }
      if (floors.length > 0) {
        console.log(`\nSQLite floors in ${os.tmpdir()} (the data directories' file system): the storage flush (${DONATION_PAGES} WAL frames written over allocated bytes, then fsync), and the writes a donation must make (BEGIN IMMEDIATE, its row and its outbox event, COMMIT; lib.ts REQUIRED_DONATION_WRITE) on a database opened as the service opens it`);
        console.log(`round | flush paced at ${shape.rate}/s: p50 / p99 ms | flush back to back: p50 / p99 ms | required writes paced: p50 / p99 ms | node alone p50 ms | (node p50 + required p50) ÷ node p50: the least for this service's donation | load (1 min)`);
        floors.forEach((f, round) => {
          const nodeP50 = percentile(runs.node![round]!.hist, 0.5);
          const requiredP50 = percentile(f.required, 0.5);
          console.log(
            `${round + 1} | ${percentile(f.paced, 0.5)} / ${percentile(f.paced, 0.99)} | ${percentile(f.backToBack, 0.5)} / ${percentile(f.backToBack, 0.99)} | ${requiredP50} / ${percentile(f.required, 0.99)} | ${nodeP50} | ${((nodeP50 + requiredP50) / nodeP50).toFixed(2)} | ${f.load.toFixed(1)}`,
          );
        });
      }
      if (pgFloors.length > 0) {
        console.log(`\nPostgreSQL floor (the app servers' server), each paced at ${shape.rate}/s on one connection of this process: a one-row durable INSERT; the writes a donation must make (its row and its outbox event, the service's trigger and foreign key; lib.ts REQUIRED_DONATION_WRITE); \`select 1\``);
        console.log('round | INSERT p50 / p99 ms | required writes p50 / p99 ms | select 1 p50 / p99 ms | node alone p50 ms | (node p50 + INSERT p50) ÷ node p50: the least ratio for any commit before the publish | (node p50 + required p50) ÷ node p50: the least for this service\'s donation | load (1 min)');
        pgFloors.forEach((f, round) => {
          const nodeP50 = percentile(runs.node![round]!.hist, 0.5);
          const insertP50 = percentile(f.insert, 0.5);
          const requiredP50 = percentile(f.required, 0.5);
          console.log(
            `${round + 1} | ${insertP50} / ${percentile(f.insert, 0.99)} | ${requiredP50} / ${percentile(f.required, 0.99)} | ${percentile(f.roundTrip, 0.5)} / ${percentile(f.roundTrip, 0.99)} | ${nodeP50} | ${((nodeP50 + insertP50) / nodeP50).toFixed(2)} | ${((nodeP50 + requiredP50) / nodeP50).toFixed(2)} | ${f.load.toFixed(1)}`,
          );
        });
      }
    }
  } finally {
    // The app servers remove their data directories and PostgreSQL schemas, then exit.
    await Promise.all([...apps.values()].map((a) => callIpc(a.child, 'stop')));
  }
}

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
if (role === 'raw') void rawServer();
else if (role === 'node') void nodeServer();
else if (role === 'clients') void clients();
else if (role === 'app') void appServer();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
