import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadSecrets } from '../../src/config/secrets.js';
import { startSession } from '../../src/modules/accounts/accounts.service.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { TokenStore } from '../../src/oauth/token-store.js';
import { cookieNames } from '../../src/web/session.js';
import { makeUser, openTestDatabase, postgresAvailable, REDIS_URL, redisAvailable, tempDir, type TestDatabase } from '../helper.js';
import { startServerProcess, type ServerProcess } from '../process.js';
import { hiddenFields } from '../oauth/helpers.js';
import { answersPing, closedBy, connect, connected, REVOKED, subscribe, type Protocol, type Socket } from '../realtime/revocation-helpers.js';

const runnable = (await postgresAvailable()) && (await redisAvailable());
const PUBLIC_URL = 'http://127.0.0.1';
const SCOPES = ['oauth-user-show', 'oauth-donation-subscribe'];

/** A browser's session on one node: the session cookie plus whatever the pages set (CSRF). */
class Session {
  readonly cookies = new Map<string, string>();
  constructor(
    readonly node: ServerProcess,
    sessionToken: string,
  ) {
    this.cookies.set(cookieNames({ publicUrl: PUBLIC_URL }).session, sessionToken);
  }

  async request(path: string, form?: Record<string, string>): Promise<{ status: number; body: string }> {
    const headers: Record<string, string> = { accept: 'text/html', cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') };
    if (form) headers['content-type'] = 'application/x-www-form-urlencoded';
    const res = await fetch(`${this.node.url}${path}`, { method: form ? 'POST' : 'GET', redirect: 'manual', headers, body: form ? new URLSearchParams(form) : undefined });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      this.cookies.set(pair!.slice(0, eq), pair!.slice(eq + 1));
    }
    return { status: res.status, body: await res.text() };
  }

  /** GETs the page holding the form, then posts it with its hidden fields (CSRF) and `extra`. */
  async submit(page: string, action: string, extra: Record<string, string> = {}): Promise<number> {
    const { body } = await this.request(page);
    return (await this.request(action, { ...hiddenFields(body, action), ...extra })).status;
  }
}

/**
 * Two `openalerts serve` processes sharing PostgreSQL and Redis. What is revoked through node A —
 * an application on the dashboard, a refresh token by RFC 7009, an account by an administrator, a
 * widget token regenerated — closes the sockets connected to node B with its real-time tokens, and
 * node B refuses those tokens from then on (the Redis revocation bus; issue 9.3).
 */
