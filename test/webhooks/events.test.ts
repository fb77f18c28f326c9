import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { setMerchandiseAccess } from '../../src/modules/apps/apps.service.js';
import { upsertRate } from '../../src/modules/currencies/currencies.repository.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { closeGoal, createGoal } from '../../src/modules/goals/goals.service.js';
import { createMerchant } from '../../src/modules/merchants/merchants.service.js';
import { donationChannel, goalChannel, pollChannel } from '../../src/modules/outbox/channels.js';
import { closePoll, createPoll } from '../../src/modules/polls/polls.service.js';
import { markShown } from '../../src/modules/widgets/alerts.service.js';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import { json } from '../api/helpers.js';
import { buildTestApp, issueToken, listen, makeApp, makeUser, type TestApp } from '../helper.js';
import { encodeBody, jsSignature, uniqueId, type Params } from '../merchandise/fixture.js';
import { sleep, until } from '../wait.js';
import { publicationsOn, subscribeAsApp } from '../realtime/app-subscriber.js';
import { WEBHOOK_TEST_ENV } from './fixture.js';
import { Receiver } from './receiver.js';

/**
 * Issue 11: every event type an application can subscribe to is delivered, and its `data` is the
 * resource the REST API answered for the same item, or (goals, polls, donations) what the real-time
 * channel carried for the same event without its `reason`. One subscription to all ten events, a real
 * WebSocket subscriber of the streamer's donation, goal and poll channels beside it, and the events
 * of another application (its custom alert, its merchant's sale) that must not reach this one.
 */
