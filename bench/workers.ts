/**
 * Workers bench (issue 16, "Every core"): sustained real-time fan-out capacity — deliveries per
 * second with the servers as the bottleneck — of `openalerts serve --workers 2` against
 * `openalerts serve` (one process), in the same run.
 *
 *   node --import tsx bench/workers.ts [--rounds 5] [--seconds 4] [--channels 4] [--per-channel 250]
 *                                      [--window-seconds 1] [--read-ms 200] [--profile DIR]
 *
 * Both servers run side by side (SQLite, no Redis, each its own DATA_DIR), each with `channels`
 * streamers and `per-channel` WebSocket subscribers on each streamer's `$alerts:donation_<id>`.
 * A round keeps the server busy for `seconds` (after one second of ramp): this process commits
 * donations' outbox events (a real donation's payload, numbered) to the streamers in turn (so consecutive publications are on different channels and
 * never coalesce into one frame), keeping `window-seconds` of the server's own recent delivery rate
 * committed but not yet at every subscriber — a closed loop: the server always has work queued
 * (more than a relay poll's and a read interval's worth), and its backlog stays bounded.
 * Deliveries/s is what the subscribers received in the measured seconds. Then the round drains
 * and checks that every subscriber got every publication. Sides alternate, the order rotating.
 *
 * The load generator must cost little next to the server: the subscribers are raw sockets read
 * with one shared buffer (`onread`) and paused after each read; a timer resumes them every
 * `read-ms`, so one read carries every frame that arrived meanwhile, and all they do with it is
 * count `"pub":` marks. Each round reports the servers' CPU (utime + stime of the primary and its
 * workers, /proc) and the load generator's, per 1,000 deliveries, and the load average: on a
 * shared machine CPU time tells what the wall clock cannot.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { sql } from 'kysely';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadSecrets } from '../src/config/secrets.js';
import { createDatabase, type Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createAccount } from '../src/modules/accounts/accounts.service.js';
import { createDonation } from '../src/modules/donations/donations.service.js';
import { enqueueEvent, outboxBacklog } from '../src/modules/outbox/outbox.repository.js';
import { signChannelToken, signConnectionToken } from '../src/security/jwt.js';
import { alternateRounds, machine, median, numberArg } from './lib.js';

const ROUNDS = numberArg('rounds', 5);
const SECONDS = numberArg('seconds', 4);
const CHANNELS = numberArg('channels', 4);
const PER_CHANNEL = numberArg('per-channel', 250);
const WINDOW_SECONDS = numberArg('window-seconds', 1);
const READ_MS = numberArg('read-ms', 200);
/** Publications in flight at the start of a round, before the server's rate is known. */
const MIN_WINDOW = 100;
const RAMP_MS = 1000;
/** How often the load generator tops the window up (one transaction each time). */
const PUMP_MS = 20;
/** At most this many donations per transaction of the load generator. */
const MAX_COMMIT = 1000;
const PROFILE_DIR = stringArg('profile');
const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function stringArg(name: string): string | null {
  const args = process.argv.slice(2);
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith(`--${name}=`)) return args[i]!.slice(name.length + 3);
    if (args[i] === `--${name}`) return args[i + 1] ?? null;
  }
  return null;
}

interface Side {
  name: 'one' | 'two';
  child: ChildProcess;
  port: number;
  dataDir: string;
  /** What the server wrote to stderr (shown if a round fails). */
  output(): string;
  /** Subscribers whose socket closed (none should). */
  closed: number;
  /** Server processes: the primary (or the one process), then its workers. */
  pids: number[];
  /** Publications counted by all its subscribers. */
  delivered: number;
  /** Publications committed to its subscribed channels (each reaches `PER_CHANNEL` subscribers). */
  committed: number;
  sockets: net.Socket[];
  db: Database;
  streamers: number[];
  /** Each streamer's `donation.created` payload, as its first donation published it. */
  payloads: Record<string, unknown>[];
}

async function freePort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/** The node children of a process (its cluster workers; not tsx's esbuild service). */
function nodeChildren(pid: number): number[] {
  const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  const name = (p: number) => fs.readFileSync(`/proc/${p}/comm`, 'utf8');
  return children.filter((c) => name(c) === name(pid));
}

