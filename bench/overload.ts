/**
 * Overload bench (issue 9, item 8): HTTP latency while the real-time fan-out is overloaded.
 *
 *   node --import tsx bench/overload.ts [--before DIR] [--rounds 3] [--seconds 10] [--subscribers 2000]
 *     [--rate 50] [--probes 50] [--client-procs 2] [--dialect sqlite|postgres]
 *
 * One server process per side, each the whole app as `openalerts serve` builds it (SQLite with
 * durable commits, or a fresh schema of BENCH_DATABASE_URL with `--dialect postgres`; memory broker): `after` is this checkout, `before` the checkout in DIR (another
 * commit's tree with node_modules, see bench/README.md). Each server gets `--subscribers` modern
 * protocol subscribers on its streamer's donation channel (held by `--client-procs` processes), all
 * connected for the whole run. Then, in alternating rounds (rotating order), one side at a time:
 *
 * - the server creates `--rate` donations a second for `--seconds` (createDonation: commit, outbox
 *   relay, fan-out to every subscriber; each donation's message carries its creation time);
 * - this process sends `--probes` requests a second to `/healthz` and to `GET /api/v1/alerts/donations`
 *   (bearer token, the same streamer's page) on a fixed schedule, whatever the answers' delay (open
 *   loop: a stalled server collects every late request, as real clients would);
 * - the clients time every delivery (creation → received).
 *
 * A third side, `unsubscribed`, is this checkout with no subscribers: the same donations and probes
 * without any fan-out, i.e. what the machine itself gives HTTP at that moment. The server reports
 * its event-loop delay (p99, max) and CPU share during each round.
 *
 * A round ends when every probe is answered and every delivery arrived (or 60 s passed), so a side
 * still working off its backlog never overlaps the other side's round. Reported per round and as
 * medians: HTTP p50/p99/max per endpoint, delivery p50/p99 and the share delivered, the ratio
 * after/before, and the load average before and after.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import WebSocket from 'ws';
import { BENCH_PG_URL, callIpc, dialectArg, machine, median, numberArg as arg, serveIpc } from './lib.js';

// CLOCK_MONOTONIC: one clock for the server and the client processes (bench/realtime.ts says why
// not performance.timeOrigin + now()).
const now = (): number => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');


function spawn(...args: string[]): ChildProcess {
  return fork(fileURLToPath(import.meta.url), args, { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
}

function stringArg(name: string): string | undefined {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
    if (args[i] === `--${name}`) return args[i + 1];
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------------
// Server: the app of the checkout at --root.

async function server(root: string): Promise<void> {
  const src = (file: string): string => pathToFileURL(path.join(root, 'src', file)).href;
  const { buildApp } = await import(src('app.js'));
  const { envToConfig } = await import(src('config/config.js'));
  const { createAccount } = await import(src('modules/accounts/accounts.service.js'));
  const { createApp } = await import(src('modules/apps/apps.service.js'));
  const { createDonation } = await import(src('modules/donations/donations.service.js'));
  const { donationChannel } = await import(src('modules/outbox/channels.js'));
  const fs = await import('node:fs');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-overload-'));
  const env: Record<string, string> = { DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000', PUBLIC_URL: 'https://alerts.example.com' };
  if (dialectArg() === 'postgres') {
    // A fresh schema per server process, left behind for inspection (drop bench_overload_* by hand).
    const { default: pg } = await import('pg');
    const schema = `bench_overload_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: BENCH_PG_URL });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    await admin.end();
    const url = new URL(BENCH_PG_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    env.DATABASE_URL = url.toString();
  }
  const app = await buildApp(envToConfig(env), { logger: false });
  const db = app.ctx.db;
  const user = await createAccount(db, { email: 'overload@example.test', password: 'a long passphrase', name: 'Overload' });
  const { app: client } = await createApp(db, app.ctx.secrets.encryptionKey, { ownerId: user.id, name: 'Bench', redirectUris: ['https://bench.example.com/cb'] });
  const scopes = ['oauth-donation-index'];
  const grantId = await app.ctx.tokens.createGrant(db, { clientId: client.client_id, userId: user.id, scopes, kind: 'authorization_code' });
  const { accessToken } = await app.ctx.tokens.issue(db, { grantId, clientId: client.client_id, userId: user.id, scopes }, false);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  serveIpc({
    info: () => ({ port, secret: app.ctx.secrets.realtimeTokenSecret, channel: donationChannel(user.id), user: String(user.id), accessToken }),
    subscriptions: () => app.ctx.realtime.node.stats().subscriptions,
    /**
     * Donations on a fixed schedule, each started on time whatever the earlier ones' commits take
     * (open loop: donors do not wait for each other); meanwhile the event loop's delay and the
     * process's CPU time are recorded.
     */
    async load(m) {
      const rate = m.rate as number;
      const total = Math.round(rate * (m.seconds as number));
      const delay = monitorEventLoopDelay({ resolution: 5 });
      const cpu0 = process.cpuUsage();
      delay.enable();
      const start = now();
      let late = 0;
      let created = 0;
      let failed = 0;
      const writes: Promise<unknown>[] = [];
      for (let i = 0; i < total; i++) {
        const wait = start + (i * 1000) / rate - now();
        if (wait > 0) await sleep(wait);
        else if (wait < -50) late++;
        writes.push(
          createDonation(db, { userId: user.id, amount: '5', currency: 'USD', username: 'Bench donor', message: `ts:${now()}` }).then(
            () => created++,
            () => failed++, // a database pool that timed out (503 to a real donor)
          ),
        );
      }
      await Promise.all(writes);
      delay.disable();
      const cpu = process.cpuUsage(cpu0);
      return { created, failed, late, seconds: (now() - start) / 1000, loopP99: delay.percentile(99) / 1e6, loopMax: delay.max / 1e6, cpuMs: (cpu.user + cpu.system) / 1000 };
    },
  });
}

