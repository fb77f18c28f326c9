import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Broker, Publication } from '../../src/realtime/broker.js';
import { Hub, Subscription, type HubClient } from '../../src/realtime/hub.js';

const CHANNEL = '$alerts:donation_7';
const broker = { subscribe: async () => {}, unsubscribe: async () => {} } as unknown as Broker;
const pub = (offset: number): Publication => ({ offset, epoch: 'e', data: `{"n":${offset}}` });

/** A legacy-protocol client recording each message it is sent; `cost` ms of busy work per message. */
function client(cost = 0): HubClient & { messages: string[] } {
  const messages: string[] = [];
  return {
    legacy: true,
    messages,
    deliver(frame) {
      messages.push(frame.toString());
      const until = performance.now() + cost;
      while (performance.now() < until);
    },
  };
}

async function subscribed(hub: Hub, c: HubClient): Promise<void> {
  await hub.add(new Subscription(c, CHANNEL));
}

test('flush sends what idle fan-out just got at once, the publications of the moment together in one message', async () => {
  const hub = new Hub(broker, () => {});
  const c = client();
  await subscribed(hub, c);
  hub.broadcast(CHANNEL, pub(1));
  hub.broadcast(CHANNEL, pub(2));
  assert.equal(c.messages.length, 0, 'broadcast alone waits for the check phase');
  hub.flush();
  assert.equal(c.messages.length, 1);
  assert.equal(c.messages[0]!.split('\n').length, 2, 'both publications in one message');
  assert.equal(hub.pendingPublications, 0);
  // Nothing is sent twice when the slice that was queued would have run.
  await new Promise((r) => setImmediate(r));
  assert.equal(c.messages.length, 1);
  hub.flush();
  assert.equal(c.messages.length, 1, 'nothing queued: flush does nothing');
});

test('while fan-out is behind, flush leaves the queue to the slices (one per turn) and order is kept', async () => {
  const hub = new Hub(broker, () => {}, 1);
  const clients = Array.from({ length: 100 }, () => client(0.1));
  for (const c of clients) await subscribed(hub, c);
  hub.broadcast(CHANNEL, pub(1));
  hub.flush();
  const sentInFirstSlice = clients.filter((c) => c.messages.length > 0).length;
  assert.ok(sentInFirstSlice > 0 && sentInFirstSlice < clients.length, `the first slice stopped at its deadline (${sentInFirstSlice} sent)`);
  hub.broadcast(CHANNEL, pub(2));
  hub.flush();
  assert.equal(clients.filter((c) => c.messages.length > 0).length, sentInFirstSlice, 'a flush while behind sends nothing');
  while (hub.pendingPublications > 0) await new Promise((r) => setImmediate(r));
  for (const c of clients) {
    const offsets = c.messages.flatMap((m) => m.split('\n')).map((line) => JSON.parse(line).result.data.offset);
    assert.deepEqual(offsets, [1, 2]);
  }
});