async function startSide(name: 'one' | 'two', workers: number): Promise<Side> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), `oa-bench-workers-${name}-`));
  const port = await freePort();
  const profile = PROFILE_DIR ? [`--cpu-prof`, `--cpu-prof-dir=${path.resolve(PROFILE_DIR, name)}`] : [];
  const args = [...profile, '--import', 'tsx', path.join(ROOT, 'src/cli.ts'), 'serve', ...(workers > 1 ? ['--workers', String(workers)] : [])];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let output = '';
  child.stderr!.on('data', (d) => (output += d));
  const deadline = Date.now() + 120_000;
  let pids: number[];
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${name} exited:\n${output}`);
      if (output.includes('OpenAlerts is running') && (workers === 1 || output.includes('worker processes'))) break;
      if (Date.now() > deadline) throw new Error(`${name} did not start:\n${output}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    pids = [child.pid!, ...nodeChildren(child.pid!)];
    if (pids.length !== workers + (workers > 1 ? 1 : 0)) throw new Error(`${name}: expected ${workers} workers, found processes ${pids}`);
  } catch (err) {
    child.kill('SIGTERM');
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const db = createDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'openalerts.sqlite') });
  await migrateToLatest(db.db);
  // The load generator's commits need no fsync (a crash loses only a bench): its event loop, which
  // also reads the sockets, never blocks on the disk.
  await sql`pragma synchronous = OFF`.execute(db.db);
  return { name, child, port, dataDir, output: () => output, closed: 0, pids, delivered: 0, committed: 0, sockets: [], db, streamers: [], payloads: [] };
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

/** The v2 client's answer to a server ping (any frame would do: the server waits for a sign of life). */
const PONG = frame('{}');
/** Every socket reads into this one buffer: a read is consumed within its callback. */
const READ_BUFFER = Buffer.allocUnsafe(1 << 20);
/** Counting stops the socket after each read (returns false): the read timer resumes them all. */
const PAUSE = false;

/**
 * Counts the publications in a subscriber's stream of server frames, across reads, without a native
 * call per frame: it walks the frame headers (RFC 6455 §5.2; the server neither masks nor
 * fragments) and counts a text frame at least `single` bytes long — a publication carries the
 * event's payload, pings and replies are shorter — as one publication. A frame of `batch` bytes
 * or more is several publications of one channel joined by newlines (the hub's batches): it
 * counts its newlines too. Only such frames are scanned.
 */
export class FrameCounter {
  /** Text frames too short to be publications: the server's pings (`{}`), which want an answer. */
  pings = 0;
  /** Payload bytes of the current frame still to come, and whether to count newlines in them. */
  #rest = 0;
  #scan = false;
  readonly #head = Buffer.alloc(10);
  #headLength = 0;

  constructor(
    private readonly single: number,
    private readonly batch: number,
  ) {}