// ---------------------------------------------------------------------------------------------------
// Clients: hold subscribers of both sides, time deliveries of the side under load.

async function clients(): Promise<void> {
  const { signChannelToken, signConnectionToken } = await import('../src/security/jwt.js');
  const socks: Record<string, WebSocket[]> = {};
  const BINS = 600_000; // 0.1 ms bins up to 60 s
  const hist: Record<string, Uint32Array> = {};
  const received: Record<string, number> = {};

  async function open(kind: string, info: { port: number; secret: string; channel: string; user: string }): Promise<WebSocket> {
    const ws = new WebSocket(`ws://127.0.0.1:${info.port}/connection/websocket`, { perMessageDeflate: false });
    await new Promise((r, j) => ws.once('open', r).once('error', j));
    const replies: string[] = [];
    let wake: (() => void) | null = null;
    const next = async (): Promise<string> => {
      while (replies.length === 0) await new Promise<void>((r) => (wake = r));
      return replies.shift()!;
    };
    ws.on('message', (data) => {
      const text = data.toString();
      // The server's ping: answered, or it closes the connection (3012).
      if (text === '{}') {
        ws.send('{}');
        return;
      }
      // Publications that went out together share a message, one per line.
      let at = text.indexOf('"message":"ts:');
      if (at < 0) {
        replies.push(text);
        wake?.();
        return;
      }
      const t = now();
      for (; at >= 0; at = text.indexOf('"message":"ts:', at + 14)) {
        received[kind]!++;
        const ts = parseFloat(text.slice(at + 14));
        hist[kind]![Math.min(BINS, Math.max(0, Math.round((t - ts) * 10)))]!++;
      }
    });
    ws.send(JSON.stringify({ id: 1, connect: { token: await signConnectionToken(info.secret, info.user) } }));
    await next();
    ws.send(JSON.stringify({ id: 2, subscribe: { channel: info.channel, token: await signChannelToken(info.secret, { channel: info.channel, sub: info.user }) } }));
    const reply = JSON.parse(await next());
    if (!reply.subscribe) throw new Error(`subscribe failed: ${JSON.stringify(reply)}`);
    return ws;
  }

  serveIpc({
    async connect(m) {
      const kind = m.kind as string;
      socks[kind] ??= [];
      hist[kind] = new Uint32Array(BINS + 1);
      received[kind] = 0;
      for (let done = 0; done < (m.count as number); done += 100) {
        const batch = Math.min(100, (m.count as number) - done);
        socks[kind]!.push(...(await Promise.all(Array.from({ length: batch }, () => open(kind, m.info as any)))));
      }
      return socks[kind]!.length;
    },
    reset(m) {
      hist[m.kind as string] = new Uint32Array(BINS + 1);
      received[m.kind as string] = 0;
      return true;
    },
    received: (m) => received[m.kind as string],
    histogram: (m) => Array.from(hist[m.kind as string]!),
  });
}

// ---------------------------------------------------------------------------------------------------
// Orchestrator.

