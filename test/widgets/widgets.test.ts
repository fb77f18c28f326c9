import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { InjectOptions } from 'fastify';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { createPoll } from '../../src/modules/polls/polls.service.js';
import { markShown, unshownAlerts } from '../../src/modules/widgets/alerts.service.js';
import { createVariation, listVariations } from '../../src/modules/widgets/variations.service.js';
import { regenerateWidgetToken, userForWidgetToken } from '../../src/modules/widgets/widget-tokens.service.js';
import { BrowserSession } from '../browser-session.js';
import { dialects } from '../helper.js';
import { widgetWorld, type WidgetWorld } from './fixture.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

const XSS = `<script>window.__xss=1</script><img src=x onerror="window.__xss=2">"'&`;
const ESCAPED = '&lt;script&gt;window.__xss=1&lt;/script&gt;&lt;img src=x onerror=&quot;window.__xss=2&quot;&gt;&quot;&#39;&amp;';

let w: WidgetWorld;
before(async () => {
  w = await widgetWorld();
});
after(() => w.close());

const inject = (opts: InjectOptions) => w.t.app.inject(opts);

describe('widget tokens', () => {
  test('pages and API need the current token: unknown → 404 page / 401 JSON; regenerated → old stops, new works', async () => {
    const streamer = await w.newStreamer();
    const token = await w.widgetToken(streamer.id);
    assert.equal(await w.widgetToken(streamer.id), token, 'the token is stable until regenerated');
    assert.match(token, /^[A-Za-z0-9_-]{32}$/);
    for (const path of ['/widget/alerts', '/widget/goal', '/widget/poll']) {
      const ok = await inject({ url: `${path}?token=${token}`, headers: { accept: 'text/html' } });
      assert.equal(ok.statusCode, 200, path);
      assert.equal(ok.headers['cache-control'], 'no-store');
      assert.equal(ok.headers['referrer-policy'], 'no-referrer');
      for (const bad of ['', '?token=', '?token=nope', `?token=${token}x`, `?token[]=${token}`]) {
        const res = await inject({ url: `${path}${bad}`, headers: { accept: 'text/html' } });
        assert.equal(res.statusCode, 404, `${path}${bad}`);
        assert.doesNotMatch(res.body, /connection_token|connectionToken/);
      }
    }
    const api = await inject({ url: `/widget/api/token?token=${token}` });
    assert.equal(api.statusCode, 200);
    assert.equal(api.headers['content-type'], 'application/json');
    const tokens = api.json();
    assert.deepEqual(Object.keys(tokens.channels).sort(), [`$goals:goal_${streamer.id}`, `$polls:poll_${streamer.id}`, `$widget:alerts_${streamer.id}`].sort());
    const claims = JSON.parse(Buffer.from(tokens.connection_token.split('.')[1], 'base64url').toString());
    assert.equal(claims.sub, `widget:${streamer.id}`);
    assert.ok(claims.exp - Date.now() / 1000 <= 15 * 60 + 1);

    const fresh = await regenerateWidgetToken(w.t.database.db, w.t.app.ctx.secrets.encryptionKey, w.t.app.ctx.revocations, streamer.id);
    assert.notEqual(fresh, token);
    assert.equal(await userForWidgetToken(w.t.database.db, token), null);
    assert.equal((await inject({ url: `/widget/alerts?token=${token}`, headers: { accept: 'text/html' } })).statusCode, 404);
    for (const path of ['token', 'unshown', 'variations', 'goal', 'poll']) {
      const res = await inject({ url: `/widget/api/${path}?token=${token}` });
      assert.equal(res.statusCode, 401, path);
      assert.deepEqual(Object.keys(res.json()), ['message']);
    }
    assert.equal((await inject({ method: 'POST', url: `/widget/api/shown?token=${token}`, payload: { type: 'donation', id: 1 } })).statusCode, 401);
    assert.equal((await inject({ url: `/widget/alerts?token=${fresh}`, headers: { accept: 'text/html' } })).statusCode, 200);
    assert.equal(await w.widgetToken(streamer.id), fresh, 'the settings page shows the new token');
  });

  test('a disabled account’s widget token stops working', async () => {
    const streamer = await w.newStreamer();
    const token = await w.widgetToken(streamer.id);
    await w.t.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', streamer.id).execute();
    assert.equal((await inject({ url: `/widget/api/token?token=${token}` })).statusCode, 401);
  });

  test('regenerating from the settings page needs the session and CSRF; the page shows the URLs', async () => {
    const streamer = await w.newStreamer();
    const s = await w.session(streamer);
    const before = await w.widgetToken(streamer.id);
    const pageRes = await s.get('/dashboard/widgets');
    assert.equal(pageRes.statusCode, 200);
    for (const path of ['alerts', 'goal', 'poll']) assert.ok(pageRes.body.includes(`/widget/${path}?token=${before}`), path);
    assert.equal((await s.postForm('/dashboard/widgets/token', { _csrf: 'forged' })).statusCode, 403);
    assert.equal(await w.widgetToken(streamer.id), before);
    const anonymous = new BrowserSession(w.t.app);
    const redirected = await anonymous.postForm('/dashboard/widgets/token', {}, false);
    assert.equal(redirected.statusCode, 302);
    await s.get('/dashboard/widgets');
    const res = await s.postForm('/dashboard/widgets/token', {});
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/dashboard/widgets?done=token');
    const after = await w.widgetToken(streamer.id);
    assert.notEqual(after, before);
    assert.ok((await s.get('/dashboard/widgets?done=token')).body.includes(`/widget/alerts?token=${after}`));
  });
});

