/**
 * Workers bench (issue 16, "Every core"): real-time fan-out deliveries per second of
 * `openalerts serve --workers 2` against `openalerts serve` (one process), in the same run.
 *
 *   node --import tsx bench/workers.ts [--rounds 5] [--subscribers 1000] [--burst 200]
 *
 * Both servers run side by side (SQLite, no Redis, each its own DATA_DIR), each with `subscribers`
 * WebSocket clients on one streamer's `$alerts:donation_<id>` channel. A round writes `burst`
 * donations in one transaction (this process, as the CLI would) and times the first publication
 * reaching any subscriber to the last delivery reaching all: deliveries/s = burst × subscribers /
 * that time. Rounds alternate between the sides (the order rotates). The clients are raw sockets
 * that only count publications in the bytes they receive (no WebSocket parsing), so the load
 * generator costs little next to the servers. The servers' CPU time per round (utime + stime of the
 * primary and its workers, /proc) is reported too, and the load generator's own (it shares the
 * machine's cores with the servers): on a shared machine they tell what the wall clock cannot.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadSecrets } from '../src/config/secrets.js';
import { createDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createAccount } from '../src/modules/accounts/accounts.service.js';
import { createDonation } from '../src/modules/donations/donations.service.js';
import { signChannelToken, signConnectionToken } from '../src/security/jwt.js';
import { alternateRounds, machine, median, numberArg } from './lib.js';

const ROUNDS = numberArg('rounds', 5);
const SUBSCRIBERS = numberArg('subscribers', 1000);
const BURST = numberArg('burst', 200);
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const MARK = Buffer.from('"pub":');

interface Side {
  name: string;
  child: ChildProcess;
  port: number;
  dataDir: string;
  /** Publications counted by all its subscribers; when the round's first and latest arrived. */
  delivered: { count: number; firstAt: number; lastAt: number };
  sockets: net.Socket[];
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

async function startSide(name: string, workers: number): Promise<Side> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `oa-bench-workers-${name}-`));
  const port = await freePort();
  const args = ['--import', 'tsx', path.join(ROOT, 'src/cli.ts'), 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn', HISTORY_SIZE: '1000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited:\n${output}`);
    if (output.includes('OpenAlerts is running') && (workers === 1 || output.includes('worker processes'))) break;
    if (Date.now() > deadline) throw new Error(`${name} did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { name, child, port, dataDir, delivered: { count: 0, firstAt: 0, lastAt: 0 }, sockets: [] };
}

/** A masked client text frame (RFC 6455 §5.2). */
function frame(text: string): Buffer {
  const payload = Buffer.from(text);
  const mask = crypto.randomBytes(4);
  const header = payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 255]);
  const masked = Buffer.alloc(payload.length);
  for (let i = 0; i < payload.length; i++) masked[i] = payload[i]! ^ mask[i % 4]!;
  return Buffer.concat([header, mask, masked]);
}

