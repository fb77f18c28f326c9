/**
 * Webhooks: `node --import tsx bench/webhooks.ts [--rounds 5] [--seconds 5] [--connections 10] [--rate 150] [--burst 500] [--dialect sqlite|postgres] [--sides openNone,openTen,openNoneAgain] [--receiver-nice idle|N] [--no-vacuum] [--pin] [--profile DIR] [--before=DIR]`.
 *
 * Three processes: the server (SQLite file in a temp dir with production durability, or a fresh
 * PostgreSQL schema; WEBHOOKS_ALLOW_HTTP=1 so it may call the loopback receiver), the receiver (a
 * plain node:http server answering 200 at once, in its own process so its work delays neither the
 * server nor the load generator), and this one, the load generator. The receiver models a remote
 * endpoint, whose CPU is someone else's: it runs in the idle scheduling class (Linux, util-linux's
 * `chrt`), so it takes only CPU that the server and the load generator leave. `--receiver-nice N`
 * runs it at nice N instead (19 until 6 Dec: under the kernel's EEVDF scheduler a niced receiver
 * still finishes its time slice before a request's thread that wakes gets the CPU, bench/README.md);
 * 0 is an equal of the server on the shared CPUs.
 *
 * 1. Donation request latency, 0 vs 10 subscriptions. `POST /bench/donate/:user` records a donation
 *    through the real service (`createDonation`: transaction, outbox row) for a streamer with no
 *    webhook subscription, or for one with 10 (all to the receiver), two ways:
 *    - closed loop (autocannon, `--connections` at once, each sends its next request when the last
 *      is answered): the saturated figure — the server's whole capacity goes to requests plus, on
 *      the 10-subscription side, 10 deliveries per donation, so this side shows what delivery costs
 *      in CPU, not whether it sits on the request path;
 *    - open loop (`--rate` donations/s on a fixed schedule, each timed from when it was due, so a
 *      stall is counted against every request it delayed): a load the server can carry, where
 *      "delivery is off the request path" can be judged.
 *    - the A/A control (`openNoneAgain`): the open loop again, for a second streamer with no
 *      subscription. Its ratio to `openNone` is what the rounds' noise alone gives on this machine;
 *      "must not change" reads as: 10 subscriptions ÷ none spreads as the control does (the report's
 *      `p50RatioSpread`: quartiles and median of both ratio series), and the 10-subscription side is
 *      the highest of the three in about a third of the rounds (`tenHighestOfThree`).
 *    Rounds alternate the sides (rotating order); after each round the bench waits until every
 *    delivery went out, so a round's deliveries compete with that round's requests only. Per round:
 *    the server's CPU time and event-loop delay (p99), the CPU time of its PostgreSQL backends and of
 *    the receiver (round and drain), and the load average; per request, the handler's own time and
 *    (Linux) how much of it the main thread spent runnable but off a CPU, so the tail report tells
 *    a request that waited for a CPU from one that waited for the lock or worked longer.
 *    `--before=DIR`: a second server from an older checkout in DIR (`git archive <commit> | tar -x
 *    -C DIR` and a node_modules symlink), served by a copy of this file placed in DIR/bench; each
 *    side runs on both, alternating (`…Before` sides), so old and new meet the same load.
 * 2. Delivery throughput: a burst of `--burst` donations written in one transaction for a streamer
 *    with 1 subscription, then for one with 10; deliveries/s = deliveries ÷ time from the start of
 *    the write until the receiver had them all (the write's own time is reported beside it).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { fork, spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { monitorEventLoopDelay, performance as perf } from 'node:perf_hooks';
import { alternateRounds, autocannon, BENCH_PG_URL, callIpc, cpuSecondsOf, dialectArg, isServerProcess, median, numberArg, quantile, postgresBackendPids, printReport, serveBenchApp, serveIpc, startServer, textArg } from './lib.js';

interface Seed {
  url: string;
  /** Streamers by how many subscriptions they have. */
  /** noneAgain: a second streamer without subscriptions, the A/A control of `none` (openNoneAgain). */
  users: { none: number; noneAgain: number; ten: number; one: number; burstTen: number };
}

/**
 * How long the main thread has been runnable but waiting for a CPU, in nanoseconds (Linux,
 * /proc/thread-self/schedstat's second field). A handler's waiting share tells a request that lost
 * its CPU to another thread or process (the dispatcher, the receiver, the load generator) from one
 * whose own work took longer. Null where the file does not exist.
 */
function threadSchedule(): { waitingNs: number } | null {
  try {
    return { waitingNs: Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]) };
  } catch {
    return null;
  }
}

