import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parentPort, workerData } from 'node:worker_threads';
import { sql } from 'kysely';
import { createDatabase } from '../../db/database.js';
import { ClaimOwner } from '../outbox/claim-owner.js';
import type { Resolver } from './endpoint.js';
import { WebhookDispatcher } from './webhooks.dispatcher.js';
import type { FromDispatcherThread, ToDispatcherThread, DispatcherThreadData } from './dispatcher-thread.js';

/**
 * The webhook dispatcher's thread (dispatcher-thread.ts): the whole dispatcher — fan-out, leases,
 * signing, HTTP, attempt records — on a database connection of its own. The app's thread only
 * tells it that something committed, and hears its log lines back.
 */
const data = workerData as DispatcherThreadData;
const port = parentPort!;
const post = (message: FromDispatcherThread) => port.postMessage(message);

const log = (level: 'warn' | 'error' | 'info') => (obj: object, msg?: string) => {
  const { err, ...rest } = obj as { err?: unknown };
  // An Error does not survive postMessage with its message and stack as pino prints them.
  const shown = err instanceof Error ? { message: err.message, stack: err.stack } : err;
  post({ t: 'log', level, obj: err === undefined ? rest : { ...rest, err: shown }, msg });
};

/**
 * This thread's id in the OS, read once (Linux: Node has no gettid, but /proc/thread-self links to
 * `<pid>/task/<tid>`): the id, or why there is none. Lowering the priority needs it; the app's side
 * gets it for tests and the bench only (nothing depends on it).
 */
const ownThread = ((): { tid: number } | { tid: null; why: unknown } => {
  if (process.platform !== 'linux') return { tid: null, why: 'not Linux' };
  try {
    const tid = Number(path.basename(fs.readlinkSync('/proc/thread-self')));
    if (!Number.isInteger(tid) || tid <= 0) throw new Error('/proc/thread-self names no thread id');
    return { tid };
  } catch (err) {
    return { tid: null, why: err };
  }
})();

/**
 * Delivery is background work: a request should not wait for a CPU that this thread holds. Nice
 * does not give that: when a request's thread wakes, the kernel's scheduler (EEVDF, Linux 6.6 on)
 * lets the thread it finds running finish its time slice, niced or not, and the request waits up to
 * a slice — about 3 ms, the p99 of the request path with deliveries going on (bench/README.md,
 * "the dispatcher thread in the idle class"). A thread of the idle class (SCHED_IDLE) gives way at
 * once to any other that wakes: it runs on a CPU that nothing else wants, and under a CPU kept busy
 * webhooks wait, requests don't. Node has no call for it; `chrt` (util-linux's, or busybox's: short
 * options) sets it on this thread's id, once (lowering needs no privilege; raising it back would).
 *
 * On SQLite requests may wait for this thread's short turns of the write lock, and a turn it is
 * preempted in lasts until it gets a CPU again. A request waits for the lock off the CPU, which it
 * then leaves to this thread, so that takes long only while other work of ordinary priority keeps
 * every CPU busy. `WEBHOOKS_THREAD_NICE` takes a nice value instead (a weight: the thread keeps a
 * share of a busy CPU, and preempts as any thread does), or 0 for the requests' own priority. The
 * WAL checkpointer thread keeps the server's priority: requests wait for its last pass.
 */
function lowerOwnPriority(setting: number | 'idle'): void {
  if (setting === 0 || process.platform !== 'linux') return;
  try {
    if (ownThread.tid === null) throw ownThread.why;
    if (setting === 'idle') execFileSync('chrt', ['-i', '-p', '0', String(ownThread.tid)], { stdio: 'pipe', timeout: 5_000 });
    else os.setPriority(ownThread.tid, Math.min(19, os.getPriority(ownThread.tid) + setting));
  } catch (err) {
    const how = setting === 'idle' ? 'put the dispatcher thread in the idle scheduling class (it runs `chrt`, from util-linux: install it, or set WEBHOOKS_THREAD_NICE=10 to lower the thread by nice instead)' : 'lower the dispatcher thread\'s CPU priority (nice)';
    log('warn')({ err, setting }, `webhooks: could not ${how}; deliveries compete with requests for the CPU as equals`);
  }
}
lowerOwnPriority(data.config.threadNice);

// Its writes are all redone or sent again if a crash loses them (see WebhookDispatcher#bookkeeping).
const database = createDatabase(data.database, { max: 2, threadLock: data.threadLock ?? undefined, asynchronousCommit: true });
const dispatcher = new WebhookDispatcher(database, {
  config: data.config,
  encryptionKey: Buffer.from(data.encryptionKey),
  owner: new ClaimOwner(data.owner.node, data.owner.pid, data.owner.incarnation),
  logger: { warn: log('warn'), error: log('error'), info: log('info') },
  ...(data.pollMs ? { pollMs: data.pollMs } : {}),
});

// DNS through the app's thread while a test points names elsewhere (the resolver there is a function).
const resolving = new Map<number, { resolve: (a: Awaited<ReturnType<Resolver>>) => void; reject: (e: Error) => void }>();
let nextResolve = 1;
const appResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    const id = nextResolve++;
    resolving.set(id, { resolve, reject });
    post({ t: 'resolve', id, hostname });
  });
const systemResolver = dispatcher.resolver;

// Commits arrive one per donation; a round a few milliseconds after the first reads all of those
// that came meanwhile in one fan-out transaction: fewer turns of the write lock (SQLite), which a
// request's commit may have to wait for. Webhooks are not that hurried.
const GATHER_MS = 20;
let gather: NodeJS.Timeout | null = null;

port.on('message', (message: ToDispatcherThread) => {
  switch (message.t) {
    case 'kick':
      gather ??= setTimeout(() => {
        gather = null;
        dispatcher.kick();
      }, GATHER_MS);
      return;
    case 'resolver':
      dispatcher.resolver = message.custom ? appResolver : systemResolver;
      return;
    case 'resolved': {
      const waiting = resolving.get(message.id);
      resolving.delete(message.id);
      if (message.error !== undefined) waiting?.reject(new Error(message.error));
      else waiting?.resolve(message.addresses ?? []);
      return;
    }
    case 'stop':
      void (async () => {
        await dispatcher.stop();
        await database.close();
        post({ t: 'stopped' });
        port.close();
      })();
      return;
  }
});

if (data.customResolver) dispatcher.resolver = appResolver;
// SQLite: checkpoints are the checkpoint thread's (db/wal-checkpointer.ts; the app's connection is
// its backstop); run from here they would hold the threads' write lock (taken around our COMMIT) for
// the checkpoint's fsyncs.
try {
  if (database.dialect === 'sqlite') await sql`pragma wal_autocheckpoint = 0`.execute(database.db);
  await dispatcher.start();
  post({ t: 'started', tid: ownThread.tid });
} catch (err) {
  log('error')({ err }, 'webhooks: the dispatcher thread could not start');
  await database.close().catch(() => {});
  post({ t: 'stopped' });
  port.close();
}
