import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadSecrets } from '../../src/config/secrets.js';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { TokenStore } from '../../src/oauth/token-store.js';
import { makeUser, openTestDatabase, postgresAvailable, REDIS_URL, redisAvailable, tempDir, type TestDatabase } from '../helper.js';
import { startServerProcess, type ServerProcess } from '../process.js';
import { RawClient } from '../ws-client.js';
import { until } from '../wait.js';

const runnable = (await postgresAvailable()) && (await redisAvailable());

/**
 * Two `openalerts serve` processes sharing PostgreSQL and Redis, as docs/operations.md describes the scale-out:
 * what happens on one node reaches the clients of the other.
 */
describe('two nodes sharing PostgreSQL and Redis', { skip: !runnable && 'PostgreSQL or Redis is not running' }, () => {
  let t: TestDatabase;
  let nodeA: ServerProcess;
  let nodeB: ServerProcess;
  let streamer: { id: number; code: string };
  let client: { id: number; secret: string };
  let token: string;
  const secretKey = randomBytes(32).toString('hex');

  before(async () => {
    t = await openTestDatabase('postgres');
    const env = { ...t.env, REDIS_URL, REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}`, SECRET_KEY: secretKey };
    [nodeA, nodeB] = await Promise.all([startServerProcess({ ...env, DATA_DIR: tempDir() }), startServerProcess({ ...env, DATA_DIR: tempDir() })]);
    const db = t.database.db;
    const user = await makeUser(db);
    streamer = { id: user.id, code: user.code };
    const { app, clientSecret } = await createApp(db, loadSecrets({ dataDir: tempDir(), secretKey, realtimeTokenSecret: null }).encryptionKey, { ownerId: user.id, name: 'Cluster', redirectUris: ['https://c.example/cb'] });
    client = { id: app.client_id, secret: clientSecret };
    const tokens = new TokenStore(db, { accessTokenTtl: 3600, refreshTokenTtl: 3600 });
    const scopes = ['oauth-user-show', 'oauth-donation-subscribe', 'oauth-donation-index'];
    const grantId = await tokens.createGrant(db, { clientId: app.client_id, userId: user.id, scopes, kind: 'authorization_code' });
    token = (await tokens.issue(db, { grantId, clientId: app.client_id, userId: user.id, scopes }, false)).accessToken;
  });
  after(async () => {
    await Promise.all([nodeA?.stop(), nodeB?.stop()]);
    await t?.drop();
  });

  const api = (node: ServerProcess, path: string, init: RequestInit = {}) =>
    fetch(`${node.url}/api/v1${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...(init.headers ?? {}) } });

  test('a donation published through node A reaches a subscriber connected to node B', async () => {
    const channel = `$alerts:donation_${streamer.id}`;
    const profile = (await (await api(nodeB, '/user/oauth')).json()).data;
    const ws = await RawClient.open(`${nodeB.url.replace('http', 'ws')}/connection/websocket`);
    try {
      ws.send({ params: { token: profile.socket_connection_token }, id: 1 });
      const clientId = (await ws.reply(1)).result.client;
      const sub = await (await api(nodeB, '/centrifuge/subscribe', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ channels: [channel], client: clientId }) })).json();
      ws.send({ params: { channel, token: sub.channels[0].token }, method: 1, id: 2 });
      assert.equal((await ws.reply(2)).error, undefined);

      await donateThrough(nodeA, streamer.code, 'Across nodes');
      await until(() => ws.pushes(channel).some((p) => p.result.data?.data?.username === 'Across nodes'), 20_000, 'the donation on node B');
      const listed = (await (await api(nodeA, '/alerts/donations')).json()).data;
      assert.equal(listed[0].username, 'Across nodes');
    } finally {
      ws.close();
    }
  });

  test('a token revoked on node A stops working on node B (evicted from its cache by the Redis bus)', async () => {
    assert.equal((await api(nodeB, '/user/oauth')).status, 200, 'node B has verified (and cached) the token');
    const revoked = await fetch(`${nodeA.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, client_id: String(client.id), client_secret: client.secret }),
    });
    assert.equal(revoked.status, 200);
    const at = Date.now();
    let status = 200;
    while (Date.now() - at < 10_000) {
      status = (await api(nodeB, '/user/oauth')).status;
      if (status === 401) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(status, 401);
  });
});

/** A donor's donation through a node's public donor page, as a browser posts the form. */
async function donateThrough(node: ServerProcess, code: string, username: string): Promise<void> {
  const page = await fetch(`${node.url}/r/${code}`);
  assert.equal(page.status, 200);
  const html = await page.text();
  const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
  assert.ok(csrf, 'the donor form carries a CSRF token');
  const cookie = page.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  const res = await fetch(`${node.url}/r/${code}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
    body: new URLSearchParams({ _csrf: csrf, username, amount: '5', currency: 'USD', message: 'from node A' }),
  });
  assert.ok(res.status === 303 || res.status === 302, `donation accepted (${res.status})`);
}