async function server(): Promise<void> {
  const receiverUrl = process.argv[process.argv.indexOf('--receiver') + 1]!;
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createApp } = await import('../src/modules/apps/apps.service.js');
  const { createDonation } = await import('../src/modules/donations/donations.service.js');
  // Absent from a checkout before the checkpoint thread (a bench of the old code): no thread side then.
  const WalCheckpointer = await import('../src/db/wal-checkpointer.js').then((m) => m.WalCheckpointer).catch(() => null);
  await serveBenchApp(
    { WEBHOOKS_ALLOW_HTTP: '1', RATE_LIMIT_PER_MINUTE: '1000000' },
    async (app): Promise<Omit<Seed, 'url'>> => {
      const db = app.ctx.db;
      // Routes first: the first inject readies the app, after which none can be added.
      // Each answer says how long its handler took and whether the requests' side waited for the
      // threads' write lock meanwhile (the count of waits moved; a wait of an overlapping request
      // counts too, rarely at the open loop's rate): the tail report tells the lock from the rest.
      const requestLock = (app.ctx.database as { threadLock?: { waits: number } | null }).threadLock ?? null;
      app.post<{ Params: { user: string } }>('/bench/donate/:user', async (request, reply) => {
        const waitsBefore = requestLock?.waits ?? 0;
        const scheduledBefore = threadSchedule();
        const started = performance.now();
        const donation = await createDonation(db, { userId: Number(request.params.user), amount: 5, currency: 'USD', username: 'bench', message: 'hi' });
        const handlerMs = performance.now() - started;
        const scheduledAfter = threadSchedule();
        reply.header('x-bench-handler-ms', handlerMs.toFixed(3)).header('x-bench-lock-waited', String((requestLock?.waits ?? 0) > waitsBefore ? 1 : 0));
        if (scheduledBefore && scheduledAfter) reply.header('x-bench-handler-runnable-ms', ((scheduledAfter.waitingNs - scheduledBefore.waitingNs) / 1e6).toFixed(3));
        return reply.status(201).send({ data: { id: donation.id } });
      });
      // The burst in one transaction: all of it is there at once, so the figure is delivery, not writing.
      app.post<{ Params: { user: string; count: string } }>('/bench/burst/:user/:count', async (request) => {
        await db.transaction().execute(async (tx) => {
          for (let i = 0; i < Number(request.params.count); i++) await createDonation(tx, { userId: Number(request.params.user), amount: 1, currency: 'USD' });
        });
        return { ok: true };
      });
      // The server's own figures for a round: CPU time used and event-loop delay since the last call.
      const loop = monitorEventLoopDelay({ resolution: 5 });
      loop.enable();
      let cpu = process.cpuUsage();
      let elu = perf.eventLoopUtilization();
      // A thread's own CPU (Linux): process.cpuUsage counts every thread, the dispatcher's too.
      const threadCpuMs = (tid: number | null | undefined) => {
        if (!tid) return NaN;
        try {
          const fields = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
          return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in USER_HZ (100)
        } catch {
          return NaN;
        }
      };
      const mainThreadCpuMs = () => threadCpuMs(process.pid);
      // The dispatcher thread's id (absent from a checkout before it was reported: NaN then); a
      // thread that started or was replaced during a round counts from 0.
      const dispatcherTid = () => (app.ctx.webhooks as { osThreadId?: number | null }).osThreadId ?? null;
      let dispatcherSeen = { tid: dispatcherTid(), ms: threadCpuMs(dispatcherTid()) };
      const lock = (app.ctx.database as { threadLock?: { waits: number; waitedMs: number; maxWaitMs?: number; wokenMs?: number; turnsOf?(holder: number): { turns: number; heldMs: number; turnedOver?: number } } | null }).threadLock ?? null;
      // Turns of the threads' write lock and time held: the requests' side (1), the webhook dispatcher (2), the WAL checkpointer (3).
      const turns = () => [1, 2, 3].map((holder) => ({ turns: 0, heldMs: 0, turnedOver: 0, ...lock?.turnsOf?.(holder) }));
      let turnsSeen = turns();
      let mainCpu = mainThreadCpuMs();
      let lockSeen = { waits: lock?.waits ?? 0, waitedMs: lock?.waitedMs ?? 0, wokenMs: lock?.wokenMs ?? 0 };
      // WAL checkpoints of the checkpoint thread (db/wal-checkpointer.ts), and the WAL's size on disk.
      // `inline`: the thread stopped, the requests' connection checkpoints in its commits (SQLite's default).
      let checkpointer = app.ctx.checkpointer ?? null;
      // PostgreSQL: VACUUM (ANALYZE) of this server's tables, between rounds (see --no-vacuum below).
      app.post('/bench/vacuum', async () => {
        if (app.ctx.config.database.dialect !== 'postgres') return { ok: true };
        const { sql } = await import('kysely');
        const { rows } = await sql<{ name: string }>`select quote_ident(schemaname) || '.' || quote_ident(tablename) as name from pg_tables where schemaname = current_schema()`.execute(db);
        // One table per statement: VACUUM takes no transaction, and without a list it would vacuum every schema of the database.
        for (const { name } of rows) await sql.raw(`vacuum (analyze) ${name}`).execute(db);
        return { ok: true };
      });
      app.post<{ Params: { where: string } }>('/bench/checkpoints/:where', async (request) => {
        if (request.params.where === 'inline' && checkpointer) {
          await checkpointer.stop();
          checkpointer = null;
        } else if (request.params.where === 'thread' && !checkpointer && WalCheckpointer && app.ctx.config.database.dialect === 'sqlite') {
          checkpointer = new WalCheckpointer(app.ctx.database);
          checkpointer.start(0, 0);
          while (!checkpointer.running) await new Promise((r) => setTimeout(r, 10));
          // Its 'ready' (and with it the backstop threshold on the requests' connection) follows at once.
          await new Promise((r) => setTimeout(r, 200));
        }
        checkpointsSeen = checkpoints();
        return { ok: true };
      });
      const checkpoints = () => checkpointer?.stats ?? { checkpoints: 0, ms: 0, maxMs: 0, maxWalFrames: 0, lockedPasses: 0, walFrames: 0 };
      let checkpointsSeen = checkpoints();
      const walBytes = () => {
        try {
          return fs.statSync(`${app.ctx.config.database.dialect === 'sqlite' ? app.ctx.config.database.file : ''}-wal`).size;
        } catch {
          return 0;
        }
      };
      app.get('/bench/stats', async () => {
        const mainNow = mainThreadCpuMs();
        const dispatcherNow = { tid: dispatcherTid(), ms: threadCpuMs(dispatcherTid()) };
        const dispatcherThreadCpuMs = Math.round(dispatcherNow.ms - (dispatcherNow.tid === dispatcherSeen.tid ? dispatcherSeen.ms : 0));
        dispatcherSeen = dispatcherNow;
        const lockNow = { waits: lock?.waits ?? 0, waitedMs: lock?.waitedMs ?? 0, wokenMs: lock?.wokenMs ?? 0 };
        const checkpointsNow = checkpoints();
        const turnsNow = turns();
        const [app1, dispatcher, checkpointerTurns] = turnsNow.map((t, i) => {
          const turns = t.turns - turnsSeen[i]!.turns;
          const heldMs = t.heldMs - turnsSeen[i]!.heldMs;
          // turnedOver: turns ended early for a waiting request (a checkout before them has none).
          return { turns, heldMs: Math.round(heldMs), heldMsPerTurn: +(heldMs / Math.max(turns, 1)).toFixed(3), turnedOver: (t.turnedOver ?? 0) - (turnsSeen[i]!.turnedOver ?? 0) };
        });
        turnsSeen = turnsNow;
        const threads = {
          lockTurns: { requests: app1, dispatcher, checkpointer: checkpointerTurns },
          mainThreadCpuMs: Math.round(mainNow - mainCpu),
          dispatcherThreadCpuMs: Number.isNaN(dispatcherThreadCpuMs) ? null : dispatcherThreadCpuMs,
          lockWaits: lockNow.waits - lockSeen.waits,
          lockWaitedMs: Math.round(lockNow.waitedMs - lockSeen.waitedMs),
          lockMaxWaitMs: +(lock?.maxWaitMs ?? 0).toFixed(2),
          // Of the waits, the time after the lock was free: the requests' thread getting back to it.
          lockWokenMs: Math.round(lockNow.wokenMs - lockSeen.wokenMs),
          threadCheckpoints: checkpointsNow.checkpoints - checkpointsSeen.checkpoints,
          threadCheckpointMs: Math.round(checkpointsNow.ms - checkpointsSeen.ms),
          threadCheckpointLockedPasses: checkpointsNow.lockedPasses - checkpointsSeen.lockedPasses,
          walFramesMax: checkpointsNow.maxWalFrames,
          walMiB: +(walBytes() / 2 ** 20).toFixed(1),
        };
        mainCpu = mainNow;
        lockSeen = lockNow;
        if (lock) lock.maxWaitMs = 0;
        checkpointsSeen = checkpointsNow;
        const used = process.cpuUsage(cpu);
        // The main thread's busy time (the event loop serving requests), apart from any other thread's CPU.
        const busy = perf.eventLoopUtilization(elu);
        const stats = { ...threads, cpuMs: Math.round((used.user + used.system) / 1000), loopBusyMs: Math.round(busy.active), loopP99ms: +(loop.percentile(99) / 1e6).toFixed(1), loopMaxMs: +(loop.max / 1e6).toFixed(1) };
        elu = perf.eventLoopUtilization();
        cpu = process.cpuUsage();
        loop.reset();
        return stats;
      });
      // --pin: the threads the bench places (the main thread serves the requests).
      app.get('/bench/threads', async () => ({ main: process.pid, dispatcher: dispatcherTid() }));
      app.get('/bench/pending', async () => {
        const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').executeTakeFirstOrThrow();
        return { pending: Number(row.n) };
      });
      const account = (name: string) => createAccount(db, { email: `${name}@example.test`, password: 'correct horse battery', name });
      const owner = await account('owner');
      const { app: client } = await createApp(db, app.ctx.secrets.encryptionKey, { ownerId: owner.id, name: 'Bench bot', redirectUris: ['https://bench.example.test/cb'] });
      const subscribe = async (userId: number, count: number) => {
        const grantId = await app.ctx.tokens.createGrant(db, { clientId: client.client_id, userId, scopes: ['oauth-donation-subscribe'], kind: 'authorization_code' });
        const { accessToken } = await app.ctx.tokens.issue(db, { grantId, clientId: client.client_id, userId, scopes: ['oauth-donation-subscribe'] }, false);
        for (let i = 0; i < count; i++) {
          const res = await app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${accessToken}` }, payload: { url: `${receiverUrl}/${userId}/${i}`, events: ['donation.created'] } });
          if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${res.body}`);
        }
      };
      const users = { none: (await account('none')).id, noneAgain: (await account('none2')).id, ten: (await account('ten')).id, one: (await account('one')).id, burstTen: (await account('burst')).id };
      await subscribe(users.ten, 10);
      await subscribe(users.one, 1);
      await subscribe(users.burstTen, 10);
      return { users };
    },
  );
}

