import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HttpSenderThread } from '../../src/modules/webhooks/http-sender-thread.js';
import { receivers, Receiver } from './receiver.js';

/** The dispatcher's HTTP thread: answers come back, kept connections are reused, a stopped thread fails what it held. */
describe('webhook HTTP sender thread', () => {
  const receiver = receivers();
  // A name, as most endpoints have: the socket goes to `address`, never to what the name resolves to.
  const request = (r: Receiver, body: string, address = '127.0.0.1') => ({ url: `http://localhost:${r.port}/hook`, address, family: 4, headers: { 'webhook-id': 'msg_1' }, body, timeoutMs: 2000, wholeBody: false });

  test('sends to the checked address over a kept-alive connection and hands the answer back', async () => {
    const r = await receiver();
    r.behave = () => ({ status: 202, body: 'taken' });
    const sender = new HttpSenderThread();
    try {
      assert.deepEqual(await sender.send(request(r, '{"n":1}')), { statusCode: 202, error: null, excerpt: 'taken' });
      assert.deepEqual(await sender.send(request(r, '{"n":2}')), { statusCode: 202, error: null, excerpt: 'taken' });
      assert.deepEqual(r.received.map((x) => x.json.n), [1, 2]);
      assert.equal(r.received[0]!.remotePort, r.received[1]!.remotePort, 'one connection');
      assert.equal(r.received[0]!.headers['webhook-id'], 'msg_1');
      // The checked address decides where the socket goes (nothing listens on 127.0.0.2).
      const refused = await sender.send(request(r, '{"n":3}', '127.0.0.2'));
      assert.equal(refused.statusCode, null);
      assert.match(refused.error!, /ECONNREFUSED/);
    } finally {
      await sender.close();
    }
  });

  test('a request under way when the thread stops is answered with an error, not left hanging', async () => {
    const r = await receiver();
    r.behave = () => 'hang';
    const sender = new HttpSenderThread();
    const pending = sender.send(request(r, '{}'));
    while (r.received.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await sender.close();
    const answer = await pending;
    assert.equal(answer.statusCode, null);
    assert.match(answer.error!, /delivery thread/);
  });
});
