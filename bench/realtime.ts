/**
 * Real-time load script: `npx tsx bench/realtime.ts [maxSubscribers] [--rounds=2] [--messages=20]
 * [--latency-seconds=5] [--client-procs=2]`.
 *
 * 1. Fan-out: N subscribers (1k/5k/10k, capped by maxSubscribers) receive bursts of publications,
 *    alternately from a raw `ws` broadcast server (JSON.stringify once, ws.send(string) to every socket)
 *    and from a RealtimeNode (memory broker, legacy protocol, `node.publish`). Both send the same bytes
 *    per frame. Reported: deliveries/s measured at the receivers, server CPU per delivery, and ratios.
 * 2. Latency: 1k subscribers, 100 messages/s, p50/p99 across all deliveries, alternating two paths:
 *    the node alone (publish → subscriber) and the whole service (`buildApp` on SQLite: donation
 *    created → commit → outbox relay → node → subscriber).
 * 3. Memory: RSS (and heap) per idle connected+subscribed connection, fresh server processes.
 *
 * Each server and each client group runs in its own process (a file-descriptor limit applies per
 * process); timestamps use performance.timeOrigin + now(), comparable across local processes.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket, { WebSocketServer } from 'ws';
import { MemoryBroker } from '../src/realtime/broker-memory.js';
import { RealtimeNode } from '../src/realtime/node.js';
import { signChannelToken, signConnectionToken } from '../src/security/jwt.js';
import { alternateRounds, callIpc, median, numberArg as arg, serveIpc } from './lib.js';

const SECRET = 'bench-secret';
const CHANNEL = '$alerts:donation_1';
const now = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

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
    if (wait > 0) await sleep(wait);
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
    mem: () => (gc(), gc(), process.memoryUsage()),
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
    mem: () => (gc(), gc(), process.memoryUsage()),
    cpu: () => process.cpuUsage(),
    async burst(m) {
      for (let i = 0; i < (m.messages as number); i++) {
        await node.publish(CHANNEL, payload(++seq));
        await new Promise(setImmediate);
      }
    },
    paced: (m) => paced(m.rate as number, m.seconds as number, () => node.publish(CHANNEL, payload(++seq))),
  });
}

/**
 * The whole service as `openalerts serve` runs it (SQLite, durable commits): a donation is written
 * with its outbox row, the relay publishes it after commit, the node fans it out. The donation's
 * message carries the time it was created, so clients time the full path.
 */