/** The receiver's process: answers 200 at once, echoes the registration challenge, counts. */
function receiverProcess(): void {
  let received = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      // Registration: echo the challenge (only these bodies are parsed).
      if (body.startsWith('{"type":"webhook.challenge"')) return res.writeHead(200).end(JSON.parse(body).data.challenge);
      received += 1;
      res.writeHead(200).end('ok');
    });
  });
  const listening = new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // At once: a command that arrived before a listener would be lost.
  serveIpc({ url: async () => (await listening, `http://127.0.0.1:${(server.address() as AddressInfo).port}`), count: () => received });
  process.on('disconnect', () => process.exit(0));
}

/**
 * `rate` POSTs a second to `url` on a fixed schedule for `seconds` (open loop). Each latency runs
 * from the moment the request was due, not when it was sent: a generator that fell behind does not
 * hide the stall that made it fall behind.
 */
async function openLoop(url: string, rate: number, seconds: number): Promise<{ sent: number; ok: number; p50: number; p99: number; max: number; lateStarts: number; tail: TailReport }> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const total = Math.round(rate * seconds);
  const answers: Answer[] = [];
  let ok = 0;
  let lateStarts = 0;
  const start = performance.now();
  const pending: Promise<void>[] = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    else if (wait < -5) lateStarts++;
    pending.push(
      new Promise<void>((resolve) => {
        // How late the generator itself sent it: its own share of a slow answer (it shares the CPUs).
        const sentLateMs = performance.now() - due;
        const req = http.request(url, { method: 'POST', agent }, (res) => {
          res.resume();
          res.on('end', () => {
            const latency = performance.now() - due;
            answers.push({
              latency,
              sentLateMs,
              handlerMs: Number(res.headers['x-bench-handler-ms'] ?? NaN),
              handlerRunnableMs: Number(res.headers['x-bench-handler-runnable-ms'] ?? NaN),
              lockWaited: res.headers['x-bench-lock-waited'] === '1',
            });
            if (res.statusCode === 201) ok++;
            resolve();
          });
        });
        req.on('error', () => resolve());
        req.end();
      }),
    );
  }
  await Promise.all(pending);
  agent.destroy();
  const latencies = answers.map((a) => a.latency).sort((a, b) => a - b);
  const at = (p: number) => +latencies[Math.min(latencies.length - 1, Math.ceil(latencies.length * p) - 1)]!.toFixed(2);
  return { sent: total, ok, p50: at(0.5), p99: at(0.99), max: at(1), lateStarts, tail: tailOf(answers) };
}

/**
 * The slowest 1 % of a round's requests (those at or above its p99): how many waited for the write
 * lock, and of their latency (median) how much was the generator sending late and how much the
 * server's handler; the rest is the way between them (sockets, the server's event loop, HTTP).
 */