interface Probe {
  latencies: number[];
  failures: number;
}

/** Sends `rate` GETs a second to `url` on a fixed schedule for `seconds`; resolves when all are answered. */
async function probe(url: string, headers: Record<string, string>, rate: number, seconds: number, agent: http.Agent): Promise<Probe> {
  const out: Probe = { latencies: [], failures: 0 };
  const total = Math.round(rate * seconds);
  const start = now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / rate - now();
    if (wait > 0) await sleep(wait);
    const sent = now();
    pending.push(
      new Promise<void>((resolve) => {
        const req = http.get(url, { agent, headers, timeout: 120_000 }, (res) => {
          res.resume();
          res.on('end', () => {
            if (res.statusCode === 200) out.latencies.push(now() - sent);
            else out.failures++;
            resolve();
          });
        });
        req.on('error', () => {
          out.failures++;
          resolve();
        });
      }),
    );
  }
  await Promise.all(pending);
  return out;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)]!;
}

function histPercentile(hist: number[], p: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  let acc = 0;
  for (let i = 0; i < hist.length; i++) {
    acc += hist[i]!;
    if (acc >= total * p) return i / 10;
  }
  return NaN;
}

const load = (): string => os.loadavg().map((l) => l.toFixed(1)).join(' ');
const ms = (x: number): string => (Number.isFinite(x) ? (x >= 100 ? x.toFixed(0) : x.toFixed(1)) : '—');

