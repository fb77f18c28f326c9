import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Redis } from 'ioredis';
import { RedisBroker } from '../../src/realtime/broker-redis.js';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { cleanRedis, redisOrSkip, SECRET, startServer, uniquePrefix } from './helpers.js';
import { closeReason, RawClient } from '../ws-client.js';

async function legacySubscriber(url: string, user: string, channel: string, recover?: { offset: number; epoch: string }) {
  const c = await RawClient.open(url);
  c.send({ id: 1, params: { token: await signConnectionToken(SECRET, user) } });
  const client = (await c.next()).result.client;
  const token = await signChannelToken(SECRET, { client, channel });
  c.send({ id: 2, method: 1, params: { channel, token, ...(recover ? { recover: true, ...recover } : {}) } });
  const reply = await c.next();
  assert.equal((await c.next()).result.type, 1);
  return { c, reply };
}

describe('two nodes sharing one Redis broker', async () => {
  const admin: Redis | null = await redisOrSkip();
  const skip = admin ? false : 'Redis unreachable (set CI to make this fail)';
  const prefix = uniquePrefix('cluster');
  after(async () => {
    if (!admin) return;
    await cleanRedis(admin, prefix);
    admin.disconnect();
  });

  test('a publish on node A reaches a subscriber on node B; history is shared for recovery', { skip }, async () => {
    const a = await startServer({ broker: new RedisBroker({ prefix }) });
    const b = await startServer({ broker: new RedisBroker({ prefix }) });
    try {
      const channel = '$alerts:donation_1';
      const onB = await legacySubscriber(b.wsUrl, '1', channel);
      const pos = await a.node.publish(channel, { id: 1, reason: 'default' });
      assert.equal(pos.offset, 1);
      assert.equal(pos.epoch, onB.reply.result.epoch, 'one epoch across nodes');
      assert.deepEqual(await onB.c.next(), { result: { channel, data: { data: { id: 1, reason: 'default' }, offset: 1, seq: 1 } } });
      onB.c.close();

      await b.node.publish(channel, { id: 2, reason: 'default' });
      const onA = await legacySubscriber(a.wsUrl, '1', channel, { offset: 1, epoch: pos.epoch });
      assert.equal(onA.reply.result.recovered, true);
      assert.deepEqual(onA.reply.result.publications, [{ data: { id: 2, reason: 'default' }, offset: 2, seq: 2 }]);
      onA.c.close();
    } finally {
      await a.close();
      await b.close();
    }
  });
});

describe('graceful shutdown', () => {
  test('closes every client, both protocols, with 3001 {"reason":"shutdown","reconnect":true}', async () => {
    const s = await startServer();
    const legacy = await legacySubscriber(s.wsUrl, '1', '$alerts:donation_1');
    const modern = await RawClient.open(s.wsUrl);
    modern.send({ id: 1, connect: { token: await signConnectionToken(SECRET, '1') } });
    assert.ok((await modern.next()).connect.client);
    const idle = await RawClient.open(s.wsUrl);
    assert.equal(s.node.stats().clients, 2);
    await s.close();
    for (const c of [legacy.c, modern, idle]) {
      const closed = await c.closed;
      assert.equal(closed.code, 3001);
      assert.deepEqual(closeReason(closed), { reason: 'shutdown', reconnect: true });
    }
    assert.deepEqual(s.node.stats(), { clients: 0, subscriptions: 0 });
  });
});