  count(buf: Buffer, n: number): number {
    let pubs = 0;
    let i = 0;
    while (i < n) {
      if (this.#rest > 0) {
        const end = Math.min(n, i + this.#rest);
        if (this.#scan) for (let at = buf.indexOf(10, i); at !== -1 && at < end; at = buf.indexOf(10, at + 1)) pubs++;
        this.#rest -= end - i;
        i = end;
        continue;
      }
      // A header: 2 bytes, then 2 or 8 more for a 16- or 64-bit length (possibly split between reads).
      const head = this.#head;
      if (this.#headLength < 2) {
        head[this.#headLength++] = buf[i++]!;
        continue;
      }
      const len7 = head[1]! & 0x7f;
      const size = len7 === 126 ? 4 : len7 === 127 ? 10 : 2;
      if (this.#headLength < size) {
        head[this.#headLength++] = buf[i++]!;
        continue;
      }
      const length = len7 === 126 ? head.readUInt16BE(2) : len7 === 127 ? Number(head.readBigUInt64BE(2)) : len7;
      this.#headLength = 0;
      const text = (head[0]! & 0x0f) === 1;
      if (text && length >= this.single) pubs++;
      else if (text) this.pings++;
      this.#rest = length;
      this.#scan = text && length >= this.batch;
    }
    return pubs;
  }
}

/**
 * A subscriber: upgrades, connects and subscribes, then only counts the publications in what it
 * reads (FrameCounter).
 */
function subscribe(side: Side, connectToken: string, channel: string, channelToken: string, single: number, batch: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let stage: 'upgrade' | 'subscribe' = 'upgrade';
    let text = '';
    let counter: FrameCounter | null = null;
    const onRead = (n: number, buf: Buffer): boolean => {
      if (counter !== null) {
        const pings = counter.pings;
        side.delivered += counter.count(buf, n);
        // A ping left unanswered for 10 s (the server's pongTimeoutMs) closes the connection.
        if (counter.pings !== pings) socket.write(PONG);
        return PAUSE;
      }
      text += buf.toString('latin1', 0, n);
      if (stage === 'upgrade') {
        if (!text.includes('\r\n\r\n')) return true;
        if (!text.startsWith('HTTP/1.1 101')) {
          reject(new Error(`upgrade refused: ${text.slice(0, 80)}`));
          return true;
        }
        stage = 'subscribe';
        text = text.slice(text.indexOf('\r\n\r\n') + 4);
        socket.write(frame(JSON.stringify({ id: 1, connect: { token: connectToken } })));
        socket.write(frame(JSON.stringify({ id: 2, subscribe: { channel, token: channelToken } })));
      }
      if (stage === 'subscribe' && text.includes('"id":2')) {
        if (text.includes('"error"')) reject(new Error(`subscribe refused: ${text.slice(0, 200)}`));
        counter = new FrameCounter(single, batch);
        socket.once('close', () => side.closed++);
        side.sockets.push(socket);
        resolve();
      }
      return true;
    };
    const socket = net.connect({ port: side.port, host: '127.0.0.1', onread: { buffer: READ_BUFFER, callback: onRead } });
    socket.on('error', reject);
    socket.on('connect', () => {
      socket.write(
        `GET /connection/websocket HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
    });
  });
}

/**
 * Streamers, each with one real donation (its payload is the template of the round's events; it is
 * published before any subscriber joins), then the subscribers.
 */
async function seed(side: Side): Promise<void> {
  const secret = loadSecrets({ dataDir: side.dataDir, secretKey: null, realtimeTokenSecret: null }).realtimeTokenSecret;
  for (let c = 0; c < CHANNELS; c++) {
    const user = await createAccount(side.db.db, { email: `bench-${side.name}-${c}@example.test`, password: 'correct horse battery staple', name: `Bench ${side.name} ${c}` });
    side.streamers.push(user.id);
    const donation = await createDonation(side.db.db, { userId: user.id, amount: '5', currency: 'EUR', username: 'template', message: 'Great stream, keep going!' });
    side.payloads.push({ ...donation, reason: 'default' });
  }
  const deadline = Date.now() + 30_000;
  while ((await outboxBacklog(side.db.db)).backlog > 0) {
    if (Date.now() > deadline) throw new Error(`${side.name}: the server does not publish its outbox`);
    await sleep(100);
  }
  // A publication frame is at least its payload long, and at most ~150 bytes more (the push
  // envelope, the channel, larger numbers): two joined are at least twice the payload.
  const single = Math.min(...side.payloads.map((p) => JSON.stringify(p).length)) - 16;
  if (single < 200) throw new Error(`the template payload is too short to tell publications from batches (${single} bytes)`);
  for (let c = 0; c < CHANNELS; c++) {
    const userId = side.streamers[c]!;
    const channel = `$alerts:donation_${userId}`;
    const connectToken = await signConnectionToken(secret, userId, 3600);
    const channelToken = await signChannelToken(secret, { channel, sub: String(userId) });
    for (let i = 0; i < PER_CHANNEL; i += 100) {
      await Promise.all(Array.from({ length: Math.min(100, PER_CHANNEL - i) }, () => subscribe(side, connectToken, channel, channelToken, single, 2 * single)));
    }
  }
}

/** CPU time (ms) of processes, from /proc (utime + stime, in USER_HZ ticks of 10 ms). */
function cpuMs(pids: number[]): number[] {
  return pids.map((p) => {
    const fields = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  });
}

function ownCpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface RoundResult {
  deliveriesPerSecond: number;
  /** Server CPU per 1,000 deliveries: all its processes, and the primary alone (workers only). */
  serverCpuPer1k: number;
  primaryCpuPer1k: number | null;
  /** Cores the server kept busy over the measured seconds. */
  serverCores: number;
  loadGeneratorCpuPer1k: number;
  /** Publications waiting (committed, not yet at every subscriber) at the measure's end: > 0 means the server was behind. */
  backlog: number;
  load1: number;
}

async function main(): Promise<void> {
  const started = Date.now();
  const live: Side[] = [];
  const readTimer = setInterval(() => {
    for (const side of live) for (const s of side.sockets) s.resume();
  }, READ_MS);
  try {
    live.push(await startSide('one', 1));
    live.push(await startSide('two', 2));
    const sides = { one: live[0]!, two: live[1]! };
    for (const side of Object.values(sides)) await seed(side);
    console.error(`${CHANNELS} channels × ${PER_CHANNEL} subscribers on each side, ready in ${((Date.now() - started) / 1000).toFixed(0)} s; ${machine()}`);

    let donation = 0;
    const round = async (name: 'one' | 'two', r: number): Promise<RoundResult> => {
      const side = sides[name];
      let pumping = true;
      // The closed loop: top up to a window of publications in flight, in one transaction per tick.
      // The window is what the server delivered in the last `WINDOW_SECONDS` (at least
      // MIN_WINDOW): always more than one relay poll and one read interval of work, so the server
      // never waits for the load generator, and the backlog (and the drain) stays that short.
      const pump = (async () => {
        const samples: [number, number][] = [];
        while (pumping) {
          const now = performance.now();
          samples.push([now, side.delivered]);
          while (samples.length > 2 && samples[0]![0] < now - 1000) samples.shift();
          const [t0, d0] = samples[0]!;
          const rate = now > t0 ? (side.delivered - d0) / PER_CHANNEL / ((now - t0) / 1000) : 0;
          const window = Math.max(MIN_WINDOW, rate * WINDOW_SECONDS);
          const inFlight = side.committed - side.delivered / PER_CHANNEL;
          const n = Math.min(MAX_COMMIT, Math.floor(window - inFlight));
          if (n > 0) {
            // What a donation commits for the real-time side: its outbox event (the donation rows
            // themselves cost the load generator, not the server: the relay reads only the outbox).
            try {
              await side.db.db.transaction().execute(async (tx) => {
                for (let i = 0; i < n; i++) {
                  const c = (donation + i) % CHANNELS;
                  await enqueueEvent(tx, { type: 'donation.created', userId: side.streamers[c]!, payload: { ...side.payloads[c], id: donation + i, username: `d${donation + i}` } });
                }
              });
            } catch (err) {
              // The server's relay held the write lock past busy_timeout (a loaded machine): next tick.
              if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
              await sleep(PUMP_MS);
              continue;
            }
            donation += n;
            side.committed += n;
          }
          await sleep(PUMP_MS);
        }
      })();
      // Its failure surfaces where the round awaits it, and the servers are stopped (not left running).
      pump.catch(() => {});
      await sleep(RAMP_MS);
      const load1 = os.loadavg()[0]!;
      const t0 = performance.now();
      const d0 = side.delivered;
      const cpu0 = cpuMs(side.pids);
      const own0 = ownCpuMs();
      await sleep(SECONDS * 1000);
      const seconds = (performance.now() - t0) / 1000;
      const deliveries = side.delivered - d0;
      const cpu = cpuMs(side.pids).map((c, i) => c - cpu0[i]!);
      const own = ownCpuMs() - own0;
      const backlog = Math.round(side.committed - side.delivered / PER_CHANNEL);
      pumping = false;
      await pump;
      const deadline = Date.now() + 60_000;
      while (side.delivered < side.committed * PER_CHANNEL) {
        if (Date.now() > deadline || side.closed > 0) {
          const alive = side.pids.filter((p) => fs.existsSync(`/proc/${p}`)).length;
          throw new Error(`${name}: ${side.committed * PER_CHANNEL - side.delivered} deliveries missing; ${side.closed} subscribers' sockets closed; ${alive} of ${side.pids.length} server processes alive; server output:\n${side.output().slice(-3000)}`);
        }
        await sleep(READ_MS);
      }
      if (side.delivered !== side.committed * PER_CHANNEL) throw new Error(`${name}: ${side.delivered - side.committed * PER_CHANNEL} deliveries too many`);
      const serverCpu = cpu.reduce((a, b) => a + b, 0);
      const result: RoundResult = {
        deliveriesPerSecond: Math.round(deliveries / seconds),
        serverCpuPer1k: +((serverCpu / deliveries) * 1000).toFixed(3),
        primaryCpuPer1k: cpu.length > 1 ? +((cpu[0]! / deliveries) * 1000).toFixed(3) : null,
        serverCores: +(serverCpu / 1000 / seconds).toFixed(2),
        loadGeneratorCpuPer1k: +((own / deliveries) * 1000).toFixed(3),
        backlog,
        load1: +load1.toFixed(1),
      };
      console.error(`round ${r < 0 ? 'warm-up' : r + 1} ${name}: ${JSON.stringify(result)}`);
      await sleep(300);
      return result;
    };

    await round('one', -1);
    await round('two', -1);
    const results = await alternateRounds(ROUNDS, ['one', 'two'] as const, round, { rotate: true });
    const pick = (side: 'one' | 'two', k: keyof RoundResult) => results[side].map((x) => x[k] as number);
    const one = pick('one', 'deliveriesPerSecond');
    const two = pick('two', 'deliveriesPerSecond');
    const ratios = two.map((t, i) => +(t / one[i]!).toFixed(2));
    const summary = (side: 'one' | 'two') => ({
      deliveriesPerSecond: { median: median(pick(side, 'deliveriesPerSecond')), rounds: pick(side, 'deliveriesPerSecond') },
      serverCpuMsPer1k: pick(side, 'serverCpuPer1k'),
      ...(side === 'two' ? { primaryCpuMsPer1k: pick(side, 'primaryCpuPer1k') } : {}),
      serverCores: pick(side, 'serverCores'),
      loadGeneratorCpuMsPer1k: pick(side, 'loadGeneratorCpuPer1k'),
      backlogAtEnd: pick(side, 'backlog'),
    });
    const generatorShare = (side: 'one' | 'two') => +(median(pick(side, 'loadGeneratorCpuPer1k')) / median(pick(side, 'serverCpuPer1k'))).toFixed(2);
    console.log(
      JSON.stringify(
        {
          benchmark: 'sustained fan-out deliveries/s: serve --workers 2 vs serve (one process)',
          machine: machine(),
          shape: { channels: CHANNELS, subscribersPerChannel: PER_CHANNEL, seconds: SECONDS, windowSeconds: WINDOW_SECONDS, readMs: READ_MS },
          one: summary('one'),
          two: summary('two'),
          ratioOfMedians: +(median(two) / median(one)).toFixed(2),
          ratioPerRound: ratios,
          ratioSpread: [Math.min(...ratios), Math.max(...ratios)],
          // Deliveries per server CPU-second, two ÷ one: what a second worker costs per delivery.
          cpuEfficiencyRatio: +(median(pick('one', 'serverCpuPer1k')) / median(pick('two', 'serverCpuPer1k'))).toFixed(2),
          loadGeneratorCpuShareOfServer: { one: generatorShare('one'), two: generatorShare('two') },
          load1PerRound: results.one.map((x, i) => [x.load1, results.two[i]!.load1]),
          durationSeconds: Math.round((Date.now() - started) / 1000),
        },
        null,
        2,
      ),
    );
  } finally {
    clearInterval(readTimer);
    for (const side of live) {
      for (const s of side.sockets) s.destroy();
      side.child.kill('SIGTERM');
      await new Promise((r) => side.child.once('exit', r));
      await side.db.close();
      fs.rmSync(side.dataDir, { recursive: true, force: true });
    }
  }
}

await main();
