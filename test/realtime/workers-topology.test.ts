/**
 * What the single-node cases of overload.test.ts assert about one node's scheduling, asserted
 * across the nodes of the workers topology instead (they are skipped there; see singleNodeOnly),
 * and the topology itself: connections alternate between the nodes, which share one stream per
 * channel through the primary.
 */
import '../workers-switch.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeReason, type RawClient } from '../ws-client.js';
import { sleep, until } from '../wait.js';
import { startServer, type TestServer } from './helpers.js';
import { CHANNEL, offsets, publishWhile, received, subscriber, subscribers, TEXT_16K, upTo } from './subscribers.js';
import type { WorkerNodes } from './workers-topology.js';

const nodes = (s: TestServer): WorkerNodes => s.node as WorkerNodes;
const pushes = (c: RawClient) => c.frames.flatMap((f) => (f.push?.channel === CHANNEL && f.push.pub ? [f.push.pub] : []));

test('connections alternate between the two nodes; a publication through either node reaches the subscribers of both once, in one stream', async () => {
  const s = await startServer();
  try {
    const a = await subscriber(s.wsUrl);
    const b = await subscriber(s.wsUrl);
    assert.deepEqual(
      nodes(s).all.map((n) => n.stats()),
      [
        { clients: 1, subscriptions: 1 },
        { clients: 1, subscriptions: 1 },
      ],
    );
    const [first, second] = nodes(s).all;
    const p1 = await first!.publish(CHANNEL, { n: 1 });
    const p2 = await second!.publish(CHANNEL, { n: 2 });
    assert.deepEqual([p1.offset, p2.offset, p2.epoch], [1, 2, p1.epoch]);
    await until(() => offsets(a).length === 2 && offsets(b).length === 2, 20_000, 'both publications on both nodes');
    await sleep(50); // a repeat would be here by now
    for (const c of [a, b]) assert.deepEqual(pushes(c), [{ data: { n: 1 }, offset: 1 }, { data: { n: 2 }, offset: 2 }]);
    a.close();
    b.close();
  } finally {
    await s.close();
  }
});

test('a client that stops reading on one node is closed with 3008 "slow"; a reader on the other node gets everything; the slow one got a gap-free prefix', async () => {
  const s = await startServer({ maxQueueBytes: 256 * 1024 });
  try {
    const reader = await subscriber(s.wsUrl);
    const slow = await subscriber(s.wsUrl);
    const slowNode = nodes(s).all[1]!;
    assert.equal(slowNode.stats().clients, 1, 'the slow client is on the second node');
    slow.ws.pause();
    let published = await publishWhile((channel, data) => s.node.publish(channel, data), () => slowNode.stats().clients === 1);
    assert.equal(slowNode.stats().clients, 0, `the slow client was closed after ${published} publications`);
    const closedAfter = published;
    for (let i = 0; i < 5; i++) await s.node.publish(CHANNEL, { n: ++published, text: TEXT_16K });
    await until(() => offsets(reader).length === published, 10_000, 'every publication at the reader');
    assert.deepEqual(offsets(reader), upTo(published));

    slow.ws.resume();
    const closed = await slow.closed;
    assert.equal(closed.code, 3008);
    assert.deepEqual(closeReason(closed), { reason: 'slow', reconnect: true });
    // Its node closed it on a publication that arrived before the loop saw the close: what it got
    // is every publication up to one at or before that point, in order, and nothing after.
    const got = offsets(slow);
    assert.ok(got.length > 0 && got.length <= closedAfter, `${got.length} of ${closedAfter}`);
    assert.deepEqual(got, upTo(got.length));
    reader.close();
  } finally {
    await s.close();
  }
});

test('a burst published in the primary (as its outbox relay does) reaches every subscriber on both nodes, each publication once, in order', async () => {
  const s = await startServer();
  const other = '$goals:goal_5';
  try {
    const subs = await subscribers(s.wsUrl, 40, [CHANNEL, other]);
    assert.deepEqual(
      nodes(s).all.map((n) => n.stats().clients),
      [20, 20],
    );
    const burst = 100;
    const history = { historySize: 1000, historyTtlMs: 60_000, historyMetaTtlMs: 0 };
    // Not awaited one by one: the primary's broker fans each out to the workers as it is published.
    await Promise.all(Array.from({ length: burst }, (_, i) => s.broker.publish(i % 2 ? other : CHANNEL, JSON.stringify({ n: i + 1 }), history)));
    await until(() => subs.every((c) => received(c).length === burst), 20_000, 'every publication at every subscriber');
    for (const c of subs) assert.deepEqual(received(c), upTo(burst), 'in publication order');
    assert.equal(s.node.pendingPublications, 0);
    for (const c of subs) c.close();
  } finally {
    await s.close();
  }
});
