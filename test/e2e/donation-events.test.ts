import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Centrifuge } from 'centrifuge';
import WebSocket from 'ws';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { issueToken, makeApp, makeUser, type TestApp } from '../helper.js';
import { realtimeTestApp } from '../realtime/app-topology.js';
import { runCli } from '../process.js';
import { RawClient } from '../ws-client.js';
import { until } from '../wait.js';

/**
 * The whole path a real app sees: token → profile → WebSocket connect with socket_connection_token
 * → POST /api/v1/centrifuge/subscribe → subscribe → a donation written anywhere reaches it.
 */
describe('donation events end to end (real server, SQLite, memory broker)', () => {
  let t: TestApp;
  let base: string;
  let wsUrl: string;
  let streamerId: number;
  let token: string;

  before(async () => {
    ({ t, url: base } = await realtimeTestApp());
    wsUrl = `${base.replace('http', 'ws')}/connection/websocket`;
    const streamer = await makeUser(t.database.db, { currency: 'EUR' });
    streamerId = streamer.id;
    const { app } = await makeApp(t, streamer.id);
    token = await issueToken(t, { userId: streamer.id, clientId: app.client_id, scopes: ['oauth-user-show', 'oauth-donation-subscribe'] });
  });
  after(async () => t.close());

  async function api(pathname: string, init: RequestInit = {}, bearer = token) {
    return fetch(`${base}/api/v1${pathname}`, { ...init, headers: { authorization: `Bearer ${bearer}`, ...(init.headers ?? {}) } });
  }

  async function connectAndSubscribe(channel: string): Promise<RawClient> {
    const profile = (await (await api('/user/oauth')).json()).data;
    const client = await RawClient.open(wsUrl);
    client.send({ params: { token: profile.socket_connection_token }, id: 1 });
    const connected = await client.reply(1);
    assert.match(connected.result.client, /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(typeof connected.result.version, 'string');
    const res = await api('/centrifuge/subscribe', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channels: [channel], client: connected.result.client }) });
    assert.equal(res.status, 200);
    const { channels } = await res.json();
    assert.equal(channels[0].channel, channel);
    client.send({ params: { channel, token: channels[0].token }, method: 1, id: 2 });
    const subscribed = await client.reply(2);
    assert.equal(subscribed.error, undefined, JSON.stringify(subscribed));
    await until(() => client.pushes(channel).some((p) => p.result.type === 1), 20_000, 'JOIN push');
    const join = client.pushes(channel).find((p) => p.result.type === 1);
    assert.deepEqual(join.result.data.info, { user: String(streamerId), client: connected.result.client });
    return client;
  }

  test('a donation created by the service reaches the subscriber with the spec payload and reason', async () => {
    const channel = `$alerts:donation_${streamerId}`;
    const client = await connectAndSubscribe(channel);
    try {
      const donation = await createDonation(t.database.db, { userId: streamerId, amount: '12.50', currency: 'USD', username: 'Donor', message: 'Hello <b>there</b>' });
      await until(() => client.pushes(channel).some((p) => p.result.data?.data), 20_000, 'publication');
      const pub = client.pushes(channel).find((p) => p.result.data?.data).result;
      assert.deepEqual(pub.data.data, { ...donation, reason: 'default' });
      assert.equal(typeof pub.data.offset, 'number');
      assert.equal(pub.data.seq, pub.data.offset);
      assert.equal(pub.type, undefined, 'PUBLICATION type 0 is omitted');
    } finally {
      client.close();
    }
  });

  test('a donation written by the CLI (another process) reaches the subscriber (the server publishes what any process writes)', async () => {
    const channel = `$alerts:donation_${streamerId}`;
    const client = await connectAndSubscribe(channel);
    try {
      const before = client.pushes(channel).filter((p) => p.result.data?.data).length;
      const res = await runCli(['donation', 'simulate', '--user', String(streamerId), '--amount', '7', '--currency', 'RUB', '--username', 'FromCli'], t.env);
      assert.equal(res.code, 0, res.stderr);
      // Arrives through the relay's idle poll (100 ms); the wait is generous because timing is not
      // what this test asserts.
      await until(() => client.pushes(channel).filter((p) => p.result.data?.data).length > before, 10_000, 'the CLI donation');
      const pub = client.pushes(channel).filter((p) => p.result.data?.data).at(-1).result.data.data;
      assert.equal(pub.username, 'FromCli');
      assert.equal(pub.amount, 7);
      assert.equal(pub.currency, 'RUB');
    } finally {
      client.close();
    }
  });

  test('subscribe endpoint: another user’s channel, a missing scope and bad bodies are refused', async () => {
    const other = await makeUser(t.database.db);
    const uuid = '0b6f1c52-3c1a-4a8e-9d57-2f1f8f0e6a11';
    const post = (body: unknown, bearer = token, type = 'application/json') =>
      api('/centrifuge/subscribe', { method: 'POST', headers: { 'content-type': type }, body: typeof body === 'string' ? body : JSON.stringify(body) }, bearer);

    const foreign = await post({ channels: [`$alerts:donation_${other.id}`], client: uuid });
    assert.equal(foreign.status, 403);
    assert.match((await foreign.json()).message, /not one of this user's channels/);

    const goals = await post({ channels: [`$goals:goal_${streamerId}`], client: uuid });
    assert.equal(goals.status, 403);
    assert.match(goals.headers.get('www-authenticate')!, /insufficient_scope.*oauth-goal-subscribe/);

    const textPlain = await post(JSON.stringify({ channels: [`$alerts:donation_${streamerId}`], client: uuid }), token, 'text/plain');
    assert.equal(textPlain.status, 200, 'JSON sent as text/plain is accepted (compatibility.md §1)');

    for (const bad of [{}, { channels: [], client: uuid }, { channels: ['x'], client: 'not-a-uuid' }, { channels: { a: 1 }, client: uuid }]) {
      const res = await post(bad);
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.ok((await res.json()).errors);
    }
    const anonymous = await fetch(`${base}/api/v1/centrifuge/subscribe`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal(anonymous.status, 401);
  });

  test('centrifuge 5.x with getToken through our subscribe endpoint receives a donation', async () => {
    const channel = `$alerts:donation_${streamerId}`;
    const profile = (await (await api('/user/oauth')).json()).data;
    let clientId = '';
    const c = new Centrifuge(wsUrl, { websocket: WebSocket, token: profile.socket_connection_token });
    c.on('connected', (ctx) => (clientId = ctx.client));
    const sub = c.newSubscription(channel, {
      getToken: async () => {
        const res = await api('/centrifuge/subscribe', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channels: [channel], client: clientId }) });
        return (await res.json()).channels[0].token;
      },
    });
    const got: any[] = [];
    sub.on('publication', (ctx) => got.push(ctx.data));
    const subscribed = new Promise((resolve) => sub.once('subscribed', resolve));
    c.connect();
    sub.subscribe();
    try {
      await subscribed;
      const donation = await createDonation(t.database.db, { userId: streamerId, amount: '3', currency: 'EUR', username: 'Modern' });
      await until(() => got.length > 0, 20_000, 'publication');
      assert.deepEqual(got[0], { ...donation, reason: 'default' });
    } finally {
      c.disconnect();
    }
  });
});