interface TailReport {
  requests: number;
  lockWaited: number;
  /** Of every request of the round. */
  lockWaitedAll: number;
  sentLateMsMedian: number;
  handlerMsMedian: number;
  latencyMsMedian: number;
  /** The handler's own time over every request of the round: the request path as the server runs it, p50 and p99. */
  handlerP50Ms: number;
  handlerP99Ms: number;
  /**
   * The slowest 1 % of handlers (at or above the handler p99): median handler time, and of it the
   * median time the main thread was runnable but off a CPU (Linux; null elsewhere).
   */
  slowHandlersMsMedian: number;
  slowHandlersRunnableMsMedian: number | null;
}
/** One answered request of an open-loop round; `handlerRunnableMs` NaN where the server cannot tell. */
interface Answer {
  latency: number;
  sentLateMs: number;
  handlerMs: number;
  handlerRunnableMs: number;
  lockWaited: boolean;
}
function tailOf(answers: Answer[]): TailReport {
  const sorted = [...answers].sort((a, b) => b.latency - a.latency);
  const tail = sorted.slice(0, Math.max(1, Math.ceil(sorted.length / 100)));
  const slowHandlers = [...answers].sort((a, b) => b.handlerMs - a.handlerMs).slice(0, tail.length);
  return {
    requests: tail.length,
    lockWaited: tail.filter((a) => a.lockWaited).length,
    lockWaitedAll: answers.filter((a) => a.lockWaited).length,
    sentLateMsMedian: +median(tail.map((a) => a.sentLateMs)).toFixed(2),
    handlerMsMedian: +median(tail.map((a) => a.handlerMs)).toFixed(2),
    latencyMsMedian: +median(tail.map((a) => a.latency)).toFixed(2),
    handlerP50Ms: +quantile(answers.map((a) => a.handlerMs), 0.5).toFixed(2),
    handlerP99Ms: +quantile(answers.map((a) => a.handlerMs), 0.99).toFixed(2),
    slowHandlersMsMedian: +median(slowHandlers.map((a) => a.handlerMs)).toFixed(2),
    slowHandlersRunnableMsMedian: slowHandlers.some((a) => Number.isNaN(a.handlerRunnableMs)) ? null : +median(slowHandlers.map((a) => a.handlerRunnableMs)).toFixed(2),
  };
}

interface ServerStats {
  cpuMs: number;
  mainThreadCpuMs: number;
  dispatcherThreadCpuMs: number | null;
  lockWaits: number;
  lockWaitedMs: number;
  lockMaxWaitMs: number;
  lockWokenMs: number;
  lockTurns: Record<'requests' | 'dispatcher' | 'checkpointer', { turns: number; heldMs: number; heldMsPerTurn: number; turnedOver: number }>;
  threadCheckpoints: number;
  threadCheckpointMs: number;
  walMiB: number;
  loopBusyMs: number;
  loopP99ms: number;
  loopMaxMs: number;
}

/**
 * `--wal-schema S` (PostgreSQL, the pg_walinspect extension created in schema S): the WAL a round
 * wrote for one bench server, in bytes — the records between two positions that touch a table or
 * index of that server's schema (`bench_<server pid>_…`, lib.ts), so the other users of a shared
 * PostgreSQL are left out. Commit records name no table and are not counted.
 */
async function walPosition(): Promise<string> {
  return (await pgQuery<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn'))[0]!.lsn;
}
async function walOfServer(walSchema: string, serverPid: number, from: string): Promise<{ bytes: number; records: number; fpiBytes: number; byRelation: Record<string, number> }> {
  let byRelation: Record<string, number> = {};
  const to = await walPosition();
  // pg_walinspect reads only WAL already flushed (the dispatcher commits asynchronously).
  while (!(await pgQuery<{ ok: boolean }>('select pg_current_wal_flush_lsn() >= $1::pg_lsn as ok', [to]))[0]!.ok) await new Promise((r) => setTimeout(r, 50));
  const rows = await pgQuery<{ relname: string; bytes: string; records: string; fpi: string }>(
    `with ours as (
       select c.relfilenode, c.relname::text from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname like $3 and c.relfilenode <> 0
       union select t.relfilenode, c.relname || ' (toast)' from pg_class c join pg_namespace n on n.oid = c.relnamespace join pg_class t on t.oid = c.reltoastrelid where n.nspname like $3
     ), records as (
       select (regexp_match(w.block_ref, 'rel \\d+/\\d+/(\\d+)'))[1]::oid as relfilenode, w.record_length, w.fpi_length
       from ${walSchema}.pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn) w
     )
     select o.relname, sum(r.record_length) as bytes, count(*) as records, sum(r.fpi_length) as fpi
     from records r join ours o on o.relfilenode = r.relfilenode group by o.relname order by 2 desc`,
    [from, to, `bench\\_${serverPid}\\_%`],
  );
  const row = { bytes: rows.reduce((n, r) => n + Number(r.bytes), 0), records: rows.reduce((n, r) => n + Number(r.records), 0), fpi: rows.reduce((n, r) => n + Number(r.fpi), 0) };
  // Where it went, by table or index (a record is counted for the first block it names).
  byRelation = Object.fromEntries(rows.map((r) => [r.relname, Number(r.bytes)]));
  return { bytes: row.bytes, records: row.records, fpiBytes: row.fpi, byRelation };
}
async function pgQuery<T>(text: string, values: unknown[] = []): Promise<T[]> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: BENCH_PG_URL });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as T[];
  } finally {
    await client.end();
  }
}

/**
 * `--pg-statements` (PostgreSQL with pg_stat_statements preloaded and created, e.g. a cluster of
 * lib.ts `tmpfsCluster` with `shared_preload_libraries=pg_stat_statements`): each round starts from
 * a reset of the statistics and reads them after its drain — per statement its calls, rows,
 * executor and planner time (wall clock in the backend), WAL, and buffers dirtied. Every statement
 * of the round is there: the requests', the dispatcher's, and the other server's idle polls.
 * With it, the per-table counters of the round's server (`pg_stat_user_tables`: rows inserted,
 * updated, HOT-updated, dead).
 */
interface StatementStats { query: string; calls: number; rows: number; execMs: number; planMs: number; walBytes: number; walRecords: number; walFpi: number; dirtied: number; hit: number }
async function resetStatements(): Promise<void> {
  await pgQuery('select pg_stat_statements_reset()');
}
async function readStatements(): Promise<StatementStats[]> {
  // Wait for the WAL and the statistics of asynchronously committed statements to settle.
  await new Promise((r) => setTimeout(r, 200));
  const rows = await pgQuery<Record<string, string>>(
    `select query, calls, rows, total_exec_time, total_plan_time, wal_bytes, wal_records, wal_fpi, shared_blks_dirtied, shared_blks_hit
     from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())`,
  );
  return rows.map((r) => ({ query: r.query!, calls: Number(r.calls), rows: Number(r.rows), execMs: Number(r.total_exec_time), planMs: Number(r.total_plan_time), walBytes: Number(r.wal_bytes), walRecords: Number(r.wal_records), walFpi: Number(r.wal_fpi), dirtied: Number(r.shared_blks_dirtied), hit: Number(r.shared_blks_hit) }));
}
async function tableCounters(serverPid: number): Promise<Record<string, { ins: number; upd: number; hot: number; del: number; dead: number }>> {
  const rows = await pgQuery<Record<string, string>>(
    `select relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del, n_dead_tup from pg_stat_user_tables where schemaname like $1`,
    [`bench\\_${serverPid}\\_%`],
  );
  return Object.fromEntries(rows.map((r) => [r.relname!, { ins: Number(r.n_tup_ins), upd: Number(r.n_tup_upd), hot: Number(r.n_tup_hot_upd), del: Number(r.n_tup_del), dead: Number(r.n_dead_tup) }]));
}

