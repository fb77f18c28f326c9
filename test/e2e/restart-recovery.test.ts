import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { loadSecrets } from '../../src/config/secrets.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { makeUser } from '../helper.js';
import { freePort, startServerProcess, type ServerProcess } from '../process.js';
import { postgresBackend, sqliteBackend, type ServerBackend } from '../server-backend.js';
import { sleep, until } from '../wait.js';

/**
 * A subscriber (centrifuge-js 5) stays subscribed while the server process stops — cleanly or by
 * kill -9 in the middle of publishing — and starts again on the same port, while donations keep
 * being written by another process (this one). It must see every donation exactly once, at
 * consecutive offsets, and its re-subscription must report `recovered: true`: the channel keeps its
 * epoch and history across the restart (in the outbox with the in-memory broker, in Redis with it).
 *
 * The waits are bounds on conditions, generous for a loaded machine: a restart is a new Node process
 * loading the server, CPU-bound (at load 15–18 on 2 CPUs up to 15 s, quiet about 1 s). It waits for
 * nothing of the killed process — PostgreSQL ends a killed client's backend, and its locks, as
 * soon as the socket closes; Redis likewise.
 */
const BOUND_MS = 60_000;
const cases: { name: string; signal: NodeJS.Signals; setup: () => Promise<ServerBackend | null> }[] = [
  { name: 'SQLite, in-memory broker, SIGTERM', signal: 'SIGTERM', setup: sqliteBackend },
  { name: 'SQLite, in-memory broker, kill -9', signal: 'SIGKILL', setup: sqliteBackend },
  { name: 'PostgreSQL, in-memory broker, kill -9', signal: 'SIGKILL', setup: () => postgresBackend({ redis: false, name: 'restart' }) },
  { name: 'PostgreSQL + Redis, kill -9', signal: 'SIGKILL', setup: () => postgresBackend({ redis: true, name: 'restart' }) },
];

for (const c of cases) {
  describe(`restart recovery: ${c.name}`, async () => {
    const setup = await c.setup();
    after(async () => setup?.cleanup());

    test('the subscriber recovers every missed donation once, at consecutive offsets, in the same epoch', { skip: setup ? false : 'PostgreSQL or Redis unreachable (set CI to make this fail)' }, async () => {
      const s = setup!;
      const port = String(await freePort());
      // History large enough for everything written while the server is down (at most a few hundred).
      const env = { ...s.env, PORT: port, HISTORY_SIZE: '2000' };
      let server: ServerProcess | null = await startServerProcess(env, BOUND_MS);
      const db = s.database().db;
      const streamer = await makeUser(db, { currency: 'EUR' });
      const secret = loadSecrets({ dataDir: s.dataDir, secretKey: null, realtimeTokenSecret: null }).realtimeTokenSecret;
      const channel = `$alerts:donation_${streamer.id}`;

      const client = new Centrifuge(`ws://127.0.0.1:${port}/connection/websocket`, {
        websocket: WebSocket,
        token: await signConnectionToken(secret, streamer.id, 3600),
        minReconnectDelay: 100,
        maxReconnectDelay: 500,
      });
      const sub = client.newSubscription(channel, { getToken: () => signChannelToken(secret, { channel, sub: String(streamer.id) }) });
      const got: { id: number; offset: number }[] = [];
      const subscribed: { recovered: boolean; wasRecovering: boolean; epoch?: string }[] = [];
      sub.on('publication', (ctx) => got.push({ id: ctx.data.id, offset: Number(ctx.offset) }));
      sub.on('subscribed', (ctx) => subscribed.push({ recovered: ctx.recovered, wasRecovering: ctx.wasRecovering, epoch: ctx.streamPosition?.epoch }));
      client.connect();
      sub.subscribe();
      await until(() => subscribed.length === 1, BOUND_MS, 'the subscription');

      const written: number[] = [];
      let writing = true;
      const writer = (async () => {
        while (writing) {
          written.push((await createDonation(db, { userId: streamer.id, amount: '1', currency: 'EUR', username: `d${written.length}` })).id);
          await sleep(30);
        }
      })();
      try {
        await until(() => got.length >= 5, BOUND_MS, 'the first donations');
        // Stop while donations are being published.
        await server.stop(c.signal);
        server = null;
        const whileDown = written.length;
        await until(() => written.length >= whileDown + 5, BOUND_MS, 'donations written while the server is down');
        server = await startServerProcess(env, BOUND_MS);
        await until(() => subscribed.length === 2, BOUND_MS, 'the re-subscription');
        const afterRestart = written.length;
        await until(() => written.length >= afterRestart + 5, BOUND_MS, 'donations after the restart');
        writing = false;
        await writer;
        await until(() => got.length >= written.length, BOUND_MS, `every donation`).catch((err) => {
          throw new Error(`${err.message}: got ${got.length} of ${written.length}; subscribed ${JSON.stringify(subscribed)}; offsets ${got.map((g) => g.offset).join(",")}\n${server?.output()}`);
        });
        await sleep(200); // no duplicate comes late

        const seen = JSON.stringify({ subscribed, got, written });
        assert.deepEqual(subscribed[1], { recovered: true, wasRecovering: true, epoch: subscribed[0]!.epoch }, seen);
        assert.deepEqual(got.map((g) => g.id), written, `every donation once, in order: ${seen}`);
        assert.deepEqual(got.map((g) => g.offset), written.map((_, i) => i + 1), `consecutive offsets from 1: ${seen}`);
      } finally {
        writing = false;
        await writer.catch(() => {});
        client.disconnect();
        await server?.stop('SIGKILL');
      }
    });
  });
}