describe('revocation across two nodes (PostgreSQL + Redis)', { skip: !runnable && 'PostgreSQL or Redis is not running' }, () => {
  let t: TestDatabase;
  let nodeA: ServerProcess;
  let nodeB: ServerProcess;
  let tokens: TokenStore;
  let admin: UserRow;
  const secretKey = randomBytes(32).toString('hex');
  const encryptionKey = loadSecrets({ dataDir: tempDir(), secretKey, realtimeTokenSecret: null }).encryptionKey;
  const ws = (node: ServerProcess) => node.url.replace('http', 'ws');

  before(async () => {
    t = await openTestDatabase('postgres');
    admin = await makeUser(t.database.db, { admin: true });
    const env = { ...t.env, REDIS_URL, REDIS_PREFIX: `test-${randomBytes(4).toString('hex')}`, SECRET_KEY: secretKey, PUBLIC_URL };
    [nodeA, nodeB] = await Promise.all([startServerProcess({ ...env, DATA_DIR: tempDir() }), startServerProcess({ ...env, DATA_DIR: tempDir() })]);
    tokens = new TokenStore(t.database.db, { accessTokenTtl: 3600, refreshTokenTtl: 3600 });
  });
  after(async () => {
    await Promise.all([nodeA?.stop(), nodeB?.stop()]);
    await t?.drop();
  });

  /** A streamer who authorized an application, and the application's tokens as it obtains them from node B. */
  async function streamerWithApp() {
    const db = t.database.db;
    const user = await makeUser(db);
    const { app, clientSecret } = await createApp(db, encryptionKey, { ownerId: user.id, name: 'Revocable', redirectUris: ['https://r.example/cb'] });
    const grantId = await tokens.createGrant(db, { clientId: app.client_id, userId: user.id, scopes: SCOPES, kind: 'authorization_code' });
    const oauth = await tokens.issue(db, { grantId, clientId: app.client_id, userId: user.id, scopes: SCOPES }, true);
    const api = async (path: string, body?: unknown) => {
      const res = await fetch(`${nodeB.url}/api/v1${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${oauth.accessToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      assert.equal(res.status, 200, path);
      return res.json() as Promise<any>;
    };
    const connectionToken: string = (await api('/user/oauth')).data.socket_connection_token;
    const channel = `$alerts:donation_${user.id}`;
    const channelToken = async (client: string): Promise<string> => (await api('/centrifuge/subscribe', { channels: [channel], client })).channels[0].token;
    const session = new Session(nodeA, await startSession(db, user.id));
    return { user, clientId: app.client_id, clientSecret, oauth, connectionToken, channel, channelToken, session };
  }

  /** A socket to node B with the application's tokens, subscribed to the donation channel. */
  async function appSocket(s: Awaited<ReturnType<typeof streamerWithApp>>, protocol: Protocol): Promise<Socket> {
    const socket = await connected(ws(nodeB), s.connectionToken, protocol);
    const reply = await subscribe(socket, s.channel, await s.channelToken(protocol === 'legacy' ? socket.client : '00000000-0000-4000-8000-000000000000'));
    assert.equal(reply.error, undefined, JSON.stringify(reply));
    return socket;
  }

  async function refusedAt(node: ServerProcess, token: string, protocol: Protocol): Promise<void> {
    const outcome = await connect(ws(node), token, protocol);
    assert.ok('closed' in outcome, `the token is refused at connect on ${node === nodeA ? 'A' : 'B'} (${protocol})`);
    assert.deepEqual({ code: outcome.closed.code, reason: JSON.parse(outcome.closed.reason) }, REVOKED);
  }

  test('revoking the application on node A’s dashboard closes its sockets on node B; its tokens are refused at connect and subscribe', async () => {
    const s = await streamerWithApp();
    const legacy = await appSocket(s, 'legacy');
    const modern = await appSocket(s, 'modern');
    const channelToken = await s.channelToken('00000000-0000-4000-8000-000000000000');
    // The streamer's dashboard socket on node B is not the application's: it stays.
    const dashboardToken = JSON.parse(/<script type="application\/json" id="page-data">([^<]*)<\/script>/.exec((await new Session(nodeB, await startSession(t.database.db, s.user.id)).request('/dashboard')).body)?.[1] ?? 'null')?.realtime?.token;
    assert.equal(typeof dashboardToken, 'string', 'the overview page embeds a real-time token');
    const dashboard = await connected(ws(nodeB), dashboardToken, 'modern');

    assert.equal(await s.session.submit('/dashboard/authorized-apps', `/dashboard/authorized-apps/${s.clientId}/revoke`), 303);

    assert.deepEqual(await closedBy(legacy), REVOKED);
    assert.deepEqual(await closedBy(modern), REVOKED);
    await answersPing(dashboard);
    for (const node of [nodeA, nodeB]) for (const protocol of ['legacy', 'modern'] as const) await refusedAt(node, s.connectionToken, protocol);
    assert.deepEqual((await subscribe(dashboard, s.channel, channelToken)).error, { code: 101, message: 'unauthorized' });
    dashboard.c.close();
  });

  test('RFC 7009 revocation of the refresh token on node A closes the grant’s sockets on node B', async () => {
    const s = await streamerWithApp();
    const modern = await appSocket(s, 'modern');
    const res = await fetch(`${nodeA.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: s.oauth.refreshToken!, token_type_hint: 'refresh_token', client_id: String(s.clientId), client_secret: s.clientSecret }),
    });
    assert.equal(res.status, 200);
    assert.deepEqual(await closedBy(modern), REVOKED);
    await refusedAt(nodeB, s.connectionToken, 'legacy');
  });

  test('deactivating the account on node A closes the streamer’s application and widget sockets on node B', async () => {
    const s = await streamerWithApp();
    const appLegacy = await appSocket(s, 'legacy');
    const widget = await (await fetch(`${nodeB.url}/widget/api/token?token=${await widgetTokenFor(t.database.db, encryptionKey, s.user.id)}`)).json();
    const widgetSocket = await connected(ws(nodeB), widget.connection_token, 'modern');

    const adminSession = new Session(nodeA, await startSession(t.database.db, admin.id));
    assert.equal(await adminSession.submit(`/admin/users?q=${encodeURIComponent(s.user.email)}`, `/admin/users/${s.user.id}/active`, { active: '0' }), 303, 'accepted: post/redirect/get');

    assert.deepEqual(await closedBy(appLegacy), REVOKED);
    assert.deepEqual(await closedBy(widgetSocket), REVOKED);
    await refusedAt(nodeB, s.connectionToken, 'modern');
    await refusedAt(nodeB, widget.connection_token, 'modern');
  });

  test('regenerating the widget token on node A closes the widgets on node B that use the old one', async () => {
    const s = await streamerWithApp();
    const widgetToken = await widgetTokenFor(t.database.db, encryptionKey, s.user.id);
    const old = await (await fetch(`${nodeB.url}/widget/api/token?token=${widgetToken}`)).json();
    const widget = await connected(ws(nodeB), old.connection_token, 'modern');
    const appModern = await appSocket(s, 'modern');

    assert.equal(await s.session.submit('/dashboard/widgets', '/dashboard/widgets/token'), 303);

    assert.deepEqual(await closedBy(widget), REVOKED);
    await answersPing(appModern);
    await refusedAt(nodeB, old.connection_token, 'modern');
    appModern.c.close();
  });
});