describe('marking alerts shown', () => {
  test('POST /widget/api/shown: own alerts only, idempotent, sets is_shown and shown_at; the API lists it', async () => {
    const streamer = await w.newStreamer();
    const other = await w.newStreamer();
    const token = await w.widgetToken(streamer.id);
    const donation = await createDonation(w.t.database.db, { userId: streamer.id, username: 'Ann', amount: '5', currency: 'USD' });
    const custom = await w.customAlert(streamer.id);
    const sale = await w.sale(streamer.id);
    const foreign = await createDonation(w.t.database.db, { userId: other.id, username: 'Bob', amount: '5', currency: 'USD' });

    const unshown = (await inject({ url: `/widget/api/unshown?token=${token}` })).json().data;
    assert.deepEqual(unshown.map((a: any) => `${a.name}:${a.id}`), [`donation:${donation.id}`, `custom:${custom.id}`, `merchandise-sale:${sale.id}`]);
    assert.deepEqual(unshown.map((a: any) => a.reason), ['default', 'custom', 'merchandise-sale']);

    const mark = (type: unknown, id: unknown) => inject({ method: 'POST', url: `/widget/api/shown?token=${token}`, payload: { type, id } });
    for (const [type, id, table] of [['donation', donation.id, 'donations'], ['custom', custom.id, 'custom_alerts'], ['merchandise-sale', sale.id, 'merchandise_sales']] as const) {
      const first = await mark(type, id);
      assert.equal(first.statusCode, 200, first.body);
      const data = first.json().data;
      assert.equal(data.is_shown, 1);
      assert.match(data.shown_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const row = await w.t.database.db.selectFrom(table).select(['is_shown', 'shown_at']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(row.is_shown, 1);
      assert.ok(row.shown_at! > Date.now() - 60_000);
      await new Promise((r) => setTimeout(r, 5));
      const again = await mark(type, String(id));
      assert.equal(again.statusCode, 200);
      const rowAgain = await w.t.database.db.selectFrom(table).select(['shown_at']).where('id', '=', id).executeTakeFirstOrThrow();
      assert.equal(rowAgain.shown_at, row.shown_at, 'idempotent: shown_at is kept');
    }
    assert.deepEqual((await inject({ url: `/widget/api/unshown?token=${token}` })).json().data, []);

    const stolen = await mark('donation', foreign.id);
    assert.equal(stolen.statusCode, 404);
    const foreignRow = await w.t.database.db.selectFrom('donations').select(['is_shown', 'shown_at']).where('id', '=', foreign.id).executeTakeFirstOrThrow();
    assert.deepEqual(foreignRow, { is_shown: 0, shown_at: null });
    assert.equal((await mark('donation', 99_999_999)).statusCode, 404);
    for (const [type, id] of [['bogus', donation.id], ['donation', -1], ['donation', 'abc'], [undefined, undefined], ['donation', 1.5]]) {
      const res = await mark(type, id);
      assert.equal(res.statusCode, 400, `${type} ${id}`);
      assert.ok(res.json().errors);
    }
  });

  test('custom alerts created with is_shown=1 are not in the catch-up list', async () => {
    const streamer = await w.newStreamer();
    await w.customAlert(streamer.id, { isShown: 1 });
    assert.deepEqual(await unshownAlerts(w.t.database.db, streamer), []);
  });
});

describe('variations', () => {
  test('create, validation errors with values kept, edit, delete; other streamers get 404', async () => {
    const streamer = await w.newStreamer();
    const s = await w.session(streamer);
    await s.get('/dashboard/widgets/variations/new?type=donation');
    const bad = await s.postForm('/dashboard/widgets/variations', {
      type: 'donation', name: 'Big <one>', min_amount: '-3', duration_ms: '50', layout: 'sideways', text_template: '', sound_url: 'javascript:alert(1)', image_url: 'ftp://x', enabled: '1',
    });
    assert.equal(bad.statusCode, 400);
    for (const message of ['minimum amount', 'duration', 'layout', 'text template', 'sound url', 'image url']) assert.match(bad.body, new RegExp(`The ${message}`, 'i'), message);
    assert.ok(bad.body.includes('value="Big &lt;one&gt;"'), 'values are kept, escaped');
    assert.ok(bad.body.includes('value="javascript:alert(1)"'));
    const defaults = (await listVariations(w.t.database.db, streamer.id)).map((v) => v.id);
    assert.equal(defaults.length, 2, 'only the two default variations of a new account');

    const typeRes = await s.postForm('/dashboard/widgets/variations', { type: 'nope', name: '', duration_ms: '3000', layout: 'text-only', text_template: 'x' });
    assert.equal(typeRes.statusCode, 400);
    assert.match(typeRes.body, /The type must be one of/);
    assert.match(typeRes.body, /The name field is required/);

    const ok = await s.postForm('/dashboard/widgets/variations', {
      type: 'donation', name: 'Big', min_amount: '10.50', duration_ms: '5000', layout: 'image-left', text_template: '{username} gave {amount} {currency}', sound_url: 'https://cdn.example.test/ding.mp3', image_url: '', enabled: '1',
    });
    assert.equal(ok.statusCode, 303, ok.body);
    const created = (await listVariations(w.t.database.db, streamer.id)).find((v) => !defaults.includes(v.id));
    assert.deepEqual({ ...created, id: 0 }, {
      id: 0, type: 'donation', name: 'Big', min_amount: 10.5, duration_ms: 5000, layout: 'image-left', text_template: '{username} gave {amount} {currency}',
      sound_url: 'https://cdn.example.test/ding.mp3', image_url: null, enabled: 1,
      image_source: 'none', image_media_id: null, sound_source: 'url', sound_media_id: null, sound_volume: 80, enter_animation: 'fade', exit_animation: 'fade',
      font_family: 'system', font_size: 28, title_color: '#ffd54a', message_color: '#ffffff', tts_enabled: 0, tts_voice: '', tts_rate: 100, tts_volume: 100,
      tts_min_amount: 0, image: null, sound: 'https://cdn.example.test/ding.mp3',
    });

    const custom = await s.postForm('/dashboard/widgets/variations', { type: 'custom', name: 'Apps', min_amount: '99', duration_ms: '3000', layout: 'text-only', text_template: '{header}' });
    assert.equal(custom.statusCode, 303);
    assert.equal((await listVariations(w.t.database.db, streamer.id)).find((v) => v.type === 'custom')!.min_amount, 0, 'custom alerts have no amount');

    const editPage = await s.get(`/dashboard/widgets/variations/${created!.id}`);
    assert.equal(editPage.statusCode, 200);
    const edited = await s.postForm(`/dashboard/widgets/variations/${created!.id}`, { type: 'donation', name: 'Bigger', min_amount: '20', duration_ms: '8000', layout: 'text-only', text_template: '{username}' });
    assert.equal(edited.statusCode, 303);
    const after = (await listVariations(w.t.database.db, streamer.id)).find((v) => v.id === created!.id)!;
    assert.equal(after.name, 'Bigger');
    assert.equal(after.enabled, 0, 'an unchecked box disables');

    const intruder = await w.session(await w.newStreamer());
    assert.equal((await intruder.get(`/dashboard/widgets/variations/${created!.id}`)).statusCode, 404);
    await intruder.get('/dashboard/widgets');
    assert.equal((await intruder.postForm(`/dashboard/widgets/variations/${created!.id}`, { type: 'donation', name: 'x', duration_ms: '3000', layout: 'text-only', text_template: 'x' })).statusCode, 404);
    assert.equal((await intruder.postForm(`/dashboard/widgets/variations/${created!.id}/delete`, {})).statusCode, 404);
    assert.equal((await intruder.postForm(`/dashboard/widgets/variations/${created!.id}/test`, {})).statusCode, 404);

    assert.equal((await s.postForm(`/dashboard/widgets/variations/${created!.id}/delete`, { _csrf: 'x' })).statusCode, 403);
    await s.get('/dashboard/widgets');
    assert.equal((await s.postForm(`/dashboard/widgets/variations/${created!.id}/delete`, {})).statusCode, 303);
    assert.equal((await listVariations(w.t.database.db, streamer.id)).some((v) => v.id === created!.id), false);
  });

  test('"Send test alert" queues a test alert on the widget channel and stores nothing else', async () => {
    const streamer = await w.newStreamer();
    const v = await createVariation(w.t.database.db, streamer.id, { type: 'donation', name: 'Test', minAmount: '3', durationMs: '3000', layout: 'text-only', textTemplate: '{username}', enabled: '1' });
    const s = await w.session(streamer);
    await s.get('/dashboard/widgets');
    const res = await s.postForm(`/dashboard/widgets/variations/${v.id}/test`, {});
    assert.equal(res.statusCode, 303);
    const rows = (await eventsOnChannel(w.t.database.db, `$widget:alerts_${streamer.id}`)).filter((r) => r.type !== 'widget.settings_changed');
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.type, 'widget.test_alert');
    const payload = rows[0]!.payload;
    assert.equal(payload.reason, 'test');
    assert.equal(payload.is_test, 1);
    assert.equal(payload.variation_id, v.id);
    assert.equal(payload.amount, 3);
    const donations = await w.t.database.db.selectFrom('donations').select('id').where('user_id', '=', streamer.id).execute();
    assert.equal(donations.length, 0);
  });
});

describe('donor page', () => {
  test('unknown or disabled streamer → 404 page', async () => {
    assert.equal((await inject({ url: '/r/nobody_here', headers: { accept: 'text/html' } })).statusCode, 404);
    const gone = await w.newStreamer();
    await w.t.database.db.updateTable('users').set({ is_active: 0 }).where('id', '=', gone.id).execute();
    assert.equal((await inject({ url: `/r/${gone.code}`, headers: { accept: 'text/html' } })).statusCode, 404);
  });

  test('validation errors are shown in the form with the values kept; nothing is stored', async () => {
    const streamer = await w.newStreamer();
    await createPoll(w.t.database.db, streamer.id, { title: 'Next game?', options: ['Chess', 'Go'], allowUserOptions: 0 });
    const donor = new BrowserSession(w.t.app);
    const pageRes = await donor.get(`/r/${streamer.code}`);
    assert.equal(pageRes.statusCode, 200);
    assert.match(pageRes.body, /Next game\?/);
    assert.match(pageRes.body, /test \/ self-hosted/i);
    assert.match(pageRes.body, /0<\/span> of 300 characters/);
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ amount: 'abc', currency: 'USD' }, /The amount must be a positive number/],
      [{ amount: '', currency: 'USD' }, /Enter an amount/],
      [{ amount: '0', currency: 'USD' }, /greater than 0/],
      [{ amount: '1.999', currency: 'USD' }, /at most two decimal places/],
      [{ amount: '5', currency: 'XXX' }, /Choose one of EUR, USD, RUB, BRL, TRY/],
      [{ amount: '5', currency: 'USD', message: 'm'.repeat(301) }, /must not be greater than 300 characters/],
      [{ amount: '5', currency: 'USD', username: 'n'.repeat(65) }, /must not be greater than 64 characters/],
      [{ amount: '5', currency: 'USD', poll_option: '99999999' }, /The selected poll option is invalid/],
      [{ amount: '5', currency: 'USD', poll_option: 'drop table' }, /Choose one of the poll options/],
      [{ amount: '5', currency: 'USD', poll_option: 'own', poll_option_title: 'Poker' }, /does not take new options/],
      [{ amount: '5', currency: 'USD', poll_option: 'own', poll_option_title: '' }, /Type your own option/],
    ];
    for (const [fields, message] of cases) {
      const res = await donor.postForm(`/r/${streamer.code}`, { username: 'Keep <me>', message: 'kept message', ...fields });
      assert.equal(res.statusCode, 422, JSON.stringify(fields));
      assert.match(res.body, message, JSON.stringify(fields));
      if (!fields.username) assert.ok(res.body.includes('value="Keep &lt;me&gt;"'), 'name kept');
      if (!fields.message) assert.ok(res.body.includes('>kept message</textarea>'), 'message kept');
      if (fields.amount) assert.ok(res.body.includes(`value="${fields.amount.replace(/&/g, '&amp;')}"`), 'amount kept');
    }
    assert.equal((await donor.postForm(`/r/${streamer.code}`, { amount: '5', currency: 'USD', _csrf: 'forged' })).statusCode, 403);
    const stored = await w.t.database.db.selectFrom('donations').select('id').where('user_id', '=', streamer.id).execute();
    assert.equal(stored.length, 0);
  });

  test('success: the donation is stored as paid by the test provider, with its vote and outbox events; thank-you page', async () => {
    const streamer = await w.newStreamer();
    const poll = await createPoll(w.t.database.db, streamer.id, { title: 'Snack?', options: ['Pizza', 'Sushi'], allowUserOptions: 1 });
    const donor = new BrowserSession(w.t.app);
    await donor.get(`/r/${streamer.code}`);
    const res = await donor.postForm(`/r/${streamer.code}`, { username: 'Ann', amount: '7,50', currency: 'EUR', message: 'hi', poll_option: String(poll.options[1]!.id) });
    assert.equal(res.statusCode, 303, res.body);
    const match = /^\/r\/([^/]+)\/thanks\/(\d+)\?t=([A-Za-z0-9_-]{22})$/.exec(String(res.headers.location));
    assert.ok(match, String(res.headers.location));
    const id = Number(match[2]);
    const row = await w.t.database.db.selectFrom('donations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.user_id, streamer.id);
    assert.equal(row.amount, 750);
    assert.equal(row.currency, 'EUR');
    assert.equal(row.payin_system, 'Test payment');
    assert.equal(row.poll_option_id, poll.options[1]!.id);
    const byChannel = async (c: string) => (await eventsOnChannel(w.t.database.db, c)).map((e) => e.payload);
    assert.equal((await byChannel(`$widget:alerts_${streamer.id}`)).find((p) => p.id === id)?.name, 'donation');
    assert.equal((await byChannel(`$alerts:donation_${streamer.id}`)).find((p) => p.id === id)?.reason, 'default');
    assert.ok((await byChannel(`$polls:poll_${streamer.id}`)).some((p) => p.reason === 'updated'));

    const thanks = await donor.get(String(res.headers.location));
    assert.equal(thanks.statusCode, 200);
    assert.match(thanks.body, /€7\.50/);
    assert.match(thanks.body, /no money was charged/);
    const wrongTag = String(res.headers.location).replace(/t=.*/, 't=AAAAAAAAAAAAAAAAAAAAAA');
    assert.equal((await donor.get(wrongTag)).statusCode, 404);
    assert.equal((await donor.get(`/r/${streamer.code}/thanks/${id}`)).statusCode, 404);
    const other = await w.newStreamer();
    assert.equal((await donor.get(String(res.headers.location).replace(`/r/${streamer.code}/`, `/r/${other.code}/`))).statusCode, 404);

    // An own option where the poll allows it.
    await donor.get(`/r/${streamer.code}`);
    const own = await donor.postForm(`/r/${streamer.code}`, { amount: '1', currency: 'USD', poll_option: 'own', poll_option_title: 'Tacos' });
    assert.equal(own.statusCode, 303, own.body);
    const options = await w.t.database.db.selectFrom('poll_options').select('title').where('poll_id', '=', poll.id).execute();
    assert.ok(options.some((o) => o.title === 'Tacos'));
  });
});