async function appServer(): Promise<void> {
  const { benchApp } = await import('./lib.js');
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createDonation } = await import('../src/modules/donations/donations.service.js');
  const { donationChannel } = await import('../src/modules/outbox/channels.js');
  const { app } = await benchApp();
  const db = app.ctx.db;
  const user = await createAccount(db, { email: 'bench@example.test', password: 'a long passphrase', name: 'Bench' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as AddressInfo).port;
  serveIpc({
    port: () => port,
    // Real-time tokens name a real, active account (the service checks it at connect): the streamer's.
    info: () => ({ secret: app.ctx.secrets.realtimeTokenSecret, channel: donationChannel(user.id), user: String(user.id) }),
    count: () => app.ctx.realtime.node.stats().subscriptions,
    paced: (m) =>
      paced(m.rate as number, m.seconds as number, () =>
        createDonation(db, { userId: user.id, amount: '5', currency: 'USD', username: 'Bench donor', message: `ts:${now()}` }),
      ),
  });
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
  // Latency histogram: 0.1 ms bins up to 2 s.
  const BINS = 20_000;
  let hist = new Uint32Array(BINS + 1);

  function onFrame(data: WebSocket.RawData): void {
    // Publications that went out together share one message, one per line.
    if (mode === 'latency') {
      // The payload ends with "ts":<publish time>: read it without parsing the whole frame.
      const t = now();
      for (const text of data.toString().split('\n')) {
        const at = text.lastIndexOf('ts":');
        const ts = at >= 0 ? parseFloat(text.slice(at + 4)) : parseFloat(text.slice(text.indexOf('"message":"ts:') + 14));
        hist[Math.min(BINS, Math.max(0, Math.round((t - ts) * 10)))]++;
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
      for (let done = 0; done < (m.count as number); ) {
        const batch = Math.min(250, (m.count as number) - done);
        const opened = await Promise.all(
          Array.from({ length: batch }, (_, i) =>
            kind === 'raw' ? openRaw(url) : openNode(url, (m.user as string) ?? String(done + i), (m.secret as string) ?? SECRET, (m.channel as string) ?? CHANNEL),
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
      hist = new Uint32Array(BINS + 1);
      return true;
    },
    histogram: () => Array.from(hist),
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

function percentile(hist: number[], p: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i]!;
    if (acc >= total * p) return i / 10;
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

  const raw = spawn('raw');
  const node = spawn('node');
  const group = Array.from({ length: procs }, () => spawn('clients'));
  const ports = { raw: await callIpc<number>(raw, 'port'), node: await callIpc<number>(node, 'port') };
  const servers = { raw, node } as const;
  const share = (n: number, i: number): number => Math.floor(n / procs) + (i < n % procs ? 1 : 0);

  console.log(`# realtime bench: node ${process.version}, ${(await import('node:os')).cpus().length} CPUs, ${procs} client processes`);
  console.log(`\n## Fan-out (${messages} publications per burst, ${rounds} rounds, alternating raw/node)`);
  console.log('subscribers | raw deliveries/s | node deliveries/s | ratio | raw CPU µs/delivery | node CPU µs/delivery | CPU ratio (raw/node)');
  for (const n of sizes) {
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

  // Latency of the node alone (publish → subscriber) and of the whole service (donation created →
  // subscriber: SQLite commit, outbox relay, node), in alternating rounds.
  const app = spawn('app');
  const appPort = await callIpc<number>(app, 'port');
  const appInfo = await callIpc<{ secret: string; channel: string }>(app, 'info');
  const latencyRuns: Record<'node' | 'app', number[][]> = { node: [], app: [] };
  for (let round = 0; round < rounds; round++) {
    for (const kind of ['node', 'app'] as const) {
      const server = kind === 'node' ? node : app;
      const extra = kind === 'app' ? appInfo : {};
      await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind, port: kind === 'node' ? ports.node : appPort, count: share(latencySubs, i), ...extra })));
      await waitCount(server, latencySubs);
      await Promise.all(group.map((c) => callIpc(c, 'latency')));
      await callIpc(server, 'paced', { rate: 100, seconds: latencySeconds });
      await sleep(500);
      const hists = await Promise.all(group.map((c) => callIpc<number[]>(c, 'histogram')));
      latencyRuns[kind].push(hists[0]!.map((_, i) => hists.reduce((a, h) => a + h[i]!, 0)));
      await Promise.all(group.map((c) => callIpc(c, 'close', { kind })));
      await waitCount(server, 0);
    }
  }
  console.log(`\n## Latency (${latencySubs} subscribers, 100 messages/s, ${latencySeconds} s, ${rounds} alternating rounds)`);
  for (const kind of ['node', 'app'] as const) {
    const label = kind === 'node' ? 'publish → subscriber (node alone)' : 'donation created → subscriber (whole service)';
    for (const merged of latencyRuns[kind]) {
      const samples = merged.reduce((a, b) => a + b, 0);
      console.log(`${label}: deliveries ${samples} (expected ${latencySubs * 100 * latencySeconds}); p50 ${percentile(merged, 0.5)} ms; p99 ${percentile(merged, 0.99)} ms; max ${percentile(merged, 1)} ms`);
    }
  }
  app.kill();
  raw.kill();
  node.kill();

  const idle = max;
  console.log(`\n## Memory (${idle} idle connections, fresh server process each, after GC)`);
  for (const kind of ['node', 'raw'] as const) {
    const server = spawn(kind);
    const port = await callIpc<number>(server, 'port');
    // Warm-up: one-time costs (JIT, crypto thread pool, buffers) are not per-connection costs.
    const warm = Math.min(500, idle);
    await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind, port, count: share(warm, i) })));
    await waitCount(server, warm);
    await Promise.all(group.map((c) => callIpc(c, 'close', { kind })));
    await waitCount(server, 0);
    await sleep(300);
    const before = await callIpc<NodeJS.MemoryUsage>(server, 'mem');
    await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind, port, count: share(idle, i) })));
    await waitCount(server, idle);
    await sleep(500);
    const after = await callIpc<NodeJS.MemoryUsage>(server, 'mem');
    const per = (k: 'rss' | 'heapUsed'): string => ((after[k] - before[k]) / idle / 1024).toFixed(2);
    console.log(`${kind === 'node' ? 'RealtimeNode (connected + subscribed)' : 'raw ws (open)'}: RSS ${per('rss')} KiB/conn, heap ${per('heapUsed')} KiB/conn`);
    await Promise.all(group.map((c) => callIpc(c, 'close', { kind })));
    server.kill();
  }
  for (const c of group) c.kill();
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
