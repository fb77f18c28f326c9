import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import { dialects, issueToken, makeApp, makeUser } from '../helper.js';
import { until } from '../wait.js';
import { Receiver } from './receiver.js';
import { twoNodes } from './fixture.js';

const BURST = Number(process.env.BURST ?? 1000);
const DIALECTS = await dialects();

/**
 * Figures for a 1,000-event burst with two nodes sharing one database: every event reaches each of
 * two subscriptions exactly once (the receivers never fail, so nothing is retried) and in order,
 * whichever node delivered it — the lease keeps one node on a subscription at a time.
 */
/** Events written per transaction: the burst is in the database at once, in order, without 1,000 commits' wait. */
const WRITE_CHUNK = 100;

// The two dialects at once: separate databases, nodes and receivers.
describe(`a ${BURST}-event burst, two nodes`, { concurrency: true }, () => {
  for (const dialect of DIALECTS) {
    test(`all delivered once, in order per subscription (${dialect})`, async (t) => {
      const { nodes, database, node0, closers } = await twoNodes(t, dialect, { env: process.env.BURST_DEBUG ? { LOG_LEVEL: 'warn' } : {}, logger: Boolean(process.env.BURST_DEBUG) });
      const db = database.db;
      const user = await makeUser(db);
      const { app: client } = await makeApp(node0, user.id);
      const token = await issueToken(node0, { userId: user.id, clientId: client.client_id, scopes: [...ALL_SCOPES] });
      const receivers = [await Receiver.start(), await Receiver.start()];
      closers.push(async () => {
        for (const r of receivers) await r.close();
      });
      for (const [i, r] of receivers.entries()) {
        const response = await nodes[i]!.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${token}` }, payload: { url: r.url, events: ['donation.created'] } });
        assert.equal(response.statusCode, 201, response.body);
      }
      const ids: number[] = [];
      for (let i = 0; i < BURST; i += WRITE_CHUNK) {
        await db.transaction().execute(async (tx) => {
          for (let j = i; j < Math.min(BURST, i + WRITE_CHUNK); j++) ids.push((await createDonation(tx, { userId: user.id, amount: 1 + (j % 50), currency: 'USD', username: `d${j}` })).id);
        });
      }
      if (process.env.BURST_DEBUG) {
        // Unref'd and cleared by the closers: a timed-out wait must not leave the process running.
        const progress = setInterval(() => process.stderr.write(`${receivers.map((r) => r.received.length)}\n`), 1000).unref();
        closers.push(async () => clearInterval(progress));
      }
      for (const r of receivers) await until(() => r.received.length >= BURST, 120_000, `${BURST} deliveries`);
      for (const r of receivers) {
        const got = r.received.map((x) => x.json.data.id as number);
        assert.equal(got.length, BURST, 'no duplicates');
        assert.deepEqual(got, ids, 'in order');
        assert.equal(new Set(r.ids()).size, BURST);
      }
    });
  }
});
