import assert from 'node:assert/strict';
import { test } from 'node:test';
import { closeReason } from '../ws-client.js';
import { until } from '../wait.js';
import { singleNodeOnly, startServer } from './helpers.js';
import { CHANNEL, offsets, publishWhile, received, subscriber, subscribers, TEXT_16K, upTo } from './subscribers.js';

test('a client that stops reading is closed with 3008 "slow" (reconnect) once its send buffer passes the limit; a reading one gets everything', singleNodeOnly('it counts on the close happening in step with the publishing loop, on one event loop; across nodes the close is seen a publication or more later'), async () => {
  const s = await startServer({ maxQueueBytes: 256 * 1024 });
  try {
    const reader = await subscriber(s.wsUrl);
    const slow = await subscriber(s.wsUrl);
    slow.ws.pause(); // reads nothing from here on: the kernel buffers fill, then the server's queue
    // Stops as soon as the server gave up on it.
    let published = await publishWhile((channel, data) => s.node.publish(channel, data), () => s.node.stats().clients === 2);
    assert.equal(s.node.stats().clients, 1, `the slow client was closed after ${published} publications`);
    assert.equal(s.node.stats().subscriptions, 1);
    const closedAfter = published;
    for (let i = 0; i < 5; i++) await s.node.publish(CHANNEL, { n: ++published, text: TEXT_16K });

    // The reader was never held back: every publication, in order.
    await until(() => offsets(reader).length === published, 10_000, 'every publication at the reader');
    assert.deepEqual(offsets(reader), upTo(published));

    // Reading again, the slow client finds what was queued before the limit, then the close frame.
    slow.ws.resume();
    const closed = await slow.closed;
    assert.equal(closed.code, 3008);
    assert.deepEqual(closeReason(closed), { reason: 'slow', reconnect: true });
    const got = offsets(slow);
    assert.deepEqual(got, upTo(closedAfter), 'what was queued before the close, in order; nothing after it');
    reader.close();
  } finally {
    await s.close();
  }
});

test('a burst of fan-out yields to the event loop: HTTP is answered while publications are still going out, and every subscriber gets every publication in order', singleNodeOnly('the burst reaches the hub at once because the memory broker hands each publication over synchronously; through the primary each arrives a round trip later'), async () => {
  const s = await startServer();
  const other = '$goals:goal_5';
  try {
    const subs = await subscribers(s.wsUrl, 200, [CHANNEL, other]);
    let pendingWhenAnswered = -1;
    s.server.prependListener('request', (req) => {
      if (req.url === '/probe') pendingWhenAnswered = s.node.pendingPublications;
    });

    // 100 publications reach the hub at once (the memory broker hands them over synchronously),
    // alternating between two channels so that none go out together in one message: 20 000
    // socket writes to make before the request below is even sent.
    const burst = 100;
    for (let n = 1; n <= burst; n++) await s.node.publish(n % 2 ? CHANNEL : other, { n });
    assert.ok(s.node.pendingPublications > 0);
    const res = await fetch(`${s.httpUrl}/probe`);
    assert.equal(res.status, 404); // the helper server's answer to an unknown path
    assert.ok(pendingWhenAnswered > 0, `the request was handled between fan-out slices (${pendingWhenAnswered} publications still going out)`);

    await until(() => subs.every((c) => received(c).length === burst), 20_000, 'every publication at every subscriber');
    for (const c of subs) assert.deepEqual(received(c), upTo(burst), 'in publication order');
    assert.equal(s.node.pendingPublications, 0);
    for (const c of subs) c.close();
  } finally {
    await s.close();
  }
});

test('publications that pile up while fan-out is behind go out together, one message per subscriber', singleNodeOnly('the ten pile up only when the broker hands them over synchronously, before the first slice'), async () => {
  const s = await startServer();
  try {
    const a = await subscriber(s.wsUrl);
    let messages = 0;
    a.ws.on('message', () => messages++);
    for (let n = 1; n <= 10; n++) await s.node.publish(CHANNEL, { n });
    await until(() => offsets(a).length === 10, 20_000, 'ten publications');
    assert.deepEqual(offsets(a), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    assert.equal(messages, 1, 'the ten were queued before the first slice: one message, ten lines');
    a.close();
  } finally {
    await s.close();
  }
});
