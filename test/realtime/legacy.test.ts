import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import type { HistoryOptions, HistoryResult } from '../../src/realtime/broker.js';
import { MemoryBroker } from '../../src/realtime/broker-memory.js';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { SECRET, startServer, type TestServer } from './helpers.js';
import { closeReason, RawClient } from '../ws-client.js';
import { sleep } from '../wait.js';

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** Raw legacy-protocol conversation, frame by frame, as compatibility.md §5 states it. */
describe('legacy protocol (centrifuge-js 2.x / Centrifugo v2 JSON)', () => {
  let s: TestServer;
  before(async () => {
    // The default connect timeout (25 s): with a short one, a loaded machine's slow first frame
    // was taken for a client that never connects.
    s = await startServer();
  });
  after(() => s.close());

  async function connected(user = '42'): Promise<{ c: RawClient; client: string }> {
    const c = await RawClient.open(s.wsUrl);
    c.send({ params: { token: await signConnectionToken(SECRET, user) }, id: 1 });
    const r = await c.next();
    return { c, client: r.result.client };
  }

  test('connect, subscribe reply then JOIN push, publication, ping', async () => {
    const c = await RawClient.open(s.wsUrl);
    c.send({ params: { token: await signConnectionToken(SECRET, 42, 3600) }, id: 1 });
    const conn = await c.next();
    assert.deepEqual(Object.keys(conn).sort(), ['id', 'result']);
    assert.equal(conn.id, 1);
    assert.match(conn.result.client, UUID_V4);
    assert.equal(conn.result.version, 'test');

    const channel = '$alerts:donation_42';
    const token = await signChannelToken(SECRET, { client: conn.result.client, channel });
    c.send({ params: { channel, token }, method: 1, id: 2 });
    const sub = await c.next();
    assert.equal(typeof sub.result.epoch, 'string');
    assert.deepEqual(sub, { id: 2, result: { recoverable: true, epoch: sub.result.epoch, offset: 0, seq: 0 } });
    const join = await c.next();
    assert.deepEqual(join, { result: { type: 1, channel, data: { info: { user: '42', client: conn.result.client } } } });

    const payload = { id: 7, name: 'Donor', amount: 10, reason: 'default' };
    const pos = await s.node.publish(channel, payload);
    assert.equal(pos.offset, 1);
    assert.deepEqual(await c.next(), { result: { channel, data: { data: payload, offset: 1, seq: 1 } } });

    c.send({ method: 7, id: 3 });
    assert.equal(await c.nextRaw(), '{"id":3}');
    c.close();
  });

  test('several commands in one frame, one reply per frame; PascalCase keys and string method names', async () => {
    const c = await RawClient.open(s.wsUrl);
    const token = await signConnectionToken(SECRET, '5');
    c.send(`{"Id":1,"Params":{"Token":"${token}"}}\n{"Id":2,"Method":7}\n{"id":3,"method":"ping"}`);
    const frames = [await c.nextRaw(), await c.nextRaw(), await c.nextRaw()];
    assert.equal(JSON.parse(frames[0]).id, 1);
    assert.ok(!frames[0].includes('\n'));
    assert.deepEqual(frames.slice(1), ['{"id":2}', '{"id":3}']);
    const client = JSON.parse(frames[0]).result.client;
    const channel = '$goals:goal_5';
    const ct = await signChannelToken(SECRET, { client, channel });
    c.send({ Id: 4, Method: 'SUBSCRIBE', Params: { Channel: channel, Token: ct } });
    assert.equal((await c.next()).id, 4);
    assert.equal((await c.next()).result.type, 1);
    c.close();
  });

  test('errors: 103 wrong client or channel, 105 twice, 104 unknown method, 109 expired channel token', async () => {
    const { c, client } = await connected();
    const channel = '$alerts:donation_42';
    c.send({ method: 1, id: 2, params: { channel, token: await signChannelToken(SECRET, { client: 'someone-else', channel }) } });
    assert.deepEqual(await c.next(), { id: 2, error: { code: 103, message: 'permission denied' } });
    c.send({ method: 1, id: 3, params: { channel, token: await signChannelToken(SECRET, { client, channel: '$alerts:donation_1' }) } });
    assert.equal((await c.next()).error.code, 103);
    c.send({ method: 1, id: 4, params: { channel } });
    assert.equal((await c.next()).error.code, 103);
    c.send({ method: 1, id: 5, params: { channel, token: await signChannelToken(SECRET, { client, channel, ttlSeconds: -10 }) } });
    assert.deepEqual(await c.next(), { id: 5, error: { code: 109, message: 'token expired' } });
    c.send({ method: 42, id: 6 });
    assert.deepEqual(await c.next(), { id: 6, error: { code: 104, message: 'method not found' } });
    const ok = await signChannelToken(SECRET, { client, channel });
    c.send({ method: 1, id: 7, params: { channel, token: ok } });
    assert.equal((await c.next()).id, 7);
    assert.equal((await c.next()).result.type, 1);
    c.send({ method: 1, id: 8, params: { channel, token: ok } });
    assert.equal((await c.next()).error.code, 105);
    c.send({ method: 3, id: 9, params: { channel, data: {} } });
    assert.equal((await c.next()).error.code, 103, 'clients cannot publish');
    c.close();
  });

  test('106 past maxSubscriptionsPerClient', async () => {
    const t = await startServer({ maxSubscriptionsPerClient: 1 });
    try {
      const c = await RawClient.open(t.wsUrl);
      c.send({ params: { token: await signConnectionToken(SECRET, '1') }, id: 1 });
      const client = (await c.next()).result.client;
      for (const [id, channel] of [[2, '$polls:poll_1'], [3, '$goals:goal_1']] as const) {
        c.send({ method: 1, id, params: { channel, token: await signChannelToken(SECRET, { client, channel }) } });
      }
      assert.equal((await c.next()).id, 2);
      assert.equal((await c.next()).result.type, 1);
      assert.equal((await c.next()).error.code, 106);
    } finally {
      await t.close();
    }
  });

  test('expired connection token: error 109, connection stays open', async () => {
    const c = await RawClient.open(s.wsUrl);
    c.send({ params: { token: await signConnectionToken(SECRET, '1', -5) }, id: 1 });
    assert.deepEqual(await c.next(), { id: 1, error: { code: 109, message: 'token expired' } });
    c.send({ params: { token: await signConnectionToken(SECRET, '1') }, id: 2 });
    assert.equal((await c.next()).id, 2);
    c.close();
  });

  test('invalid connection token: close 3500, no reconnect', async () => {
    const c = await RawClient.open(s.wsUrl);
    const forged = await new SignJWT({ sub: '1' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('other-secret'));
    c.send({ params: { token: forged }, id: 1 });
    const closed = await c.closed;
    assert.equal(closed.code, 3500);
    assert.deepEqual(closeReason(closed), { reason: 'invalid token', reconnect: false });
  });

  test('bad JSON: close 3501', async () => {
    const { c } = await connected();
    c.send('{"id":2,"method":7');
    const closed = await c.closed;
    assert.equal(closed.code, 3501);
    assert.deepEqual(closeReason(closed), { reason: 'bad request', reconnect: false });
  });

  test('a first command other than connect: close 3501', async () => {
    const c = await RawClient.open(s.wsUrl);
    c.send({ method: 7, id: 1 });
    assert.equal((await c.closed).code, 3501);
  });

  test('not connected within connectTimeoutMs: close 3502 stale', async () => {
    const t = await startServer({ connectTimeoutMs: 400 });
    try {
      const c = await RawClient.open(t.wsUrl);
      const closed = await c.closed;
      assert.equal(closed.code, 3502);
      assert.deepEqual(closeReason(closed), { reason: 'stale', reconnect: false });
    } finally {
      await t.close();
    }
  });

  test('a frame over maxMessageBytes closes the socket', async () => {
    const t = await startServer({ maxMessageBytes: 1024 });
    try {
      const c = await RawClient.open(t.wsUrl);
      c.send({ id: 1, params: { token: 'x'.repeat(2000) } });
      assert.equal((await c.closed).code, 1009);
    } finally {
      await t.close();
    }
  });

  test('server pings are WebSocket ping frames; an unanswered one closes with 3012', async () => {
    // The pong timeout leaves room for a loaded machine's slow answer (with 200 ms, the answering
    // client could be taken for a silent one).
    const t = await startServer({ pingIntervalMs: 200, pongTimeoutMs: 3000 });
    try {
      const open = async (autoPong: boolean): Promise<{ c: RawClient; pings: () => number }> => {
        const c = await RawClient.open(t.wsUrl, { autoPong });
        let pings = 0;
        c.ws.on('ping', () => pings++);
        c.send({ params: { token: await signConnectionToken(SECRET, '1') }, id: 1 });
        await c.next();
        return { c, pings: () => pings };
      };
      const answering = await open(true);
      const silent = await open(false);
      const closed = await silent.c.closed;
      assert.equal(closed.code, 3012);
      assert.deepEqual(closeReason(closed), { reason: 'no pong', reconnect: true });
      await sleep(300);
      assert.ok(answering.pings() >= 2, `pings: ${answering.pings()}`);
      assert.equal(answering.c.ws.readyState, 1);
      answering.c.close();
    } finally {
      await t.close();
    }
  });

  test('recovery after reconnect: missed publications oldest first, by offset and by seq/gen', async () => {
    const channel = '$alerts:donation_77';
    const first = await connected('77');
    first.c.send({ method: 1, id: 2, params: { channel, token: await signChannelToken(SECRET, { client: first.client, channel }) } });
    const sub = await first.c.next();
    await first.c.next(); // join
    await s.node.publish(channel, { n: 1 });
    const seen = await first.c.next();
    assert.equal(seen.result.data.offset, sub.result.offset + 1);
    first.c.close();
    await first.c.closed;
    await s.node.publish(channel, { n: 2 });
    await s.node.publish(channel, { n: 3 });

    for (const position of [{ offset: seen.result.data.offset }, { seq: seen.result.data.seq, gen: 0 }]) {
      const again = await connected('77');
      const token = await signChannelToken(SECRET, { client: again.client, channel });
      again.c.send({ method: 1, id: 2, params: { channel, token, recover: true, epoch: sub.result.epoch, ...position } });
      const r = await again.c.next();
      assert.equal(r.result.recovered, true);
      assert.equal(r.result.recoverable, true);
      assert.equal(r.result.epoch, sub.result.epoch);
      assert.deepEqual(r.result.publications.map((p: any) => [p.data.n, p.offset, p.seq]), [[2, 2, 2], [3, 3, 3]]);
      assert.equal(r.result.offset, 3);
      assert.equal((await again.c.next()).result.type, 1);
      again.c.close();
    }

    // Another epoch: not recovered, and nothing replayed.
    const other = await connected('77');
    const token = await signChannelToken(SECRET, { client: other.client, channel });
    other.c.send({ method: 1, id: 2, params: { channel, token, recover: true, epoch: 'nope', offset: 1 } });
    const r = await other.c.next();
    assert.equal(r.result.recovered, false);
    assert.equal(r.result.publications, undefined);
    assert.equal(r.result.offset, 3);
    assert.equal((await other.c.next()).result.type, 1);
    // HISTORY (6) of a subscribed channel, from a position.
    other.c.send({ method: 6, id: 3, params: { channel, since: { offset: 1, epoch: sub.result.epoch } } });
    const h = await other.c.next();
    assert.deepEqual(h, {
      id: 3,
      result: { epoch: sub.result.epoch, offset: 3, publications: [{ data: { n: 2 }, offset: 2, seq: 2 }, { data: { n: 3 }, offset: 3, seq: 3 }] },
    });
    other.c.close();
  });

  test('publications racing a subscribe arrive exactly once: in the reply or after it, in order', async () => {
    // The history read waits at a gate the test opens once the publications are out, so they land
    // while the subscribe is in flight however long the read takes to begin (a round trip to the
    // primary under workers).
    class GatedHistory extends MemoryBroker {
      readFirst = true;
      entered: Promise<void> = Promise.resolve();
      open: () => void = () => {};
      #enter: () => void = () => {};
      #gate: Promise<void> = Promise.resolve();
      arm(): void {
        this.entered = new Promise((r) => (this.#enter = r));
        this.#gate = new Promise((r) => (this.open = r));
      }
      override async history(channel: string, opts?: HistoryOptions): Promise<HistoryResult> {
        this.#enter();
        if (this.readFirst) {
          const r = await super.history(channel, opts);
          await this.#gate;
          return r;
        }
        await this.#gate;
        return super.history(channel, opts);
      }
    }
    const broker = new GatedHistory();
    const t = await startServer({ broker });
    try {
      for (const readFirst of [true, false]) {
        broker.readFirst = readFirst;
        const channel = `$polls:poll_${readFirst ? 1 : 2}`;
        const c = await RawClient.open(t.wsUrl);
        c.send({ params: { token: await signConnectionToken(SECRET, '9') }, id: 1 });
        const client = (await c.next()).result.client;
        const token = await signChannelToken(SECRET, { client, channel });
        broker.arm();
        c.send({ method: 1, id: 2, params: { channel, token, recover: true, offset: 0 } });
        await broker.entered;
        for (const n of [1, 2, 3]) await t.node.publish(channel, { n });
        broker.open();
        const reply = await c.next();
        assert.equal(reply.id, 2);
        assert.equal((await c.next()).result.type, 1);
        const inReply = (reply.result.publications ?? []).map((p: any) => p.offset);
        // Each of the three arrives once, in the reply or after it: wait for all (a quiet spell of
        // 300 ms was taken for "no more" — on a loaded machine a push comes later than that), then
        // make sure nothing follows.
        const after: number[] = [];
        while (inReply.length + after.length < 3) after.push((await c.next()).result.data.offset);
        await c.nothing();
        // History read before the publications: all three follow the reply. Read after: all
        // three are in the reply, none repeated.
        assert.deepEqual([inReply, after], readFirst ? [[], [1, 2, 3]] : [[1, 2, 3], []]);
        c.close();
      }
    } finally {
      await t.close();
    }
  });

  test('unsubscribe stops publications; stats count clients and subscriptions', async () => {
    const t = await startServer();
    const channel = '$alerts:donation_3';
    const c = await RawClient.open(t.wsUrl);
    c.send({ params: { token: await signConnectionToken(SECRET, '3') }, id: 1 });
    const client = (await c.next()).result.client;
    c.send({ method: 1, id: 2, params: { channel, token: await signChannelToken(SECRET, { client, channel }) } });
    await c.next();
    await c.next();
    assert.deepEqual(t.node.stats(), { clients: 1, subscriptions: 1 });
    c.send({ method: 2, id: 3, params: { channel } });
    assert.deepEqual(await c.next(), { id: 3, result: {} });
    assert.deepEqual(t.node.stats(), { clients: 1, subscriptions: 0 });
    await t.node.publish(channel, { n: 1 });
    await c.nothing();
    c.close();
    await c.closed;
    await sleep(20);
    assert.deepEqual(t.node.stats(), { clients: 0, subscriptions: 0 });
    await t.close();
  });
});