async function main(): Promise<void> {
  const before = stringArg('before');
  const rounds = arg('rounds', 3);
  const seconds = arg('seconds', 10);
  const subscribers = arg('subscribers', 2000);
  const rate = arg('rate', 50);
  const probes = arg('probes', 50);
  const procs = arg('client-procs', 2);
  // `unsubscribed`: this checkout with no subscribers — what the machine gives HTTP under the same
  // donations without any fan-out, the floor both other sides are measured against.
  const sides = before ? (['before', 'after', 'unsubscribed'] as const) : (['after', 'unsubscribed'] as const);
  const roots: Record<string, string> = { after: HERE, unsubscribed: HERE, before: before ? path.resolve(before) : '' };
  const subscribersOf = (side: string): number => (side === 'unsubscribed' ? 0 : subscribers);

  console.log(`# overload bench: ${machine()}`);
  console.log(`# ${dialectArg()}, ${subscribers} subscribers per side (none on 'unsubscribed'), ${rate} donations/s for ${seconds} s, ${probes} probes/s per endpoint, ${rounds} rounds; sides: ${sides.map((s) => `${s}=${roots[s]}`).join(', ')}`);
  const servers: Record<string, ChildProcess> = {};
  const infos: Record<string, any> = {};
  for (const side of sides) {
    servers[side] = spawn('--role=server', `--root=${roots[side]}`, `--dialect=${dialectArg()}`);
    infos[side] = await callIpc(servers[side]!, 'info');
  }
  const group = Array.from({ length: procs }, () => spawn('--role=clients'));
  const share = (n: number, i: number): number => Math.floor(n / procs) + (i < n % procs ? 1 : 0);
  for (const side of sides) {
    await Promise.all(group.map((c, i) => callIpc(c, 'connect', { kind: side, count: share(subscribersOf(side), i), info: infos[side] })));
    const subs = await callIpc<number>(servers[side]!, 'subscriptions');
    if (subs !== subscribersOf(side)) throw new Error(`${side}: ${subs} subscriptions, expected ${subscribersOf(side)}`);
  }
  console.log(`# connected; load average ${load()}`);

  type Round = { side: string; healthz: Probe; api: Probe; deliveries: number; expected: number; hist: number[]; late: number; loopP99: number; cpu: number; loadStart: string; loadEnd: string };
  const results: Round[] = [];
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  for (let round = 0; round < rounds; round++) {
    const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
    for (const side of order) {
      const info = infos[side];
      const base = `http://127.0.0.1:${info.port}`;
      await Promise.all(group.map((c) => callIpc(c, 'reset', { kind: side })));
      const loadStart = load();
      const [done, healthz, api] = await Promise.all([
        callIpc<{ created: number; failed: number; late: number; loopP99: number; loopMax: number; cpuMs: number; seconds: number }>(servers[side]!, 'load', { rate, seconds }),
        probe(`${base}/healthz`, {}, probes, seconds, agent),
        probe(`${base}/api/v1/alerts/donations?page=1`, { authorization: `Bearer ${info.accessToken}` }, probes, seconds, agent),
      ]);
      const expected = done.created * subscribersOf(side);
      const deadline = Date.now() + 60_000;
      let deliveries = 0;
      while (Date.now() < deadline) {
        deliveries = (await Promise.all(group.map((c) => callIpc<number>(c, 'received', { kind: side })))).reduce((a, b) => a + b, 0);
        if (deliveries >= expected) break;
        await sleep(200);
      }
      const hists = await Promise.all(group.map((c) => callIpc<number[]>(c, 'histogram', { kind: side })));
      const hist = hists[0]!.map((_, i) => hists.reduce((a, h) => a + h[i]!, 0));
      const r: Round = { side, healthz, api, deliveries, expected, hist, late: done.late, loopP99: done.loopP99, cpu: done.cpuMs / 1000 / done.seconds, loadStart, loadEnd: load() };
      results.push(r);
      healthz.latencies.sort((a, b) => a - b);
      api.latencies.sort((a, b) => a - b);
      console.log(
        `round ${round + 1} ${side}: /healthz p50 ${ms(percentile(healthz.latencies, 0.5))} p99 ${ms(percentile(healthz.latencies, 0.99))} max ${ms(percentile(healthz.latencies, 1))} ms` +
          ` | API p50 ${ms(percentile(api.latencies, 0.5))} p99 ${ms(percentile(api.latencies, 0.99))} max ${ms(percentile(api.latencies, 1))} ms (failed ${healthz.failures + api.failures})` +
          ` | delivery p50 ${ms(histPercentile(hist, 0.5))} p99 ${ms(histPercentile(hist, 0.99))} ms, ${deliveries}/${expected} delivered` +
          ` | event-loop delay p99 ${ms(done.loopP99)} max ${ms(done.loopMax)} ms | server CPU ${(100 * r.cpu).toFixed(0)} % | donations started > 50 ms late ${r.late}, failed ${done.failed} | load ${loadStart} → ${r.loadEnd}`,
      );
      await sleep(1000);
    }
  }

  console.log('\n## Medians over rounds (spread: min–max of the rounds)');
  console.log('side | /healthz p99 ms | API p99 ms | delivery p50 ms | delivery p99 ms | delivered | event-loop delay p99 ms | server CPU');
  const stat = (side: string, f: (r: Round) => number): { med: number; lo: number; hi: number } => {
    const xs = results.filter((r) => r.side === side).map(f);
    return { med: median(xs), lo: Math.min(...xs), hi: Math.max(...xs) };
  };
  const fmt = (s: { med: number; lo: number; hi: number }): string => `${ms(s.med)} (${ms(s.lo)}–${ms(s.hi)})`;
  const row: Record<string, Record<string, { med: number; lo: number; hi: number }>> = {};
  for (const side of sides) {
    row[side] = {
      healthz: stat(side, (r) => percentile(r.healthz.latencies, 0.99)),
      api: stat(side, (r) => percentile(r.api.latencies, 0.99)),
      d50: stat(side, (r) => histPercentile(r.hist, 0.5)),
      d99: stat(side, (r) => histPercentile(r.hist, 0.99)),
      share: stat(side, (r) => (r.expected === 0 ? 100 : (100 * r.deliveries) / r.expected)),
      loop: stat(side, (r) => r.loopP99),
      cpu: stat(side, (r) => 100 * r.cpu),
    };
    const x = row[side]!;
    console.log(`${side} | ${fmt(x.healthz)} | ${fmt(x.api)} | ${fmt(x.d50)} | ${fmt(x.d99)} | ${x.share.med.toFixed(1)} % | ${fmt(x.loop)} | ${x.cpu.med.toFixed(0)} %`);
  }
  if (before) {
    const ratio = (k: string): string => (row.after![k]!.med / row.before![k]!.med).toFixed(3);
    console.log(`ratio after/before (medians): /healthz p99 ${ratio('healthz')}, API p99 ${ratio('api')}, delivery p99 ${ratio('d99')}`);
  }
  console.log(`# load average at the end ${load()}`);
  for (const c of [...group, ...Object.values(servers)]) c.kill();
  process.exit(0);
}

const role = process.argv.find((a) => a.startsWith('--role='))?.slice(7);
if (role === 'server') void server(process.argv.find((a) => a.startsWith('--root='))!.slice(7));
else if (role === 'clients') void clients();
else
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