describe('hostile text', () => {
  test('XSS payloads are stored as-is and rendered escaped on every page', async () => {
    const streamer = await w.newStreamer();
    const donor = new BrowserSession(w.t.app);
    await donor.get(`/r/${streamer.code}`);
    const res = await donor.postForm(`/r/${streamer.code}`, { username: XSS.slice(0, 64), amount: '3', currency: 'USD', message: XSS });
    assert.equal(res.statusCode, 303, res.body);
    const id = Number(/thanks\/(\d+)/.exec(String(res.headers.location))![1]);
    const row = await w.t.database.db.selectFrom('donations').select(['username', 'message']).where('id', '=', id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { username: XSS.slice(0, 64), message: XSS });
    const thanks = await donor.get(String(res.headers.location));
    assert.ok(thanks.body.includes(ESCAPED), 'message escaped on the thank-you page');
    assert.ok(!thanks.body.includes('<script>window.__xss'));

    // Re-rendered form after an error keeps the hostile values, escaped.
    const again = await donor.postForm(`/r/${streamer.code}`, { username: XSS.slice(0, 64), amount: 'x', currency: 'USD', message: XSS });
    assert.equal(again.statusCode, 422);
    assert.ok(again.body.includes(ESCAPED));
    assert.ok(!again.body.includes('<script>window.__xss'));

    // Widget data: the alerts widget page and its catch-up API carry it as JSON, not markup.
    const token = await w.widgetToken(streamer.id);
    await createVariation(w.t.database.db, streamer.id, { type: 'donation', name: XSS.slice(0, 64), minAmount: '0', durationMs: '3000', layout: 'text-only', textTemplate: XSS, enabled: '1' });
    const widget = await inject({ url: `/widget/alerts?token=${token}`, headers: { accept: 'text/html' } });
    assert.ok(!widget.body.includes('<script>window.__xss'), 'variation text is embedded as escaped JSON');
    assert.ok(!widget.body.includes('onerror="'));
    const unshown = (await inject({ url: `/widget/api/unshown?token=${token}` })).json().data;
    assert.equal(unshown[0].message, XSS);

    // Settings page (variation name and template) and the streamer's dashboard pages.
    const s = await w.session(streamer);
    for (const url of ['/dashboard/widgets', '/dashboard', '/dashboard/donations']) {
      const pageRes = await s.get(url);
      if (pageRes.statusCode === 404) continue; // a dashboard section not built yet
      assert.equal(pageRes.statusCode, 200, url);
      assert.ok(!pageRes.body.includes('<script>window.__xss'), url);
      assert.ok(!pageRes.body.includes('onerror="window'), url);
    }
    assert.ok((await s.get('/dashboard/widgets')).body.includes(ESCAPED));
  });

  test('a hostile streamer name is escaped on the donor page', async () => {
    // Sign-up only allows plain names; the page must not rely on that.
    const streamer = await w.newStreamer();
    await w.t.database.db.updateTable('users').set({ name: `<i>Evil</i> ${streamer.id}` }).where('id', '=', streamer.id).execute();
    const res = await inject({ url: `/r/${streamer.code}`, headers: { accept: 'text/html' } });
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.includes('&lt;i&gt;Evil&lt;/i&gt;'));
    assert.ok(!res.body.includes('<i>Evil</i>'));
  });
});