/** A subscriber that connects and subscribes, then only counts "pub": marks in what it receives. */
function subscribe(side: Side, connectToken: string, channel: string, channelToken: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(side.port, '127.0.0.1');
    let upgraded = false;
    let tail: Buffer = Buffer.alloc(0);
    socket.setNoDelay(true);
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(
        `GET /connection/websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
    socket.on('data', (chunk: Buffer) => {
      if (!upgraded) {
        const text = chunk.toString('latin1');
        if (!text.startsWith('HTTP/1.1 101')) return reject(new Error(`upgrade refused: ${text.slice(0, 80)}`));
        upgraded = true;
        socket.write(frame(JSON.stringify({ id: 1, connect: { token: connectToken } })));
        socket.write(frame(JSON.stringify({ id: 2, subscribe: { channel, token: channelToken } })));
        return;
      }
      if (!side.sockets.includes(socket) && chunk.includes('"id":2')) {
        side.sockets.push(socket);
        resolve();
      }
      // Count marks, including one split across two chunks.
      const buf = tail.length ? Buffer.concat([tail, chunk]) : chunk;
      let at = buf.indexOf(MARK);
      if (at !== -1) {
        const d = side.delivered;
        d.lastAt = performance.now();
        if (d.firstAt === 0) d.firstAt = d.lastAt;
      }
      while (at !== -1) {
        side.delivered.count++;
        at = buf.indexOf(MARK, at + MARK.length);
      }
      tail = buf.subarray(Math.max(0, buf.length - MARK.length + 1));
    });
  });
}

/** CPU time (ms) of a process and its children (the workers), from /proc. */
function cpuMs(pid: number): number {
  const pids = [pid];
  try {
    pids.push(
      ...execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' })
        .split('\n')
        .map((l) => Number(l.trim()))
        .filter((p) => p > 0),
    );
  } catch {
    // no children
  }
  const tick = 1000 / 100; // USER_HZ
  let ms = 0;
  for (const p of pids) {
    try {
      const fields = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
      ms += (Number(fields[11]) + Number(fields[12])) * tick;
    } catch {
      // exited
    }
  }
  return ms;
}

async function main(): Promise<void> {
  const sides = { one: await startSide('one', 1), two: await startSide('two', 2) };
  const streams: Record<string, { userId: number; db: ReturnType<typeof createDatabase> }> = {};
  for (const side of Object.values(sides)) {
    const database = createDatabase({ dialect: 'sqlite', file: path.join(side.dataDir, 'openalerts.sqlite') });
    await migrateToLatest(database.db);
    const user = await createAccount(database.db, { email: `bench-${side.name}@example.test`, password: 'correct horse battery staple', name: `Bench ${side.name}` });
    const userId = user.id;
    const secret = loadSecrets({ dataDir: side.dataDir, secretKey: null, realtimeTokenSecret: null }).realtimeTokenSecret;
    const channel = `$alerts:donation_${userId}`;
    const connectToken = await signConnectionToken(secret, userId, 3600);
    const channelToken = await signChannelToken(secret, { channel, sub: String(userId) });
    for (let i = 0; i < SUBSCRIBERS; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, SUBSCRIBERS - i) }, () => subscribe(side, connectToken, channel, channelToken)));
    }
    streams[side.name] = { userId, db: database };
  }
  console.error(`${SUBSCRIBERS} subscribers on each side; ${machine()}`);

  const round = async (name: 'one' | 'two', r: number) => {
    const side = sides[name];
    const { userId, db } = streams[name]!;
    const d = side.delivered;
    const target = d.count + BURST * SUBSCRIBERS;
    d.firstAt = 0;
    const cpuBefore = cpuMs(side.child.pid!);
    const clientBefore = process.cpuUsage();
    const load = os.loadavg()[0]!;
    await db.db.transaction().execute(async (tx) => {
      for (let i = 0; i < BURST; i++) await createDonation(tx, { userId, amount: '1', currency: 'EUR', username: `r${r}d${i}` });
    });
    const deadline = Date.now() + 120_000;
    while (d.count < target) {
      if (Date.now() > deadline) throw new Error(`${name}: ${target - d.count} deliveries missing`);
      await new Promise((res) => setTimeout(res, 5));
    }
    // From the first publication any subscriber received to the last one all of them had.
    const seconds = (d.lastAt - d.firstAt) / 1000;
    const cpu = cpuMs(side.child.pid!) - cpuBefore;
    const clientUsage = process.cpuUsage(clientBefore);
    const clientCpu = (clientUsage.user + clientUsage.system) / 1000;
    const result = { deliveriesPerSecond: Math.round((BURST * SUBSCRIBERS) / seconds), seconds: +seconds.toFixed(3), serverCpuMsPer1kDeliveries: +((cpu / (BURST * SUBSCRIBERS)) * 1000).toFixed(2), serverCpuMs: Math.round(cpu), clientCpuMs: Math.round(clientCpu), load1: +load.toFixed(1) };
    console.error(`round ${r + 1} ${name}: ${JSON.stringify(result)}`);
    await new Promise((res) => setTimeout(res, 300));
    return result;
  };

  try {
    // Warm-up: one burst each (JIT, socket buffers).
    await round('one', -1);
    await round('two', -1);
    const results = await alternateRounds(ROUNDS, ['one', 'two'] as const, round, { rotate: true });
    const one = results.one.map((x) => x.deliveriesPerSecond);
    const two = results.two.map((x) => x.deliveriesPerSecond);
    const ratios = two.map((t, i) => +(t / one[i]!).toFixed(2));
    console.log(
      JSON.stringify(
        {
          benchmark: 'fan-out deliveries/s: serve --workers 2 vs serve',
          machine: machine(),
          subscribers: SUBSCRIBERS,
          burst: BURST,
          one: { median: median(one), rounds: one, cpuMsPer1k: results.one.map((x) => x.serverCpuMsPer1kDeliveries), clientCpuMs: results.one.map((x) => x.clientCpuMs) },
          two: { median: median(two), rounds: two, cpuMsPer1k: results.two.map((x) => x.serverCpuMsPer1kDeliveries), clientCpuMs: results.two.map((x) => x.clientCpuMs) },
          ratioOfMedians: +(median(two) / median(one)).toFixed(2),
          ratioPerRound: ratios,
          load1PerRound: results.one.map((x, i) => [x.load1, results.two[i]!.load1]),
        },
        null,
        2,
      ),
    );
  } finally {
    for (const side of Object.values(sides)) {
      for (const s of side.sockets) s.destroy();
      side.child.kill('SIGTERM');
      await new Promise((r) => side.child.once('exit', r));
      fs.rmSync(side.dataDir, { recursive: true, force: true });
    }
    for (const s of Object.values(streams)) await s.db.close();
  }
}

await main();
