import assert from 'node:assert/strict';
import type { Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import Centrifuge2 from 'centrifuge2';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { SECRET, startServer, type TestServer } from './helpers.js';
import { until } from '../wait.js';

/** The real client libraries, unmodified, in Node (compatibility.md §5: an unmodified client must work). */
describe('real clients: centrifuge-js 2.8.5 and 5.x', () => {
  let s: TestServer;
  const sockets = new Set<Socket>();
  before(async () => {
    s = await startServer();
    s.server.on('connection', (sock: Socket) => {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
    });
  });
  after(() => s.close());

  /** Drops every TCP connection without a close frame, as a network failure does. */
  function dropAll(): void {
    for (const sock of sockets) sock.destroy();
  }

  test('centrifuge 2.8.5: $ channel via the subscribe endpoint, publication, recovery after a drop', async () => {
    const user = '100';
    const channel = `$alerts:donation_${user}`;
    const requests: { client: string; channels: string[] }[] = [];
    const c = new Centrifuge2(s.wsUrl, {
      websocket: WebSocket,
      minRetry: 50,
      maxRetry: 200,
      // The hook 2.x calls instead of its XMLHttpRequest to `subscribeEndpoint` (spec §4.9 body).
      onPrivateSubscribe: (ctx: { data: { client: string; channels: string[] } }, cb: (r: unknown) => void) => {
        requests.push(ctx.data);
        fetch(`${s.httpUrl}/subscribe`, { method: 'POST', body: JSON.stringify(ctx.data) })
          .then(async (r) => cb({ status: r.status, data: await r.json() }))
          .catch(() => cb({ status: 500, data: null }));
      },
    } as any);
    c.setToken(await signConnectionToken(SECRET, user));
    const got: any[] = [];
    const subscribed: any[] = [];
    const joins: any[] = [];
    let disconnects = 0;
    c.on('disconnect', () => disconnects++);
    const sub = c.subscribe(channel, {
      publish: (ctx: any) => got.push(ctx),
      subscribe: (ctx: any) => subscribed.push(ctx),
      join: (ctx: any) => joins.push(ctx),
    });
    try {
      c.connect();
      await until(() => subscribed.length === 1, 20_000, 'subscribe');
      assert.equal(requests[0].channels[0], channel);
      assert.match(requests[0].client, /^[0-9a-f-]{36}$/);
      await until(() => joins.length === 1, 20_000, 'join');
      assert.deepEqual(joins[0].info, { user, client: requests[0].client });

      await s.node.publish(channel, { id: 1, reason: 'default' });
      await until(() => got.length === 1, 20_000, 'publication');
      assert.deepEqual(got[0].data, { id: 1, reason: 'default' });
      assert.equal(got[0].seq, 1);

      dropAll();
      await until(() => disconnects === 1, 20_000, 'disconnect');
      await s.node.publish(channel, { id: 2, reason: 'default' });
      await s.node.publish(channel, { id: 3, reason: 'default' });
      await until(() => subscribed.length === 2, 20_000, 'resubscribe');
      assert.equal(subscribed[1].recovered, true);
      assert.notEqual(requests[1].client, requests[0].client, 'a new client id after reconnecting');
      await until(() => got.length === 3, 20_000, 'recovered publications');
      assert.deepEqual(got.map((g) => g.data.id), [1, 2, 3]);
      await s.node.publish(channel, { id: 4, reason: 'default' });
      await until(() => got.length === 4, 20_000, 'live publication after recovery');
    } finally {
      sub.unsubscribe();
      c.disconnect();
    }
  });

  test('centrifuge 5.x: token, $ channel with getToken, publication, recovery after a drop', async () => {
    const user = '200';
    const channel = `$goals:goal_${user}`;
    let tokenCalls = 0;
    const c = new Centrifuge(s.wsUrl, {
      websocket: WebSocket,
      token: await signConnectionToken(SECRET, user, 3600),
      minReconnectDelay: 50,
      maxReconnectDelay: 200,
    });
    const sub = c.newSubscription(channel, {
      getToken: async () => {
        tokenCalls++;
        return signChannelToken(SECRET, { channel, sub: user });
      },
    });
    const got: any[] = [];
    const subscribed: any[] = [];
    sub.on('publication', (ctx) => got.push(ctx));
    sub.on('subscribed', (ctx) => subscribed.push(ctx));
    try {
      c.connect();
      sub.subscribe();
      await until(() => subscribed.length === 1, 20_000, 'subscribed');
      assert.equal(subscribed[0].recoverable, true);
      await s.node.publish(channel, { id: 1, title: 'Goal', reason: 'updated' });
      await until(() => got.length === 1, 20_000, 'publication');
      assert.deepEqual(got[0].data, { id: 1, title: 'Goal', reason: 'updated' });
      assert.equal(got[0].offset, 1);

      const connecting = new Promise<void>((resolve) => c.once('connecting', () => resolve()));
      dropAll();
      await connecting;
      await s.node.publish(channel, { id: 2, reason: 'updated' });
      await s.node.publish(channel, { id: 3, reason: 'finished' });
      await until(() => subscribed.length === 2, 20_000, 'resubscribed');
      assert.equal(subscribed[1].wasRecovering, true);
      assert.equal(subscribed[1].recovered, true);
      await until(() => got.length === 3, 20_000, 'recovered publications');
      assert.deepEqual(got.map((g) => [g.data.id, g.offset]), [[1, 1], [2, 2], [3, 3]]);
      assert.equal(tokenCalls, 1, 'the channel token is reused after reconnecting with a new client id');
    } finally {
      c.disconnect();
    }
  });
});