describe('security headers', () => {
  test('strict CSP on every HTML page; /docs gets its own; no framing anywhere', async () => {
    const streamer = await w.newStreamer();
    const token = await w.widgetToken(streamer.id);
    for (const url of ['/', '/login', '/signup', `/r/${streamer.code}`, `/widget/alerts?token=${token}`, '/r/unknown-streamer', '/no-such-page']) {
      const res = await inject({ url, headers: { accept: 'text/html' } });
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /script-src 'self';/, url);
      assert.match(csp, /script-src-attr 'none'/, url);
      assert.match(csp, /style-src 'self';/, url);
      assert.match(csp, /img-src 'self' https: http: data:/, url);
      assert.match(csp, /media-src 'self' https: http:/, url);
      assert.match(csp, /connect-src 'self' ws: wss:/, url);
      assert.match(csp, /frame-ancestors 'none'/, url);
      assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/, url);
      assert.equal(res.headers['x-frame-options'], 'DENY', url);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
      assert.doesNotMatch(res.body, /<script(?![^>]*\bsrc=)(?![^>]*type="application\/json")[^>]*>|\son[a-z]+=/i, `${url}: no inline script or handler`);
    }
    const docs = await inject({ url: '/docs/', headers: { accept: 'text/html' } });
    assert.match(String(docs.headers['content-security-policy']), /style-src 'self' 'unsafe-inline'/);
    assert.match(String(docs.headers['content-security-policy']), /script-src 'self';/);
    // Avatars are used on other sites by applications.
    const avatar = await inject({ url: `/avatars/${streamer.id}.svg` });
    assert.equal(avatar.headers['cross-origin-resource-policy'], 'cross-origin');
  });
});

