import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { allDeliveriesOf } from '../../src/modules/webhooks/webhooks.repository.js';
import { dialects, issueToken, makeApp, makeUser } from '../helper.js';
import { until } from '../wait.js';
import { Receiver } from './receiver.js';
import { twoNodes } from './fixture.js';

const EVENTS = 40;
/** How long the receiver takes to answer: long enough that two nodes sending at once would overlap. */
const ANSWER_MS = 30;

/**
 * Issue 11 "with several nodes each delivery is attempted by one node at a time": two nodes on one
 * database, one subscription whose receiver fails every message's first attempt (so each message is
 * retried, and either node may take the retry) and answers slowly. The receiver never has two
 * requests of the subscription in flight, each message is tried exactly twice, and the first
 * arrivals are in order. The burst test (burst.test.ts) has no failures, so no retries to race.
 */
describe('two nodes, a failing slow receiver: one attempt at a time', { concurrency: true }, async () => {
  for (const dialect of await dialects()) {
    test(`never two requests in flight, each message tried exactly twice, in order (${dialect})`, async (t) => {
      const { nodes, database, node0, closers } = await twoNodes(t, dialect);
      const db = database.db;
      const user = await makeUser(db);
      const { app: client } = await makeApp(node0, user.id);
      const token = await issueToken(node0, { userId: user.id, clientId: client.client_id, scopes: ['oauth-donation-subscribe'] });

      const receiver = await Receiver.start();
      closers.push(() => receiver.close());
      let inFlight = 0;
      let maxInFlight = 0;
      const seen = new Map<string, number>();
      receiver.behave = (request) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        // Registered before the receiver's own timer of the same delay: counted out before the answer leaves.
        setTimeout(() => inFlight--, ANSWER_MS);
        const id = String(request.headers['webhook-id']);
        const n = (seen.get(id) ?? 0) + 1;
        seen.set(id, n);
        return { status: n === 1 ? 500 : 200, delayMs: ANSWER_MS };
      };
      // Subscribed through the second node, so the first one learns of it from the database.
      const created = await nodes[1]!.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${token}` }, payload: { url: receiver.url, events: ['donation.created'] } });
      assert.equal(created.statusCode, 201, created.body);
      const subscriptionId = created.json().data.id as number;

      // Which nodes held the queue's lease over the run: a diagnostic (which node wins a claim is not ours to fix).
      const owners = new Set<string>();
      const sampler = setInterval(() => {
        void db.selectFrom('webhook_subscriptions').select('lease_owner').where('id', '=', subscriptionId).executeTakeFirst().then((row) => {
          if (row?.lease_owner) owners.add(row.lease_owner);
        }, () => {});
      }, 5);
      closers.push(async () => clearInterval(sampler));

      const ids: number[] = [];
      await db.transaction().execute(async (tx) => {
        for (let j = 0; j < EVENTS; j++) ids.push((await createDonation(tx, { userId: user.id, amount: 1, currency: 'USD', username: `d${j}` })).id);
      });
      await until(async () => {
        const rows = await allDeliveriesOf(db, subscriptionId);
        return rows.length === EVENTS && rows.every((d) => d.status === 'delivered');
      }, 120_000, `${EVENTS} deliveries delivered`);

      assert.equal(maxInFlight, 1, 'never two requests of one subscription at once');
      assert.equal(receiver.received.length, 2 * EVENTS, 'each message: one failure, one success, nothing more');
      assert.ok([...seen.values()].every((n) => n === 2));
      const arrivals = receiver.received.map((r) => r.json.data.id as number);
      assert.deepEqual(arrivals.filter((id, i) => arrivals.indexOf(id) === i), ids, 'first arrivals in order');
      // Each message's retry came right after its failure: nothing overtook a failing head.
      for (let i = 0; i < arrivals.length; i += 2) assert.equal(arrivals[i], arrivals[i + 1], `message ${i / 2} retried before the next went out`);
      clearInterval(sampler);
      t.diagnostic(`lease held by ${owners.size} node(s) over the run`);
    });
  }
});
