import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { donationChannel, widgetChannel } from '../../src/modules/outbox/channels.js';
import { allEvents, eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';
import { unshownAlerts } from '../../src/modules/widgets/alerts.service.js';
import { approvalQueue, DEFAULT_SETTINGS, saveModerationSettings } from '../../src/modules/moderation/moderation.service.js';
import { assertHtml, streamer } from '../dashboard/helpers.js';
import { buildTestApp, dialects, type TestApp } from '../helper.js';

const SETTINGS = {
  banned_words: 'crap\ngo away',
  banned_words_mode: 'mask',
  links: 'remove',
  max_message_length: '',
  min_message_amount: '',
  ip_rate_limit: '',
  donor_rate_limit: '',
  rate_window_seconds: '60',
  alert_delay_seconds: '0',
};

for (const dialect of await dialects()) {
  describe(`moderation (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await buildTestApp({ dialect });
    });
    after(() => t.close());

    test('settings page: saved rules mask what is published, the API record keeps what was sent', async () => {
      const { user, browser } = await streamer(t, { currency: 'USD' });
      const page = await browser.get('/dashboard/moderation');
      assertHtml(page);
      assert.match(page.body, /href="\/dashboard\/moderation" aria-current="page"/);
      const saved = await browser.postForm('/dashboard/moderation', SETTINGS);
      assert.equal(saved.statusCode, 303);
      assert.match((await browser.get(String(saved.headers.location))).body, /Rules saved/);

      const donation = await createDonation(t.database.db, { userId: user.id, username: 'Sс𝐫ap fan', message: 'what a CRАP stream, see example.com', amount: '5', currency: 'USD' });
      assert.equal(donation.message, 'what a CRАP stream, see example.com', 'the record keeps what the donor sent');
      const [event] = await eventsOnChannel(t.database.db, widgetChannel(user.id));
      assert.deepEqual(event!.channels, [donationChannel(user.id), widgetChannel(user.id)]);
      assert.equal(event!.payload.message, 'what a **** stream, see');
      const stored = await t.database.db.selectFrom('donations').select(['message']).where('id', '=', donation.id).executeTakeFirstOrThrow();
      assert.equal(stored.message, 'what a CRАP stream, see example.com');

      const list = await browser.get('/dashboard/donations');
      assert.match(list.body, /what a \*\*\*\* stream, see/);
      assert.doesNotMatch(list.body, /example\.com/);
      const [alert] = await unshownAlerts(t.database.db, user);
      assert.equal(alert!.message, 'what a **** stream, see');
    });

    test('settings page: bad values re-render with translated errors and save nothing', async () => {
      const { user, browser } = await streamer(t, { language: 'ru_RU' });
      await browser.get('/dashboard/moderation');
      const res = await browser.postForm('/dashboard/moderation', { ...SETTINGS, links: 'sometimes', max_message_length: '-3', min_message_amount: 'lots' });
      assertHtml(res, 422);
      assert.match(res.body, /Выберите один из вариантов списка/);
      assert.match(res.body, /Введите целое число/);
      const row = await t.database.db.selectFrom('moderation_settings').selectAll().where('user_id', '=', user.id).executeTakeFirst();
      assert.equal(row, undefined);
    });

    test('approval queue: a held donation counts as money but is published only on approval, never after rejection', async () => {
      const { user, browser } = await streamer(t, { currency: 'USD' });
      await browser.get('/dashboard/moderation');
      await browser.postForm('/dashboard/moderation', { ...SETTINGS, approval_required: '1' });
      const first = await createDonation(t.database.db, { userId: user.id, username: 'Ann', message: 'hold me', amount: '3', currency: 'USD' });
      const second = await createDonation(t.database.db, { userId: user.id, username: 'Bob', message: 'crap', amount: '4', currency: 'USD' });
      assert.deepEqual(await eventsOnChannel(t.database.db, widgetChannel(user.id)), [], 'held: no outbox row');
      assert.deepEqual(await unshownAlerts(t.database.db, user), [], 'held alerts stay off the widget catch-up');

      const queue = await browser.get('/dashboard/moderation');
      assert.match(queue.body, /Waiting for approval \(2\)/);
      assert.match(queue.body, /hold me/);
      assert.match(queue.body, /<p class="message">\*\*\*\*<\/p>/, 'the queue shows the moderated text too');

      const approved = await browser.postForm(`/dashboard/moderation/${first.id}/approve`, {});
      assert.equal(approved.statusCode, 303);
      const again = await browser.postForm(`/dashboard/moderation/${first.id}/approve`, {});
      assert.equal(again.statusCode, 404, 'approving twice publishes once');
      const rejected = await browser.postForm(`/dashboard/moderation/${second.id}/reject`, {});
      assert.equal(rejected.statusCode, 303);
      assert.equal((await browser.postForm(`/dashboard/moderation/${second.id}/approve`, {})).statusCode, 404, 'a rejected alert cannot be approved later');

      const events = await eventsOnChannel(t.database.db, widgetChannel(user.id));
      assert.deepEqual(events.map((e) => e.payload.id), [first.id]);
      assert.deepEqual((await unshownAlerts(t.database.db, user)).map((a) => a.id), [first.id]);
      const list = await browser.get('/dashboard/donations');
      assert.match(list.body, /Rejected/);
      // Both count as money received: the API list and the totals keep them.
      const api = await t.database.db.selectFrom('donations').select('id').where('user_id', '=', user.id).execute();
      assert.equal(api.length, 2);
    });

    test('another streamer cannot approve or reject my held alert', async () => {
      const { user, browser } = await streamer(t);
      await browser.get('/dashboard/moderation');
      await browser.postForm('/dashboard/moderation', { ...SETTINGS, approval_required: '1' });
      const held = await createDonation(t.database.db, { userId: user.id, message: 'x', amount: '1', currency: 'USD' });
      const other = await streamer(t);
      await other.browser.get('/dashboard/moderation');
      assert.equal((await other.browser.postForm(`/dashboard/moderation/${held.id}/approve`, {})).statusCode, 404);
      assert.equal((await other.browser.postForm(`/dashboard/moderation/abc/reject`, {})).statusCode, 404);
    });

    test('alert delay: the event waits in the outbox (not_before), and the widget catch-up waits too', async () => {
      const { user, browser } = await streamer(t);
      await browser.get('/dashboard/moderation');
      await browser.postForm('/dashboard/moderation', { ...SETTINGS, alert_delay_seconds: '300' });
      const d = await createDonation(t.database.db, { userId: user.id, message: 'later', amount: '1', currency: 'USD' });
      const row = await t.database.db.selectFrom('outbox').select(['not_before', 'created_at']).where('user_id', '=', user.id).executeTakeFirstOrThrow();
      assert.ok(row.not_before !== null && Number(row.not_before) >= Number(row.created_at) + 299_000);
      assert.deepEqual(await unshownAlerts(t.database.db, user), []);
      assert.deepEqual((await unshownAlerts(t.database.db, user, undefined, Date.now() + 301_000)).map((a) => a.id), [d.id]);
    });

    test('a donation recorded outside the donor form (API, sandbox, CLI) that breaks a reject-mode rule is held, masked', async () => {
      const { user } = await streamer(t, { currency: 'USD' });
      await saveModerationSettings(t.database.db, user.id, { ...DEFAULT_SETTINGS, bannedWords: ['crap'], bannedWordsMode: 'reject', links: 'reject' });
      const d = await createDonation(t.database.db, { userId: user.id, username: 'see x.io', message: 'crap', amount: '2', currency: 'USD' });
      assert.deepEqual(await eventsOnChannel(t.database.db, widgetChannel(user.id)), []);
      const [held] = await approvalQueue(t.database.db, user.id);
      assert.equal(held!.donation.id, d.id);
      assert.equal(held!.moderation.shown_username, 'see');
      assert.equal(held!.moderation.shown_message, '****');
      assert.ok((JSON.parse(held!.moderation.reasons) as string[]).includes('rule'));
    });

    test('below the minimum amount the alert goes out without its message', async () => {
      const { user } = await streamer(t, { currency: 'USD' });
      await saveModerationSettings(t.database.db, user.id, { ...DEFAULT_SETTINGS, minMessageAmount: 500 });
      await createDonation(t.database.db, { userId: user.id, username: 'Small', message: 'read me', amount: '4.99', currency: 'USD' });
      await createDonation(t.database.db, { userId: user.id, username: 'Big', message: 'read me too', amount: '5', currency: 'USD' });
      const events = await eventsOnChannel(t.database.db, widgetChannel(user.id));
      assert.deepEqual(events.map((e) => [e.payload.username, e.payload.message]), [['Small', ''], ['Big', 'read me too']]);
    });

    test('skip current alert: a control message on the widget channel only', async () => {
      const { user, browser } = await streamer(t);
      await browser.get('/dashboard/moderation');
      const res = await browser.postForm('/dashboard/moderation/skip', {});
      assert.equal(res.statusCode, 303);
      const events = (await allEvents(t.database.db)).filter((e) => e.userId === user.id);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.type, 'widget.skip_alert');
      assert.deepEqual(events[0]!.channels, [widgetChannel(user.id)]);
      assert.equal(events[0]!.payload.reason, 'skip_alert');
    });
  });
}
