import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { widgetTokenFor } from '../../src/modules/widgets/widget-tokens.service.js';
import { makeApp, makeUser, type TestApp } from '../helper.js';
import { realtimeTestApp } from './app-topology.js';
import { exchange, fixture, hiddenFields, obtainCode, sessionFor, tokenRequest, type Fixture } from '../oauth/helpers.js';
import { answersPing, closedBy, connect, connected, REVOKED, subscribe, type Protocol } from './revocation-helpers.js';

/**
 * Revocation reaches real time, on the zero-set-up single node (SQLite, in-memory broker): revoking
 * an application's grant (dashboard, RFC 7009, refresh-token reuse), deactivating the account or
 * regenerating the widget token closes the sockets that used its real-time tokens, and those tokens
 * are refused at connect and at subscribe from then on — on both protocols.
 */
describe('revocation closes real-time sockets (one node, SQLite)', () => {
  let t: TestApp;
  let wsUrl: string;
  const SCOPES = 'oauth-user-show oauth-donation-subscribe';

  before(async () => {
    let url: string;
    ({ t, url } = await realtimeTestApp());
    wsUrl = url.replace('http', 'ws');
  });
  after(() => t.close());

  /** An application authorized by the fixture's streamer: its OAuth tokens and the real-time tokens an app obtains with them. */
  async function authorizedApp(f: Fixture) {
    const oauth = (await exchange(t, f, await obtainCode(f, { scope: SCOPES }))).json() as { access_token: string; refresh_token: string };
    const api = (url: string, payload?: unknown) =>
      t.app.inject({ method: payload ? 'POST' : 'GET', url: `/api/v1${url}`, headers: { authorization: `Bearer ${oauth.access_token}` }, ...(payload ? { payload: payload as object } : {}) });
    const profile = await api('/user/oauth');
    assert.equal(profile.statusCode, 200);
    const connectionToken: string = profile.json().data.socket_connection_token;
    const channel = `$alerts:donation_${f.user.id}`;
    /** A channel token for the client id of a connection (the legacy protocol checks it). */
    const channelToken = async (client: string): Promise<string> => {
      const res = await api('/centrifuge/subscribe', { channels: [channel], client });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().channels[0].token;
    };
    return { oauth, connectionToken, channel, channelToken };
  }

  /** A socket of the application, subscribed to the streamer's donations. */
  async function appSocket(app: Awaited<ReturnType<typeof authorizedApp>>, protocol: Protocol) {
    const s = await connected(wsUrl, app.connectionToken, protocol);
    const sub = await subscribe(s, app.channel, await app.channelToken(protocol === 'legacy' ? s.client : '00000000-0000-4000-8000-000000000000'));
    assert.equal(sub.error, undefined, JSON.stringify(sub));
    return s;
  }

  test('revoking an application on the Authorized applications page closes its sockets on both protocols and refuses its tokens', async () => {
    const f = await fixture(t);
    const app = await authorizedApp(f);
    const legacy = await appSocket(app, 'legacy');
    const modern = await appSocket(app, 'modern');
    const oldChannelToken = await app.channelToken('00000000-0000-4000-8000-000000000000');
    // Untouched by the revocation: another application of the same streamer, and the streamer's own dashboard.
    const { app: otherClient, clientSecret: otherSecret } = await makeApp(t, f.user.id);
    const other = await authorizedApp({ ...f, clientId: otherClient.client_id, clientSecret: otherSecret });
    const otherSocket = await appSocket(other, 'modern');
    const dashboard = await connected(wsUrl, await t.app.ctx.realtimeTokens.connectionForUser(f.user.id, 300), 'modern');

    const page = await f.browser.get('/dashboard/authorized-apps');
    const action = `/dashboard/authorized-apps/${f.clientId}/revoke`;
    assert.equal((await f.browser.post(action, hiddenFields(page.body, action))).statusCode, 303);

    assert.deepEqual(await closedBy(legacy), REVOKED);
    assert.deepEqual(await closedBy(modern), REVOKED);
    await answersPing(otherSocket);
    await answersPing(dashboard);

    for (const protocol of ['legacy', 'modern'] as const) {
      const again = await connect(wsUrl, app.connectionToken, protocol);
      assert.ok('closed' in again, `the revoked connection token is refused (${protocol})`);
      assert.deepEqual({ code: again.closed.code, reason: JSON.parse(again.closed.reason) }, REVOKED);
    }
    // The revoked grant's channel token, presented on a connection that is itself fine.
    const refused = await subscribe(dashboard, app.channel, oldChannelToken);
    assert.deepEqual(refused.error, { code: 101, message: 'unauthorized' });
    await answersPing(dashboard);
    for (const s of [otherSocket, dashboard]) s.c.close();
  });

  test('RFC 7009: revoking the refresh token closes the sockets of its grant', async () => {
    const f = await fixture(t);
    const app = await authorizedApp(f);
    const modern = await appSocket(app, 'modern');
    const revoked = await t.app.inject({
      method: 'POST',
      url: '/oauth/revoke',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({ token: app.oauth.refresh_token, token_type_hint: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret }).toString(),
    });
    assert.equal(revoked.statusCode, 200);
    assert.deepEqual(await closedBy(modern), REVOKED);
    const again = await connect(wsUrl, app.connectionToken, 'legacy');
    assert.ok('closed' in again && again.closed.code === 3500);
  });

  test('a reused refresh token revokes its grant: the sockets of the grant close', async () => {
    const f = await fixture(t);
    const app = await authorizedApp(f);
    const legacy = await appSocket(app, 'legacy');
    const refresh = { grant_type: 'refresh_token', client_id: String(f.clientId), client_secret: f.clientSecret, refresh_token: app.oauth.refresh_token };
    assert.equal((await tokenRequest(t.app, refresh)).statusCode, 200);
    await answersPing(legacy);
    assert.equal((await tokenRequest(t.app, refresh)).statusCode, 400, 'the replay is refused');
    assert.deepEqual(await closedBy(legacy), REVOKED);
  });

  test('deleting the application closes the sockets of every grant it had', async () => {
    const f = await fixture(t);
    const app = await authorizedApp(f);
    const modern = await appSocket(app, 'modern');
    const action = `/dashboard/apps/${f.clientId}/delete`;
    const page = await f.browser.get('/dashboard/apps');
    assert.equal((await f.browser.post(action, hiddenFields(page.body, action))).statusCode, 303);
    assert.deepEqual(await closedBy(modern), REVOKED);
    assert.ok('closed' in (await connect(wsUrl, app.connectionToken, 'legacy')), 'its connection token is refused');
  });

  test('deactivating the account closes every socket of the streamer (applications, dashboard, widgets) until it is activated again', async () => {
    const admin = await makeUser(t.database.db, { admin: true });
    const adminBrowser = await sessionFor(t, admin.id);
    const f = await fixture(t);
    const app = await authorizedApp(f);
    const appLegacy = await appSocket(app, 'legacy');
    const dashboardToken = await t.app.ctx.realtimeTokens.connectionForUser(f.user.id, 300);
    const dashboard = await connected(wsUrl, dashboardToken, 'modern');
    const widget = await widgetRealtime(f.user.id);
    const widgetSocket = await connected(wsUrl, widget.connection_token, 'modern');
    const bystander = await connected(wsUrl, await t.app.ctx.realtimeTokens.connectionForUser(admin.id, 300), 'legacy');

    const setActive = async (active: '0' | '1') => {
      const action = `/admin/users/${f.user.id}/active`;
      const page = await adminBrowser.get(`/admin/users?q=${encodeURIComponent(f.user.email)}`);
      const res = await adminBrowser.post(action, { ...hiddenFields(page.body, action), active });
      assert.equal(res.statusCode, 303, res.body); // accepted admin forms redirect to their page
    };
    await setActive('0');
    for (const s of [appLegacy, dashboard, widgetSocket]) assert.deepEqual(await closedBy(s), REVOKED);
    await answersPing(bystander);
    for (const token of [app.connectionToken, dashboardToken, widget.connection_token]) {
      assert.ok('closed' in (await connect(wsUrl, token, 'modern')), 'refused while deactivated');
    }

    await setActive('1');
    const back = await connected(wsUrl, app.connectionToken, 'modern');
    await answersPing(back);
    for (const s of [back, bystander]) s.c.close();
  });

  test('regenerating the widget token closes the widgets using the old one; their tokens are refused, the new ones work', async () => {
    const f = await fixture(t);
    const old = await widgetRealtime(f.user.id);
    const widgetChannel = `$widget:alerts_${f.user.id}`;
    const widget = await connected(wsUrl, old.connection_token, 'modern');
    assert.equal((await subscribe(widget, widgetChannel, old.channels[widgetChannel]!)).error, undefined);

    const page = await f.browser.get('/dashboard/widgets');
    assert.equal((await f.browser.post('/dashboard/widgets/token', hiddenFields(page.body, '/dashboard/widgets/token'))).statusCode, 303);

    assert.deepEqual(await closedBy(widget), REVOKED);
    assert.ok('closed' in (await connect(wsUrl, old.connection_token, 'modern')), 'the old connection token is refused');
    const fresh = await widgetRealtime(f.user.id);
    const reopened = await connected(wsUrl, fresh.connection_token, 'modern');
    assert.equal((await subscribe(reopened, widgetChannel, fresh.channels[widgetChannel]!)).error, undefined);
    assert.deepEqual((await subscribe(reopened, `$goals:goal_${f.user.id}`, old.channels[`$goals:goal_${f.user.id}`]!)).error, { code: 101, message: 'unauthorized' });
    reopened.c.close();
  });

  /** What an open widget page holds: real-time tokens fetched with the streamer's current widget token. */
  async function widgetRealtime(userId: number): Promise<{ connection_token: string; channels: Record<string, string> }> {
    const token = await widgetTokenFor(t.database.db, t.app.ctx.secrets.encryptionKey, userId);
    const res = await t.app.inject({ url: `/widget/api/token?token=${encodeURIComponent(token)}` });
    assert.equal(res.statusCode, 200);
    return res.json();
  }
});
