import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { workerRole } from '../../src/cluster/worker-role.js';
import { loadSecrets } from '../../src/config/secrets.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { ipcPrimary } from '../cluster/ipc-primary.js';
import { buildTestApp, listen, openTestDatabase, testConfig, type TestApp } from '../helper.js';
import { defaultTestWorkers } from '../process.js';

/**
 * The whole app on SQLite with its real-time endpoint at `wsUrl`, for the suites that drive real
 * sockets through the app's own token checks and revocations (revocation.test.ts).
 *
 * One app listening, or under OPENALERTS_TEST_WORKERS=N (test/workers-switch.ts) the workers of
 * `serve --workers N` without Redis: N apps built as a worker builds its app (buildApp with the
 * worker role of src/cluster/worker-role.ts) on one SQLite file, each reaching the primary's side
 * (broker authority, counters, revocations passed on: test/cluster/ipc-primary.ts) over a real IPC
 * channel, and one port whose TCP connections alternate between them as node:cluster's round robin
 * hands them out. `t.app` is the first worker's app: what a test does through it (a revocation, a
 * page) happens on that worker while its sockets sit on all of them. The primary here runs no
 * outbox relay: these suites publish nothing through the outbox (the process-based workers tests
 * cover the relay).
 */
export async function realtimeTestApp(): Promise<{ t: TestApp; wsUrl: string }> {
  const count = defaultTestWorkers();
  if (count <= 1) {
    const t = await buildTestApp();
    return { t, wsUrl: (await listen(t.app)).replace('http', 'ws') };
  }
  const testDb = await openTestDatabase('sqlite');
  const config = testConfig(testDb.env);
  // Loaded once, as the primary does before it forks: the workers read the same secrets.
  const secrets = loadSecrets(config);
  const broker = new MemoryBroker();
  // A worker's commit notice wakes the primary's relay and dispatcher: there are none here.
  const primary = await ipcPrimary(count, broker);
  const apps: FastifyInstance[] = [];
  for (const link of primary.links) {
    // Each on a database connection of its own, as each worker opens one.
    const app = await buildApp(config, { logger: false, secrets, worker: workerRole(link, true) });
    await app.ready();
    apps.push(app);
  }
  let turn = 0;
  const front = net.createServer((socket) => apps[turn++ % apps.length]!.server.emit('connection', socket));
  front.listen(0, '127.0.0.1');
  await once(front, 'listening');
  const port = (front.address() as AddressInfo).port;
  const t: TestApp = {
    app: apps[0]!,
    config,
    database: testDb.database,
    env: { ...testDb.env, DATA_DIR: config.dataDir },
    async close() {
      await new Promise<void>((resolve) => {
        front.close(() => resolve());
        for (const app of apps) app.server.closeAllConnections();
      });
      for (const app of apps) await app.close();
      await primary.close();
      await broker.close();
      await testDb.drop();
    },
  };
  return { t, wsUrl: `ws://127.0.0.1:${port}` };
}
