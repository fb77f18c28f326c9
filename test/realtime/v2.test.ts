import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { SECRET, startServer, type TestServer } from './helpers.js';
import { closeReason, RawClient } from '../ws-client.js';
import { sleep } from '../wait.js';

/** Raw modern-protocol frames (Centrifugo v4+ JSON, centrifuge-js ≥ 3). */
describe('modern protocol (centrifuge-js >= 3)', () => {
  let s: TestServer;
  before(async () => {
    // Default pings (every 25 s): a ping frame must not come between a test's command and its reply.
    s = await startServer();
  });
  after(() => s.close());

  async function connected(user = '42', url = s.wsUrl): Promise<{ c: RawClient; client: string; reply: any }> {
    const c = await RawClient.open(url);
    c.send({ id: 1, connect: { token: await signConnectionToken(SECRET, user), name: 'js' } });
    const reply = await c.next();
    return { c, client: reply.connect?.client, reply };
  }

  test('connect reply, subscribe bound to the user (client claim ignored), publication push', async () => {
    const { c, client, reply } = await connected();
    assert.equal(reply.id, 1);
    assert.equal(reply.connect.version, 'test');
    assert.equal(reply.connect.ping, 25);
    assert.equal(reply.connect.pong, true);
    const channel = '$alerts:donation_42';
    // A token minted for another client id of the same user is accepted (compatibility.md §5).
    const token = await signChannelToken(SECRET, { client: 'previous-connection', channel, sub: '42' });
    c.send({ id: 2, subscribe: { channel, token, flag: 1 } });
    const sub = await c.next();
    assert.deepEqual(Object.keys(sub).sort(), ['id', 'subscribe']);
    assert.equal(sub.subscribe.recoverable, true);
    assert.equal(sub.subscribe.positioned, true);
    assert.equal(sub.subscribe.offset, 0);
    assert.equal(typeof sub.subscribe.epoch, 'string');
    assert.equal(client.length, 36);
    await s.node.publish(channel, { id: 1, reason: 'default' });
    assert.deepEqual(await c.next(), { push: { channel, pub: { data: { id: 1, reason: 'default' }, offset: 1 } } });
    c.close();
  });

  test('103 for a token of another user or channel; join push only with join_leave', async () => {
    const { c } = await connected('42');
    const channel = '$goals:goal_42';
    c.send({ id: 2, subscribe: { channel, token: await signChannelToken(SECRET, { channel, sub: '43' }) } });
    assert.deepEqual(await c.next(), { id: 2, error: { code: 103, message: 'permission denied' } });
    c.send({ id: 3, subscribe: { channel, token: await signChannelToken(SECRET, { channel: '$goals:goal_43', sub: '42' }) } });
    assert.equal((await c.next()).error.code, 103);
    c.send({ id: 4, subscribe: { channel, token: await signChannelToken(SECRET, { channel, sub: '42' }), join_leave: true } });
    assert.equal((await c.next()).id, 4);
    const join = await c.next();
    assert.equal(join.push.channel, channel);
    assert.equal(join.push.join.info.user, '42');
    c.send({ id: 5, unknown_method: {} });
    assert.equal((await c.next()).error.code, 104);
    c.close();
  });

  test('server pings {} and a client answering {} stays; one that does not is closed (3012)', async () => {
    // A server of its own with a short ping period; the pong timeout leaves room for a loaded
    // machine's slow answer (with 300 ms, an answer that late was taken for none).
    const pinging = await startServer({ pingIntervalMs: 1000, pongTimeoutMs: 3000 });
    try {
      const { c } = await connected('42', pinging.wsUrl);
      const ping = await c.nextRaw();
      assert.equal(ping, '{}');
      c.send({});
      const again = await c.nextRaw();
      assert.equal(again, '{}');
      // Not answering this one: closed after pongTimeoutMs.
      const closed = await c.closed;
      assert.equal(closed.code, 3012);
      assert.deepEqual(closeReason(closed), { reason: 'no pong', reconnect: true });
    } finally {
      await pinging.close();
    }
  });

  test('recovery: publications oldest first, offset = position recovered from; 112 only when asked', async () => {
    const channel = '$polls:poll_42';
    const token = await signChannelToken(SECRET, { channel, sub: '42' });
    const a = await connected();
    a.c.send({ id: 2, subscribe: { channel, token } });
    const sub = (await a.c.next()).subscribe;
    a.c.close();
    await s.node.publish(channel, { n: 1 });
    await s.node.publish(channel, { n: 2 });

    const b = await connected();
    b.c.send({ id: 2, subscribe: { channel, token, recover: true, offset: sub.offset, epoch: sub.epoch } });
    const r = (await b.c.next()).subscribe;
    assert.equal(r.recovered, true);
    assert.equal(r.was_recovering, true);
    assert.equal(r.offset, sub.offset);
    assert.deepEqual(r.publications, [{ data: { n: 1 }, offset: 1 }, { data: { n: 2 }, offset: 2 }]);
    b.c.close();

    const c = await connected();
    c.c.send({ id: 2, subscribe: { channel, token, recover: true, offset: 1, epoch: 'other-epoch' } });
    const notRecovered = (await c.c.next()).subscribe;
    assert.equal(notRecovered.recovered, undefined);
    assert.equal(notRecovered.was_recovering, true);
    assert.equal(notRecovered.offset, 2);
    // centrifuge-js sets flag bit 2 (reject unrecovered) when it can reload state itself.
    c.c.send({ id: 3, subscribe: { channel: '$polls:poll_42', token, recover: true, offset: 1, epoch: 'other-epoch', flag: 3 } });
    assert.equal((await c.c.next()).error?.code, 105);
    c.c.close();

    const d = await connected();
    d.c.send({ id: 2, subscribe: { channel, token, recover: true, offset: 1, epoch: 'other-epoch', flag: 3 } });
    assert.deepEqual(await d.c.next(), { id: 2, error: { code: 112, message: 'unrecoverable position' } });
    // The failed subscribe left nothing behind: a plain subscribe works.
    d.c.send({ id: 3, subscribe: { channel, token } });
    assert.equal((await d.c.next()).subscribe.offset, 2);
    d.c.close();
  });

  test('?cf_protocol_version=v2 selects the modern protocol before any frame', async () => {
    const c = await RawClient.open(`${s.wsUrl}?cf_protocol_version=v2`);
    // A legacy connect frame is no modern connect: the connection is closed as a bad request.
    c.send({ id: 1, params: { token: await signConnectionToken(SECRET, '1') } });
    assert.equal((await c.closed).code, 3501);
    const ok = await connected('1', `${s.wsUrl}?cf_protocol_version=v2`);
    assert.equal(typeof ok.client, 'string');
    ok.c.close();
  });

  test('a legacy and a modern subscriber of one channel each get their own encoding', async () => {
    const channel = '$alerts:donation_5';
    const m = await connected('5');
    m.c.send({ id: 2, subscribe: { channel, token: await signChannelToken(SECRET, { channel, sub: '5' }) } });
    await m.c.next();
    const l = await RawClient.open(s.wsUrl);
    l.send({ id: 1, params: { token: await signConnectionToken(SECRET, '5') } });
    const client = (await l.next()).result.client;
    l.send({ id: 2, method: 1, params: { channel, token: await signChannelToken(SECRET, { channel, client }) } });
    await l.next();
    await l.next();
    await s.node.publish(channel, { hello: 'world' });
    assert.equal(await m.c.nextRaw(), `{"push":{"channel":"${channel}","pub":{"data":{"hello":"world"},"offset":1}}}`);
    assert.equal(await l.nextRaw(), `{"result":{"channel":"${channel}","data":{"data":{"hello":"world"},"offset":1,"seq":1}}}`);
    m.c.close();
    l.close();
    await sleep(10);
  });
});
