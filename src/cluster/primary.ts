import cluster, { type Worker } from 'node:cluster';
import { pino, type LoggerOptions } from 'pino';
import type { Config } from '../config/config.js';
import { loadSecrets, secretsFileExisted } from '../config/secrets.js';
import { createDatabase, signalCommit, type Database } from '../db/database.js';
import { WalCheckpointer } from '../db/wal-checkpointer.js';
import { migrateToLatest } from '../db/migrate.js';
import { loggingOptions } from '../http/request-log.js';
import { ClaimOwner, loadNodeId } from '../modules/outbox/claim-owner.js';
import { OutboxRelay } from '../modules/outbox/outbox.relay.js';
import { WebhookDispatcherThread } from '../modules/webhooks/dispatcher-thread.js';
import { acquireServerLock, type ServerLock } from '../ops/server-lock.js';
import type { Broker } from '../realtime/broker.js';
import { MemoryBroker } from '../realtime/broker-memory.js';
import { defaultRecoverableChannel } from '../realtime/node.js';
import { eventPublisher, historyOptions, redisBroker, restoreStreams } from '../realtime/setup.js';
import { printBanner } from '../server.js';
import { BrokerAuthority } from './broker-authority.js';
import { Counters } from './counters.js';
import type { ToWorker } from './messages.js';
import { WorkerMessages } from './worker-messages.js';

const NO_HISTORY = { historySize: 0, historyTtlMs: 0, historyMetaTtlMs: 0 };
/** Workers get this long to drain on SIGTERM before they are killed. */
const STOP_TIMEOUT_MS = 12_000;

/**
 * The primary of `serve --workers N`. It serves no HTTP itself; it holds what must exist once per
 * server — the SQLite server lock, the migrations and secrets of the first start, the outbox relay
 * and the webhook dispatcher and, without Redis, the broker (offsets, epochs, history) and the
 * rate-limit counters the workers share — and forks N workers that listen on the one port. A worker
 * that dies is replaced; SIGTERM or SIGINT stops the workers (each drains as a single server does),
 * then the primary.
 */
export async function runPrimary(config: Readonly<Config>, workers: number): Promise<void> {
  const logger = pino({ ...(loggingOptions(config, true).logger as LoggerOptions), base: { pid: process.pid, role: 'primary' } });
  const firstStart = config.secretKey === null && !secretsFileExisted(config.dataDir);
  // SQLite: one server per file; its workers run under this lock (they never take it).
  const lock: ServerLock | null = config.database.dialect === 'sqlite' ? acquireServerLock(config.database.file, 'an OpenAlerts server') : null;
  let database: Database | null = null;
  let checkpointer: WalCheckpointer | null = null;
  try {
    database = createDatabase(config.database);
    // Once, before any worker starts: no worker migrates or writes the secret key file.
    await migrateToLatest(database.db);
    // The relay's and the dispatcher's commits here checkpoint off this event loop, as a single server's do.
    checkpointer = database.dialect === 'sqlite' ? new WalCheckpointer(database, logger) : null;
    checkpointer?.start();
    const secrets = loadSecrets(config);
    const history = historyOptions(config);
    let broker: Broker;
    let authority: BrokerAuthority | null = null;
    if (config.redisUrl) {
      broker = await redisBroker(config, logger);
    } else {
      const memory = new MemoryBroker();
      await restoreStreams(memory, database, history);
      authority = new BrokerAuthority(memory, (id, message) => send(cluster.workers?.[id], message));
      broker = memory;
    }
    const nodeId = loadNodeId(config.dataDir);
    const relay = primaryRelay(config, database, broker, authority, logger);
    const dispatcher = new WebhookDispatcherThread(database, { config: config.webhooks, encryptionKey: secrets.encryptionKey, owner: new ClaimOwner(nodeId), logger });
    // What was pending is published before any worker takes a subscriber (as a single server does before it listens).
    await relay.start();
    await dispatcher.start();

    const db = database;
    const messages = new WorkerMessages(
      { send: (id, message) => send(cluster.workers?.[id], message), ids: () => Object.values(cluster.workers ?? {}).flatMap((w) => (w ? [w.id] : [])) },
      authority,
      new Counters(),
      () => signalCommit(db.db), // wakes the relay and the dispatcher, as this process's own commits would
    );
    cluster.on('message', (worker: Worker, message: unknown) => messages.handle(worker.id, message));

    await superviseWorkers(config, workers, logger, authority, firstStart, async () => {
      await dispatcher.stop();
      await relay.stop();
      await broker.close();
      await checkpointer?.stop();
      await db.close();
      lock?.release();
    });
  } catch (err) {
    await checkpointer?.stop().catch(() => {});
    await database?.close().catch(() => {});
    lock?.release();
    throw err;
  }
}