describe('every webhook event type is delivered with the REST / real-time resource as data', () => {
  let t: TestApp;
  let base: string;
  let receiver: Receiver;
  before(async () => {
    t = await buildTestApp({ env: { ...WEBHOOK_TEST_ENV, PUBLIC_URL: 'https://alerts.example.test', RATE_LIMIT_PER_MINUTE: '1000000' } });
    base = await listen(t.app);
    receiver = await Receiver.start();
  });
  after(async () => {
    await receiver.close();
    await t.close();
  });

  /** A merchant application with Merchandise API access and a signed-request helper (JS signature order). */
  async function merchantApp(ownerId: number) {
    const db = t.database.db;
    const { app, clientSecret } = await makeApp(t, ownerId);
    await setMerchandiseAccess(db, app.client_id, true);
    const merchant = await createMerchant(db, { clientId: app.client_id, identifier: uniqueId('shop'), name: 'Shop' });
    const token = await issueToken(t, { userId: null, clientId: app.client_id, scopes: [] });
    const call = async (url: string, params: Params) => {
      const body = encodeBody({ ...params, signature: jsSignature(params, clientSecret) }, 'form');
      return t.app.inject({ method: 'POST', url, payload: body.payload, headers: { authorization: `Bearer ${token}`, ...body.headers } });
    };
    const sell = async (userId: number) => {
      const item = uniqueId('m');
      const created = await call('/api/v1/merchandise', { merchant_identifier: merchant.identifier, merchandise_identifier: item, title: { en_US: 'Hoodie' }, is_active: '1', currency: 'EUR', price_user: '5.5', price_service: '1.25' });
      assert.equal(created.statusCode, 201, created.body);
      const sale = await call('/api/v1/merchandise_sale', { user_id: userId, external_id: uniqueId('sale'), merchant_identifier: merchant.identifier, merchandise_identifier: item, amount: '20', currency: 'EUR' });
      assert.equal(sale.statusCode, 201, sale.body);
      return json(sale).data as Record<string, unknown>;
    };
    return { app, sell };
  }

  const withoutReason = ({ reason: _reason, ...rest }: Record<string, unknown>) => rest;

  test('all ten types, in order, signed; data equal to the REST answer or the real-time publication; other apps’ items not sent', async () => {
    const db = t.database.db;
    await upsertRate(db, 'EUR', 0.8, '2025-01-01');
    const streamer = await makeUser(db, { currency: 'USD' });
    const owner = await makeUser(db);
    const mine = await merchantApp(owner.id);
    const theirs = await merchantApp(owner.id);
    const token = await issueToken(t, { userId: streamer.id, clientId: mine.app.client_id, scopes: [...ALL_SCOPES] });
    const otherToken = await issueToken(t, { userId: streamer.id, clientId: theirs.app.client_id, scopes: [...ALL_SCOPES] });
    const auth = (tok: string) => ({ authorization: `Bearer ${tok}` });

    const all = ['donation.created', 'custom_alert.created', 'merchandise_sale.created', 'goal.created', 'goal.updated', 'goal.finished', 'poll.created', 'poll.updated', 'poll.finished', 'alert.shown'];
    const created = await t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: auth(token), payload: { url: receiver.url, events: all } });
    assert.equal(created.statusCode, 201, created.body);
    const secret = json(created).data.secret as string;
    const client = await subscribeAsApp(base, token, [donationChannel(streamer.id), goalChannel(streamer.id), pollChannel(streamer.id)]);
    try {
      const goal = await createGoal(db, streamer.id, { title: 'Camera', goalAmount: '100', startAmount: '0' });
      const poll = await createPoll(db, streamer.id, { title: 'Next game?', options: ['Chess', 'Go'] });
      // Counts towards the goal and votes in the poll: goal.updated and poll.updated.
      const donation = await createDonation(db, { userId: streamer.id, amount: 15, currency: 'USD', username: 'donor', message: 'hi', pollOptionId: poll.options[1]!.id });
      // The REST resource as it was when the event happened (before it was shown).
      const restDonation = json(await t.app.inject({ method: 'GET', url: '/api/v1/alerts/donations', headers: auth(token) })).data.find((d: { id: number }) => d.id === donation.id);
      const alert = await t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: auth(token), payload: { header: 'mine', message: 'hello' } });
      assert.equal(alert.statusCode, 201, alert.body);
      const customAlert = json(alert).data as Record<string, unknown>;
      const otherAlert = await t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: auth(otherToken), payload: { header: 'not yours' } });
      assert.equal(otherAlert.statusCode, 201, otherAlert.body);
      const sale = await mine.sell(streamer.id);
      const otherSale = await theirs.sell(streamer.id);
      await closeGoal(db, goal.id);
      await closePoll(db, poll.id);
      const shown = [
        await markShown(db, streamer.id, 'donation', donation.id),
        await markShown(db, streamer.id, 'custom', customAlert.id),
        await markShown(db, streamer.id, 'merchandise-sale', sale.id),
        // Another application's items: their alert.shown is not ours either.
        await markShown(db, streamer.id, 'custom', json(otherAlert).data.id),
        await markShown(db, streamer.id, 'merchandise-sale', otherSale.id),
      ];

      // A donation's transaction records the vote and the goal's progress before the donation itself.
      const expected = ['goal.created', 'poll.created', 'poll.updated', 'goal.updated', 'donation.created', 'custom_alert.created', 'merchandise_sale.created', 'goal.finished', 'poll.finished', 'alert.shown', 'alert.shown', 'alert.shown'];
      await until(() => receiver.received.length >= expected.length, 60_000, 'every event delivered');
      await until(() => publicationsOn(client, goalChannel(streamer.id)).length >= 3 && publicationsOn(client, pollChannel(streamer.id)).length >= 3 && publicationsOn(client, donationChannel(streamer.id)).length >= 1, 60_000, 'the real-time publications');
      // Whatever else was to come (another application's items) has had time to arrive.
      await sleep(300);
      const got = receiver.received.map((r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as { type: string; data: Record<string, unknown> });
      assert.deepEqual(got.map((m) => m.type), expected, 'each type once, in the order the events were recorded; none of the other application’s');
      const of = (type: string) => got.filter((m) => m.type === type).map((m) => m.data);

      assert.deepEqual(of('donation.created'), [restDonation], 'donation: the REST resource');
      assert.deepEqual(of('donation.created'), publicationsOn(client, donationChannel(streamer.id)).map(withoutReason), 'donation: the real-time publication');
      assert.deepEqual(of('custom_alert.created'), [customAlert], 'custom alert: what POST /custom_alert answered');
      assert.deepEqual(of('merchandise_sale.created'), [sale], 'sale: what POST /merchandise_sale answered');
      const goalEvents = [...of('goal.created'), ...of('goal.updated'), ...of('goal.finished')];
      assert.deepEqual(goalEvents, publicationsOn(client, goalChannel(streamer.id)).map(withoutReason), 'goals: the real-time publications');
      const pollEvents = [...of('poll.created'), ...of('poll.updated'), ...of('poll.finished')];
      assert.deepEqual(pollEvents, publicationsOn(client, pollChannel(streamer.id)).map(withoutReason), 'polls: the real-time publications');
      assert.deepEqual(of('alert.shown'), shown.slice(0, 3), 'alert.shown: what the widget was answered');
    } finally {
      client.close();
    }
  });
});