/** `--receiver-nice idle|N` (either form): idle by default; N a nice value, 0–19. */
function receiverPriorityArg(): 'idle' | number {
  const text = textArg('receiver-nice') ?? 'idle';
  if (text === 'idle') return 'idle';
  if (!/^\d+$/.test(text) || Number(text) > 19) {
    console.error(`--receiver-nice is idle or a nice value 0–19 (got ${JSON.stringify(text)}), as in --receiver-nice idle or --receiver-nice=19.`);
    process.exit(2);
  }
  return Number(text);
}

async function main(): Promise<void> {
  const rounds = numberArg('rounds', 5);
  const seconds = numberArg('seconds', 5);
  const connections = numberArg('connections', 10);
  const rate = numberArg('rate', 150);
  const burst = numberArg('burst', 500);
  const dialect = dialectArg();
  const profileAt = process.argv.indexOf('--profile');
  const profileDir = profileAt > 0 ? process.argv[profileAt + 1] : undefined;
  const receiverNice = receiverPriorityArg();
  // PostgreSQL: every round starts on vacuumed tables, as autovacuum keeps them on a production server.
  // The machines' server runs with autovacuum off (a CI setting), so the dead rows that the outbox's
  // and the deliveries' updates leave piled up round after round: the backends' CPU per round grew
  // 1.5–1.8 × from the first round to the sixth, on both sides. `--no-vacuum`: as before.
  const vacuum = dialect === 'postgres' && !process.argv.includes('--no-vacuum');
  const walSchemaAt = process.argv.indexOf('--wal-schema');
  const walSchema = dialect === 'postgres' && walSchemaAt > 0 ? process.argv[walSchemaAt + 1]! : null;
  if (walSchema && !/^[a-z_][a-z0-9_]*$/.test(walSchema)) throw new Error('--wal-schema: a plain schema name');
  const statements = dialect === 'postgres' && process.argv.includes('--pg-statements');
  const receiverChild = fork(fileURLToPath(import.meta.url), ['--receiver-process'], { execArgv: ['--import', 'tsx'] });
  await new Promise((r) => receiverChild.once('spawn', r));
  // The receiver stands in for a remote endpoint, whose CPU is not the service's: it takes only what
  // the server and the load generator leave (--receiver-nice 0: competing as an equal).
  if (receiverNice === 'idle') {
    // -a: every thread the receiver has started so far; those it starts later inherit the class.
    const set = spawnSync('chrt', ['-a', '-i', '-p', '0', String(receiverChild.pid)], { encoding: 'utf8' });
    if (set.status !== 0) throw new Error(`chrt could not put the receiver in the idle class (${set.error?.message ?? set.stderr.trim()}): install util-linux, or pass --receiver-nice 19`);
  } else if (receiverNice !== 0) os.setPriority(receiverChild.pid!, receiverNice);
  const receiverUrl = await callIpc<string>(receiverChild, 'url');
  // --pin (Linux, util-linux's taskset): the requests' side on CPU 0 (this load generator, the
  // server's main thread), the deliveries' on CPU 1 (the dispatcher thread, the receiver); every
  // other thread (V8's helpers, libuv's pool) and PostgreSQL stay free. With the deliveries given a
  // CPU of their own, what is left of 10 ÷ 0 is what they do on the request path (SQLite: the
  // write lock's turns), not what they take of two shared CPUs.
  const pin = process.argv.includes('--pin');
  const taskset = (cpu: number, id: number, allThreads = false) => {
    const done = spawnSync('taskset', [...(allThreads ? ['-a'] : []), '-p', '-c', String(cpu), String(id)], { encoding: 'utf8' });
    if (done.status !== 0) throw new Error(`--pin: taskset failed for ${id}: ${done.stderr}`);
  };
  if (pin) {
    if (os.cpus().length < 2) throw new Error('--pin needs two CPUs');
    taskset(0, process.pid, true);
    taskset(1, receiverChild.pid!, true);
  }
  const pinServer = async (base: string) => {
    const threads = (await (await fetch(`${base}/bench/threads`)).json()) as { main: number; dispatcher: number | null };
    taskset(0, threads.main);
    if (threads.dispatcher) taskset(1, threads.dispatcher);
  };
  const received = () => callIpc<number>(receiverChild, 'count');
  const load: number[] = [os.loadavg()[0]!];
  const serverOptions = (profile?: string) => ({ args: ['--receiver', receiverUrl, '--dialect', dialect], execArgv: profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [] });
  const srv = await startServer<Seed>(import.meta.url, serverOptions(profileDir));
  // --before=DIR: the same sides served by an older checkout too (a copy of this file in DIR/bench).
  const beforeDir = process.argv.find((a) => a.startsWith('--before='))?.slice(9);
  let srvBefore: typeof srv | null = null;
  const copy = beforeDir ? path.join(beforeDir, 'bench', 'webhooks-bench-copy.ts') : null;
  // Not left behind in the operator's directory.
  if (copy) process.on('exit', () => fs.rmSync(copy, { force: true }));
  if (copy) {
    fs.copyFileSync(fileURLToPath(import.meta.url), copy);
    srvBefore = await startServer<Seed>(pathToFileURL(copy).href, serverOptions(profileDir && `${profileDir}/before`));
  }
  // Until no delivery is pending. `arrived`: first wait (asking the receiver, not the server) until
  // the receiver has that many: the server's count of pending rows reads the whole table, and
  // polled every 100 ms through a drain it was PostgreSQL CPU of the 10-subscription side alone.
  const drained = async (base: string, arrived = 0) => {
    while ((await received()) < arrived) await new Promise((r) => setTimeout(r, 20));
    for (;;) {
      const { pending } = (await (await fetch(`${base}/bench/pending`)).json()) as { pending: number };
      if (pending === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const serverStats = async (base: string) => (await (await fetch(`${base}/bench/stats`)).json()) as ServerStats;
  // CPU outside the server process that a round costs: its PostgreSQL backends (the requests' and the
  // dispatcher's bookkeeping) and the receiver (which a real endpoint would run elsewhere). Backends
  // opened during the round start from 0; one closed during it (the pool's idle timeout) is missed.
  const backendsOf = async (server: typeof srv) => {
    const pids = dialect === 'postgres' ? await postgresBackendPids(server.child.pid!) : [];
    return new Map(pids.map((pid) => [pid, cpuSecondsOf([pid])]));
  };
  const outsideCpu = async (server: typeof srv) => ({ backends: await backendsOf(server), receiver: cpuSecondsOf([receiverChild.pid!]) });
  const outsideCpuMs = async (server: typeof srv, since: Awaited<ReturnType<typeof outsideCpu>>) => {
    let backends = 0;
    for (const [pid, cpuNow] of await backendsOf(server)) backends += cpuNow - (since.backends.get(pid) ?? 0);
    return { postgresCpuMs: Math.round(backends * 1000), receiverCpuMs: Math.round((cpuSecondsOf([receiverChild.pid!]) - since.receiver) * 1000) };
  };

  // openNoneAgain: the A/A control — openNone's load again, for a second streamer without subscriptions.
  // Its ratio to openNone is what the rounds' noise alone gives; openTen's is judged against it.
  const baseSides = ['closedNone', 'closedTen', 'openNone', 'openTen', 'openNoneAgain', 'openNoneInline', 'openTenInline'] as const;
  const allSides = [...baseSides, ...baseSides.map((side) => `${side}Before` as const)];
  type Side = (typeof allSides)[number];
  // --sides openNone,openTen: a subset (a profile of one kind of load).
  const sidesAt = process.argv.indexOf('--sides');
  const chosen = sidesAt > 0 ? baseSides.filter((side) => process.argv[sidesAt + 1]!.split(',').includes(side)) : baseSides;
  // With --before each side runs on the old server too, right after it on the new (order rotating by round).
  const sides: Side[] = srvBefore ? chosen.flatMap((side) => [side, `${side}Before` as const]) : [...chosen];
  const serverOf = (side: Side) => (side.endsWith('Before') ? srvBefore! : srv);
  const userOf = (side: Side) => serverOf(side).ready.users[side.includes('Ten') ? 'ten' : side.includes('NoneAgain') ? 'noneAgain' : 'none'];
  // Not measured: a second of each open-loop side on every server first. The very first round of a
  // server (JIT, the dispatcher thread's first turns, the WAL's growth) ran up to 1 s p50, which made
  // whichever server went first look worse.
  for (const side of sides.filter((s) => s.startsWith('open'))) {
    await openLoop(`${serverOf(side).ready.url}/bench/donate/${userOf(side)}`, rate, 1);
    await drained(serverOf(side).ready.url);
  }
  const statementsOf = new Map<string, { statements: StatementStats[]; tables: unknown; postgresCpuMs: number; ok: number; deliveries: number }>();
  const results = await alternateRounds(
    rounds,
    sides,
    async (side) => {
      const base = serverOf(side).ready.url;
      // The dispatcher thread may have been replaced since the last round.
      if (pin) await pinServer(base);
      // *Inline: checkpoints in the commits of the requests' connection, as before the checkpoint thread.
      await fetch(`${base}/bench/checkpoints/${side.includes('Inline') ? 'inline' : 'thread'}`, { method: 'POST' });
      if (vacuum) await fetch(`${base}/bench/vacuum`, { method: 'POST' });
      const before = await received();
      await serverStats(base);
      const outside = await outsideCpu(serverOf(side));
      const walFrom = walSchema ? await walPosition() : null;
      const countersFrom = statements ? await tableCounters(serverOf(side).child.pid!) : null;
      if (statements) await resetStatements();
      const url = `${base}/bench/donate/${userOf(side)}`;
      let request: { rps: number; p50: number; p99: number; ok: number; lateStarts?: number; tail?: TailReport };
      if (side.startsWith('closed')) {
        const r = await autocannon({ url, method: 'POST', connections, duration: seconds });
        request = { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, ok: r['2xx'] };
      } else {
        const r = await openLoop(url, rate, seconds);
        request = { rps: +(r.ok / seconds).toFixed(1), p50: r.p50, p99: r.p99, ok: r.ok, lateStarts: r.lateStarts, tail: r.tail };
      }
      const duringRequests = await serverStats(base);
      await drained(base, before + request.ok * (side.includes('Ten') ? 10 : 0));
      const drain = await serverStats(base);
      // Round and drain together: the deliveries of a round may finish in its drain.
      const outsideMs = await outsideCpuMs(serverOf(side), outside);
      const wal = walSchema ? await walOfServer(walSchema, serverOf(side).child.pid!, walFrom!) : null;
      const pgStatements = statements ? await readStatements() : null;
      const tables = countersFrom ? await tableCounters(serverOf(side).child.pid!).then((now) => Object.fromEntries(Object.entries(now).map(([t, c]) => [t, { ins: c.ins - (countersFrom[t]?.ins ?? 0), upd: c.upd - (countersFrom[t]?.upd ?? 0), hot: c.hot - (countersFrom[t]?.hot ?? 0), del: c.del - (countersFrom[t]?.del ?? 0), deadAfter: c.dead }]))) : null;
      if (pgStatements) statementsOf.set(`${side}/${statementsOf.size}`, { statements: pgStatements, tables, postgresCpuMs: outsideMs.postgresCpuMs, ok: request.ok, deliveries: (await received()) - before });
      load.push(os.loadavg()[0]!);
      return { ...request, deliveries: (await received()) - before, server: { ...duringRequests, drainCpuMs: drain.cpuMs, drainMainThreadCpuMs: drain.mainThreadCpuMs, drainDispatcherThreadCpuMs: drain.dispatcherThreadCpuMs, drainLoopBusyMs: drain.loopBusyMs, ...outsideMs, walBytes: wal?.bytes ?? null, walRecords: wal?.records ?? null, walFpiBytes: wal?.fpiBytes ?? null, walBytesByRelation: wal?.byRelation ?? null }, load1m: os.loadavg()[0]! };
    },
    { rotate: true },
  );

  const throughput = async (server: typeof srv, user: number, subscriptions: number) => {
    const base = server.ready.url;
    await drained(base);
    await serverStats(base);
    const before = await received();
    const outside = await outsideCpu(server);
    const walFrom = walSchema ? await walPosition() : null;
    const start = performance.now();
    await fetch(`${base}/bench/burst/${user}/${burst}`, { method: 'POST' });
    const writeSeconds = +((performance.now() - start) / 1000).toFixed(2);
    while ((await received()) - before < burst * subscriptions) await new Promise((r) => setTimeout(r, 20));
    const ms = performance.now() - start;
    // The records of the last deliveries commit after the receiver had them.
    await drained(base);
    const stats = await serverStats(base);
    const { postgresCpuMs } = await outsideCpuMs(server, outside);
    const wal = walSchema ? await walOfServer(walSchema, server.child.pid!, walFrom!) : null;
    load.push(os.loadavg()[0]!);
    return { events: burst, subscriptions, deliveries: burst * subscriptions, writeSeconds, seconds: +(ms / 1000).toFixed(2), deliveriesPerSecond: Math.round((burst * subscriptions * 1000) / ms), serverCpuMsPerDeliveryInclWrites: +(stats.cpuMs / (burst * subscriptions)).toFixed(3), postgresCpuMsPerDeliveryInclWrites: dialect === 'postgres' ? +(postgresCpuMs / (burst * subscriptions)).toFixed(3) : null, walBytesPerDeliveryInclWrites: wal ? Math.round(wal.bytes / (burst * subscriptions)) : null };
  };
  // With --before: old and new in turn, the old first for one of the two bursts.
  const one = await throughput(srv, srv.ready.users.one, 1);
  const oneBefore = srvBefore ? await throughput(srvBefore, srvBefore.ready.users.one, 1) : null;
  const tenBefore = srvBefore ? await throughput(srvBefore, srvBefore.ready.users.burstTen, 10) : null;
  const ten = await throughput(srv, srv.ready.users.burstTen, 10);
  await srv.stop();
  await srvBefore?.stop();
  receiverChild.disconnect();
  // --pg-statements: every round's statements and table counters, for the reader to sum (--pg-statements-out FILE).
  const statementsOutAt = process.argv.indexOf('--pg-statements-out');
  if (statements && statementsOutAt > 0) fs.writeFileSync(process.argv[statementsOutAt + 1]!, JSON.stringify(Object.fromEntries(statementsOf), null, 1));

  type Row = { p50: number; p99: number; rps: number; ok: number; load1m: number; tail?: TailReport; server: ServerStats & { drainCpuMs: number; drainMainThreadCpuMs: number; drainDispatcherThreadCpuMs: number | null; postgresCpuMs: number; receiverCpuMs: number; walBytes: number | null; walRecords: number | null; walFpiBytes: number | null }; deliveries: number };
  const rows = (side: Side) => ((results as Partial<Record<Side, Row[]>>)[side] ?? []);
  const ratio = (a: Side, b: Side, pick: (r: Row) => number) => rows(a).map((r, i) => (rows(b)[i] ? +(pick(rows(b)[i]!) / Math.max(pick(r), 0.001)).toFixed(2) : null));
  const summary = (side: Side) => rows(side).length === 0 ? null : ({
    medianP50ms: median(rows(side).map((r) => r.p50)),
    medianP99ms: median(rows(side).map((r) => r.p99)),
    // Open loop: the server's handler alone (createDonation), every request of the round — the request path without the CPUs' queue around it.
    medianHandlerP50ms: rows(side).every((r) => r.tail) ? median(rows(side).map((r) => r.tail!.handlerP50Ms)) : null,
    medianHandlerP99ms: rows(side).every((r) => r.tail) ? median(rows(side).map((r) => r.tail!.handlerP99Ms)) : null,
    medianReqPerSec: median(rows(side).map((r) => r.rps)),
    medianServerCpuMsPerRequest: median(rows(side).map((r) => +(r.server.cpuMs / Math.max(r.ok, 1)).toFixed(3))),
    // Round and the drain after it: what each donation cost the process, and its main thread (the requests' event loop).
    medianServerCpuMsPerDonationWithDrain: median(rows(side).map((r) => +((r.server.cpuMs + r.server.drainCpuMs) / Math.max(r.ok, 1)).toFixed(3))),
    medianMainThreadCpuMsPerDonationWithDrain: median(rows(side).map((r) => +((r.server.mainThreadCpuMs + r.server.drainMainThreadCpuMs) / Math.max(r.ok, 1)).toFixed(3))),
    // The webhook dispatcher's thread alone (null: an older checkout that does not report its id, or no thread).
    medianDispatcherThreadCpuMsPerDonationWithDrain: rows(side).some((r) => r.server.dispatcherThreadCpuMs === null)
      ? null
      : median(rows(side).map((r) => +((r.server.dispatcherThreadCpuMs! + (r.server.drainDispatcherThreadCpuMs ?? 0)) / Math.max(r.ok, 1)).toFixed(3))),
    // PostgreSQL: the server's backends, round and drain (the dispatcher's statements run there).
    medianPostgresCpuMsPerDonationWithDrain: median(rows(side).map((r) => +(r.server.postgresCpuMs / Math.max(r.ok, 1)).toFixed(3))),
    medianReceiverCpuMsPerDonationWithDrain: median(rows(side).map((r) => +(r.server.receiverCpuMs / Math.max(r.ok, 1)).toFixed(3))),
    // --wal-schema: the WAL of the server's tables per donation (round and drain).
    medianWalBytesPerDonationWithDrain: walSchema ? median(rows(side).map((r) => Math.round(r.server.walBytes! / Math.max(r.ok, 1)))) : null,
  });
  // Per round, what a reader needs to tell a stall (the longest event-loop delay, the load) from a cost (p50, lock waits).
  const perRound = (side: Side) => rows(side).length === 0 ? null : ({
    p50ms: rows(side).map((r) => r.p50),
    p99ms: rows(side).map((r) => r.p99),
    eventLoopMaxDelayMs: rows(side).map((r) => r.server.loopMaxMs),
    lockWaits: rows(side).map((r) => `${r.server.lockWaits}× ${r.server.lockWaitedMs} ms (${r.server.lockWokenMs ?? '?'} ms after it was free), longest ${r.server.lockMaxWaitMs} ms`),
    // The slowest 1 %: how many of them waited for the lock (against all the round's requests); their latency, the generator's lateness and the handler's time in it (medians).
    tail: rows(side).map((r) => (r.tail ? `${r.tail.lockWaited} of ${r.tail.requests} waited for the lock (of all: ${r.tail.lockWaitedAll}); of ${r.tail.latencyMsMedian} ms, sent late ${r.tail.sentLateMsMedian}, handler ${r.tail.handlerMsMedian}; every request's handler p50 ${r.tail.handlerP50Ms}, p99 ${r.tail.handlerP99Ms}; slowest 1 % of handlers ${r.tail.slowHandlersMsMedian} ms, runnable off a CPU ${r.tail.slowHandlersRunnableMsMedian ?? '?'} ms` : null)),
    // The webhook dispatcher's turns of the write lock: how many, time held per turn, turned over early for a waiting request.
    dispatcherTurns: rows(side).map((r) => `${r.server.lockTurns.dispatcher.turns}× ${r.server.lockTurns.dispatcher.heldMsPerTurn} ms (${r.server.lockTurns.dispatcher.heldMs} ms), ${r.server.lockTurns.dispatcher.turnedOver} turned over`),
    requestTurns: rows(side).map((r) => `${r.server.lockTurns.requests.turns}× ${r.server.lockTurns.requests.heldMsPerTurn} ms`),
    threadCheckpoints: rows(side).map((r) => `${r.server.threadCheckpoints}× ${r.server.threadCheckpointMs} ms`),
    walMiB: rows(side).map((r) => r.server.walMiB),
    dispatcherThreadCpuMs: rows(side).map((r) => (r.server.dispatcherThreadCpuMs === null ? null : r.server.dispatcherThreadCpuMs + (r.server.drainDispatcherThreadCpuMs ?? 0))),
    // The process less its main thread: the dispatcher and the rest (GC helpers, libuv's pool, the checkpointer); comparable with an older checkout.
    otherThreadsCpuMs: rows(side).map((r) => r.server.cpuMs + r.server.drainCpuMs - r.server.mainThreadCpuMs - r.server.drainMainThreadCpuMs),
    postgresCpuMs: rows(side).map((r) => r.server.postgresCpuMs),
    receiverCpuMs: rows(side).map((r) => r.server.receiverCpuMs),
    ...(walSchema ? { walBytes: rows(side).map((r) => r.server.walBytes), walRecords: rows(side).map((r) => r.server.walRecords), walFpiBytes: rows(side).map((r) => r.server.walFpiBytes) } : {}),
    load1m: rows(side).map((r) => +r.load1m.toFixed(1)),
  });
  // A ratio series' median and quartiles: the middle half of the rounds lies between q1 and q3.
  const spread = (values: (number | null)[]) => {
    const sorted = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
    if (sorted.length === 0) return null;
    const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.round(q * (sorted.length - 1)))]!;
    return { q1: at(0.25), median: median(sorted), q3: at(0.75) };
  };
  const highest = (none: Side, ten: Side, noneAgain: Side, pick: (r: Row) => number) =>
    rows(ten).filter((r, i) => rows(none)[i] && rows(noneAgain)[i] && pick(r) > Math.max(pick(rows(none)[i]!), pick(rows(noneAgain)[i]!))).length;
  const p50 = (r: Row) => r.p50;
  const p99 = (r: Row) => r.p99;
  // The A/A control: the same load as `none` for another streamer without subscriptions. "Delivery
  // is off the request path" reads as: ten ÷ none spreads as the control does, and the ten side is
  // above both sides without subscriptions in about a third of the rounds (chance alone).
  const againstControl = (none: Side, ten: Side, noneAgain: Side) => {
    const tenOverNone = { p50: ratio(none, ten, p50), p99: ratio(none, ten, p99) };
    const againOverNone = { p50: ratio(none, noneAgain, p50), p99: ratio(none, noneAgain, p99) };
    return {
      noneAgain: { ...summary(noneAgain), perRound: perRound(noneAgain) },
      p50RatioNoneAgainOverNonePerRound: againOverNone.p50,
      p99RatioNoneAgainOverNonePerRound: againOverNone.p99,
      p50RatioSpread: { tenOverNone: spread(tenOverNone.p50), noneAgainOverNone: spread(againOverNone.p50) },
      p99RatioSpread: { tenOverNone: spread(tenOverNone.p99), noneAgainOverNone: spread(againOverNone.p99) },
      tenHighestOfThree: { rounds: rows(ten).length, byChance: +(rows(ten).length / 3).toFixed(1), p50: highest(none, ten, noneAgain, p50), p99: highest(none, ten, noneAgain, p99) },
    };
  };
  const openLoopReport = (none: Side, ten: Side, noneAgain?: Side) => ({
    none: { ...summary(none), perRound: perRound(none) },
    ten: { ...summary(ten), perRound: perRound(ten) },
    p50RatioTenOverNonePerRound: ratio(none, ten, p50),
    p99RatioTenOverNonePerRound: ratio(none, ten, p99),
    ...(noneAgain && rows(noneAgain).length > 0 ? againstControl(none, ten, noneAgain) : {}),
    // What one delivery adds, per round: (10 subscriptions − 0) ÷ that round's deliveries — PostgreSQL backends' CPU, and WAL (--wal-schema).
    postgresCpuUsPerDeliveryPerRound: rows(ten).map((r, i) => (rows(none)[i] ? Math.round(((r.server.postgresCpuMs / Math.max(r.ok, 1) - rows(none)[i]!.server.postgresCpuMs / Math.max(rows(none)[i]!.ok, 1)) * r.ok * 1000) / Math.max(r.deliveries, 1)) : null)),
    ...(walSchema
      ? { walBytesPerDeliveryPerRound: rows(ten).map((r, i) => (rows(none)[i] ? Math.round((r.server.walBytes! / Math.max(r.ok, 1) - rows(none)[i]!.server.walBytes! / Math.max(rows(none)[i]!.ok, 1)) * r.ok / Math.max(r.deliveries, 1)) : null)) }
      : {}),
  });
  printReport('webhooks: donation request latency with 0 vs 10 subscriptions (closed and open loop; WAL checkpoints on their thread or inline); delivery throughput', {
    dialect,
    settings: { rounds, seconds, connections, rate, burst, receiverNice, vacuumBetweenRounds: vacuum, pinned: pin },
    loadAverage1m: { min: Math.min(...load), max: Math.max(...load) },
    donationRequest: {
      rounds: results,
      closedLoop: { none: summary('closedNone'), ten: summary('closedTen'), p50RatioTenOverNonePerRound: ratio('closedNone', 'closedTen', p50) },
      openLoop: openLoopReport('openNone', 'openTen', 'openNoneAgain'),
      openLoopCheckpointsInline: openLoopReport('openNoneInline', 'openTenInline'),
      ...(srvBefore
        ? {
            before: beforeDir,
            closedLoopBefore: { none: summary('closedNoneBefore'), ten: summary('closedTenBefore'), p50RatioTenOverNonePerRound: ratio('closedNoneBefore', 'closedTenBefore', p50) },
            openLoopBefore: openLoopReport('openNoneBefore', 'openTenBefore', 'openNoneAgainBefore'),
            openLoopCheckpointsInlineBefore: openLoopReport('openNoneInlineBefore', 'openTenInlineBefore'),
          }
        : {}),
    },
    delivery: { one, ten, ...(srvBefore ? { before: { one: oneBefore, ten: tenBefore } } : {}) },
  });
}

if (isServerProcess) await server();
else if (process.argv[2] === '--receiver-process') receiverProcess();
else await main();
