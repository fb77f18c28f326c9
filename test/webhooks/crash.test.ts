import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadSecrets } from '../../src/config/secrets.js';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { MAX_UNRECORDED } from '../../src/modules/webhooks/webhooks.dispatcher.js';
import { allDeliveriesOf } from '../../src/modules/webhooks/webhooks.repository.js';
import { TokenStore } from '../../src/oauth/token-store.js';
import { IN_CI, makeUser } from '../helper.js';
import { freePort, startServerProcess, type ServerProcess } from '../process.js';
import { postgresBackend, sqliteBackend, type ServerBackend } from '../server-backend.js';
import { until } from '../wait.js';
import { Receiver } from './receiver.js';

/**
 * Enough events that both kills land mid-burst with events still queued behind them; more only
 * lengthen the run (CI time), they prove nothing more.
 */
const EVENTS = 120;
/** Kill the server once the receiver has seen this many deliveries (then restart it). */
const KILL_AT = [30, 70];
/** Events written per transaction by this process: the burst is there at once, in order. */
const WRITE_CHUNK = 40;

/**
 * Webhook delivery survives `kill -9`: a real `openalerts serve` delivers a burst to a receiver in
 * this process and is killed twice mid-burst and restarted on the same data directory. Every event
 * arrives (at least once: those answered and not yet recorded at a kill arrive twice, with the same webhook-id), the
 * first arrivals are in order, and every delivery ends `delivered`.
 */
const backends: { name: string; setup: () => Promise<ServerBackend | null> }[] = [
  { name: 'SQLite', setup: sqliteBackend },
  { name: 'PostgreSQL', setup: () => postgresBackend({ redis: false, name: 'webhooks-crash' }) },
];

// The two dialects at once: separate servers, data, ports and receivers; each waits on I/O mostly.
describe('webhooks across kill -9', { concurrency: true }, () => {
  for (const b of backends) {
    test(`every event delivered, in order, after two kills (${b.name})`, async (t) => {
      const backend = await b.setup();
      if (!backend && !IN_CI) return t.skip('PostgreSQL unreachable');
      assert.ok(backend);
      const receiver = await Receiver.start();
      let server: ServerProcess | null = null;
      t.after(async () => {
        await server?.stop('SIGKILL');
        await receiver.close();
        await backend.cleanup();
      });
      // Slow enough answers that a kill lands mid-burst.
      receiver.behave = () => ({ status: 200, delayMs: 5 });
      const port = await freePort();
      const env = { ...backend.env, PORT: String(port), WEBHOOKS_ALLOW_HTTP: '1', WEBHOOKS_RETRY_BASE_MS: '50' };
      server = await startServerProcess(env, 60_000);
      const db = backend.database().db;
      const secrets = loadSecrets({ dataDir: backend.dataDir, secretKey: null, realtimeTokenSecret: null });
      const user = await makeUser(db, { currency: 'USD' });
      const { app } = await createApp(db, secrets.encryptionKey, { ownerId: user.id, name: 'Crash bot', redirectUris: ['https://crash.example/cb'] });
      const tokens = new TokenStore(db, { accessTokenTtl: 3600, refreshTokenTtl: 3600 });
      const grantId = await tokens.createGrant(db, { clientId: app.client_id, userId: user.id, scopes: ['oauth-donation-subscribe'], kind: 'authorization_code' });
      const token = (await tokens.issue(db, { grantId, clientId: app.client_id, userId: user.id, scopes: ['oauth-donation-subscribe'] }, false)).accessToken;
      const created = await fetch(`${server.url}/api/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events: ['donation.created'] }),
      });
      const answer = await created.text();
      assert.equal(created.status, 201, answer);
      const subscriptionId = JSON.parse(answer).data.id as number;

      // The events are written by this process (as the CLI would): the server finds them by polling.
      const ids: number[] = [];
      for (let i = 0; i < EVENTS; i += WRITE_CHUNK) {
        await db.transaction().execute(async (tx) => {
          for (let j = i; j < Math.min(EVENTS, i + WRITE_CHUNK); j++) ids.push((await createDonation(tx, { userId: user.id, amount: 1, currency: 'USD', username: `d${j}` })).id);
        });
      }

      for (const at of KILL_AT) {
        await until(() => receiver.received.length >= at, 120_000, `${at} deliveries before the kill`);
        await server.stop('SIGKILL');
        server = await startServerProcess(env, 60_000);
      }
      await until(() => new Set(receiver.received.map((r) => r.json.data.id)).size >= EVENTS, 120_000, 'every event delivered');

      const arrivals = receiver.received.map((r) => r.json.data.id as number);
      const firsts = arrivals.filter((id, i) => arrivals.indexOf(id) === i);
      assert.deepEqual(firsts, ids, 'first arrivals in order');
      const repeats = arrivals.length - firsts.length;
      // A repeat is a message answered but not yet recorded at a kill (or the one in flight), sent again with the same webhook-id.
      assert.ok(repeats <= KILL_AT.length * (MAX_UNRECORDED + 1), `at most ${MAX_UNRECORDED + 1} repeats per kill, got ${repeats}`);
      for (const r of receiver.received) assert.equal(r.headers['webhook-id'], receiver.received.find((x) => x.json.data.id === r.json.data.id)!.headers['webhook-id']);
      const rows = await until(async () => {
        const all = await allDeliveriesOf(db, subscriptionId);
        return all.every((d) => d.status === 'delivered') ? all : null;
      }, 30_000, 'every delivery marked delivered');
      assert.equal(rows.length, EVENTS);
      console.log(`# webhooks crash (${b.name}): ${KILL_AT.length} kills, ${EVENTS} events, ${repeats} repeated`);
    });
  }
});
