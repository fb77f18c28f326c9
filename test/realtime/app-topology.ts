import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { workerRole } from '../../src/cluster/worker-role.js';
import { loadSecrets } from '../../src/config/secrets.js';
import { primaryRelay } from '../../src/cluster/primary.js';
import { signalCommit } from '../../src/db/database.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { historyOptions, restoreStreams } from '../../src/realtime/setup.js';
import { ipcPrimary } from '../cluster/ipc-primary.js';
import { buildTestApp, listen, openTestDatabase, testConfig, type TestApp } from '../helper.js';
import { defaultTestWorkers } from '../process.js';

/**
 * The whole app on SQLite listening at `url`, for the suites that drive real sockets and HTTP
 * clients through it (revocation, donation events, centrifuge-js 2.8.5 in Chromium).
 *
 * One app listening, or under OPENALERTS_TEST_WORKERS=N (test/workers-switch.ts) the workers of
 * `serve --workers N` without Redis: N apps built as a worker builds its app (buildApp with the
 * worker role of src/cluster/worker-role.ts) on one SQLite file, each reaching the primary's side
 * (broker authority, counters, revocations passed on: test/cluster/ipc-primary.ts) over a real IPC
 * channel, and one port whose TCP connections alternate between them as node:cluster's round robin
 * hands them out. `t.app` is the first worker's app: what a test does through it (a revocation, a
 * page) happens on that worker while its sockets sit on all of them. The primary runs its outbox
 * relay (src/cluster/primary.ts primaryRelay) into the authority's broker, so what is written
 * anywhere reaches the sockets of every worker; it runs no webhook dispatcher (no suite here
 * needs one).
 */
export async function realtimeTestApp(): Promise<{ t: TestApp; url: string }> {
  const count = defaultTestWorkers();
  if (count <= 1) {
    const t = await buildTestApp();
    return { t, url: await listen(t.app) };
  }
  const testDb = await openTestDatabase('sqlite');
  const config = testConfig(testDb.env);
  // Loaded once, as the primary does before it forks: the workers read the same secrets.
  const secrets = loadSecrets(config);
  const broker = new MemoryBroker();
  // The primary's database connection is the test's own: what a test writes wakes the relay at
  // once, as a worker's commit notice does (signalCommit).
  await restoreStreams(broker, testDb.database, historyOptions(config));
  const primary = await ipcPrimary(count, broker, () => signalCommit(testDb.database.db));
  const relay = primaryRelay(config, testDb.database, broker, primary.authority);
  await relay.start();
  const apps: FastifyInstance[] = [];
  for (const link of primary.links) {
    // Each on a database connection of its own, as each worker opens one.
    const app = await buildApp(config, { logger: false, secrets, worker: workerRole(link, true) });
    await app.ready();
    apps.push(app);
  }
  let turn = 0;
  const sockets = new Set<net.Socket>();
  const front = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    apps[turn++ % apps.length]!.server.emit('connection', socket);
  });
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  const port = (front.address() as AddressInfo).port;
  const t: TestApp = {
    app: apps[0]!,
    config,
    database: testDb.database,
    env: { ...testDb.env, DATA_DIR: config.dataDir },
    async close() {
      // The apps close their own connections (sockets, idle keep-alives) as a worker does on stop;
      // the port stops taking new ones first, and whatever is still open after is cut.
      const closed = new Promise<void>((resolve) => front.close(() => resolve()));
      for (const app of apps) await app.close();
      for (const socket of sockets) socket.destroy();
      await closed;
      await relay.stop();
      await primary.close();
      await broker.close();
      await testDb.drop();
    },
  };
  return { t, url: `http://127.0.0.1:${port}` };
}