/**
 * The outbox relay as the primary runs it: it publishes into the cluster's broker — without Redis
 * the memory broker behind `authority`, whose publications go to the workers in one message per
 * relay round — and records channel positions when that broker is the only copy of the streams.
 */
export function primaryRelay(config: Readonly<Config>, database: Database, broker: Broker, authority: BrokerAuthority | null, logger?: pino.Logger): OutboxRelay {
  const history = historyOptions(config);
  const publisher = eventPublisher(
    {
      publishEncoded: (channel, json, key) => broker.publish(channel, json, defaultRecoverableChannel(channel) ? history : NO_HISTORY, key),
      // A relay round's publications go to each worker in one message, before the round's marks.
      ...(authority ? { flushFanOut: () => authority.flush() } : {}),
    },
    // The memory broker hands publications to the workers without waiting for them.
    { inProcess: authority !== null },
  );
  return new OutboxRelay(database, publisher, {
    logger,
    owner: new ClaimOwner(loadNodeId(config.dataDir)),
    recordPositions: authority !== null,
    retentionMs: Math.max(3600_000, config.historyTtl * 1000),
  });
}

function send(worker: Worker | undefined, message: ToWorker): void {
  if (worker?.isConnected()) worker.send(message, undefined, () => {}); // a worker gone meanwhile: its exit is handled
}

/**
 * Forks the workers and keeps N of them running until SIGTERM/SIGINT. A worker that exits before
 * every worker has listened once is a start-up failure (a port in use, a bad setting): the primary
 * stops everything and fails with the worker's own message above. Later, a dead worker is replaced
 * (at once, then backing off if they keep dying) and its clients reconnect to any worker.
 */
async function superviseWorkers(
  config: Readonly<Config>,
  count: number,
  logger: pino.Logger,
  authority: BrokerAuthority | null,
  firstStart: boolean,
  closePrimary: () => Promise<void>,
): Promise<void> {
  let stopping = false;
  let started = false;
  const listened = new Set<number>();
  const recentDeaths: number[] = [];

  const stop = async (code: number, reason: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ reason }, 'stopping the workers');
    const alive = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined && !w.isDead());
    const exited = Promise.all(alive.map((w) => new Promise<void>((resolve) => (w.isDead() ? resolve() : w.once('exit', () => resolve())))));
    for (const w of alive) w.process.kill('SIGTERM');
    const force = setTimeout(() => alive.forEach((w) => w.isDead() || w.process.kill('SIGKILL')), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(force);
    try {
      await closePrimary();
    } catch (err) {
      logger.error({ err }, 'shutdown failed');
      code = 1;
    }
    process.exit(code);
  };

  cluster.on('listening', (worker, address) => {
    listened.add(worker.id);
    if (started || listened.size < count) return;
    started = true;
    printBanner(config, firstStart, `${count} worker processes on port ${address.port} (primary PID ${process.pid})`, null);
  });

  cluster.on('exit', (worker, code, signal) => {
    void authority?.workerGone(worker.id);
    if (stopping) return;
    if (!started) {
      process.stderr.write(`openalerts: a worker process failed to start (exit ${signal ?? code}); see its message above.\n`);
      void stop(1, 'a worker failed to start');
      return;
    }
    const now = Date.now();
    recentDeaths.push(now);
    while (recentDeaths[0] < now - 60_000) recentDeaths.shift();
    // A worker that keeps dying is restarted less and less often (up to every 10 s), never given up on.
    const delay = recentDeaths.length <= 3 ? 0 : Math.min(10_000, 250 * 2 ** (recentDeaths.length - 4));
    logger.error({ worker: worker.process.pid, code, signal, restartInMs: delay }, 'a worker process died; starting another');
    setTimeout(() => {
      if (!stopping) cluster.fork();
    }, delay);
  });

  process.once('SIGTERM', () => void stop(0, 'SIGTERM'));
  process.once('SIGINT', () => void stop(0, 'SIGINT'));
  for (let i = 0; i < count; i++) cluster.fork();
  // The primary runs until stop() exits the process.
  await new Promise<never>(() => {});
}