describe('storage on every dialect', async () => {
  for (const dialect of await dialects()) {
    test(`${dialect}: variations, shown marking and catch-up list`, async () => {
      const world = dialect === 'sqlite' ? w : await widgetWorld(dialect);
      try {
        const db = world.t.database.db;
        const streamer = await world.newStreamer();
        const v = await createVariation(db, streamer.id, { type: 'merchandise-sale', name: 'Sale', minAmount: '1.25', durationMs: '1000', layout: 'image-above-text', textTemplate: '{username}', imageUrl: 'http://img.example.test/a.png', enabled: 'on' });
        assert.equal(v.min_amount, 1.25);
        assert.equal(v.enabled, 1);
        const old = await createDonation(db, { userId: streamer.id, username: 'Old', amount: '1', currency: 'USD' });
        await db.updateTable('donations').set({ created_at: Date.now() - 25 * 3600_000 }).where('id', '=', old.id).execute();
        const sale = await world.sale(streamer.id);
        const fresh = await createDonation(db, { userId: streamer.id, username: 'New', amount: '2', currency: 'USD' });
        const list = await unshownAlerts(db, streamer);
        assert.deepEqual(list.map((a) => `${a.name}:${a.id}`), [`merchandise-sale:${sale.id}`, `donation:${fresh.id}`], 'older than 24 h is left out');
        const first = await markShown(db, streamer.id, 'merchandise-sale', sale.id);
        const second = await markShown(db, streamer.id, 'merchandise-sale', sale.id);
        assert.equal(second.shown_at, first.shown_at);
        await assert.rejects(markShown(db, streamer.id + 1000, 'donation', fresh.id), { status: 404 });
        assert.deepEqual((await unshownAlerts(db, streamer)).map((a) => a.id), [fresh.id]);
      } finally {
        if (world !== w) await world.close();
      }
    });
  }
});
