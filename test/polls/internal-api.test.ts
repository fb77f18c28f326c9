import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { pollChannel } from '../../src/modules/outbox/channels.js';
import { dashboardSession } from '../goals/dashboard-session.js';
import { outbox } from '../goals/fixture.js';
import { buildTestApp, type TestApp } from '../helper.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

test('polls over the internal API: create, one active at a time, edit, votes show up, close', async () => {
  const s = await dashboardSession(t.app, 'Pollster', 'EUR');
  assert.deepEqual((await s.call('GET', '/internal/polls/active')).json(), { data: null });

  const created = await s.call('POST', '/internal/polls', { title: 'Next game?', options: ['Doom', 'Quake'], type: 'sum', allow_user_options: true });
  assert.equal(created.statusCode, 201, created.body);
  const poll = created.json().data;
  assert.deepEqual({ ...poll, started_at: typeof poll.started_at, options: poll.options.map((o: { title: string }) => o.title) }, {
    id: poll.id, is_active: 1, title: 'Next game?', allow_user_options: 1, type: 'sum', options: ['Doom', 'Quake'], currency: 'EUR', started_at: 'string', ended_at: null,
  });

  const second = await s.call('POST', '/internal/polls', { title: 'Another', options: ['a', 'b'] });
  assert.equal(second.statusCode, 409);
  assert.equal(second.headers['content-type'], 'application/json');
  assert.match(second.json().message, /close it/);

  const edited = await s.call('PATCH', `/internal/polls/${poll.id}`, { title: 'Next game!', add_options: ['Half-Life'] });
  assert.equal(edited.statusCode, 200, edited.body);
  assert.deepEqual(edited.json().data.options.map((o: { title: string }) => o.title), ['Doom', 'Quake', 'Half-Life']);

  await createDonation(t.database.db, { userId: s.userId, amount: 10, currency: 'EUR', pollOptionTitle: 'half-life' });
  const active = (await s.call('GET', '/internal/polls/active')).json().data;
  assert.deepEqual(active.options.map((o: { amount_value: number; is_winner: number }) => [o.amount_value, o.is_winner]), [[0, 0], [0, 0], [10, 1]]);
  assert.deepEqual((await s.call('GET', `/internal/polls/${poll.id}`)).json().data, active);

  const closed = await s.call('POST', `/internal/polls/${poll.id}/close`);
  assert.equal(closed.statusCode, 200);
  assert.equal(closed.json().data.is_active, 0);
  assert.deepEqual((await s.call('GET', '/internal/polls?state=finished')).json().data.map((p: { id: number }) => p.id), [poll.id]);
  assert.deepEqual((await outbox(t.database.db, pollChannel(s.userId))).map((e) => e.payload.reason), ['created', 'updated', 'updated', 'finished']);
});

test('poll validation, CSRF and ownership', async () => {
  const s = await dashboardSession(t.app, 'Checker');
  const one = await s.call('POST', '/internal/polls', { title: 'Lonely', options: ['only'] });
  assert.equal(one.statusCode, 400);
  assert.deepEqual(Object.keys(one.json().errors), ['options']);
  const dup = await s.call('POST', '/internal/polls', { title: 'Dup', options: ['Same', 'SAME'] });
  assert.equal(dup.statusCode, 400);
  assert.deepEqual(dup.json().errors, { options: ['The option "SAME" is listed twice.'] });
  const badType = await s.call('POST', '/internal/polls', { title: 'Type', options: ['a', 'b'], type: 'median' });
  assert.equal(badType.statusCode, 400);
  assert.deepEqual(Object.keys(badType.json().errors), ['type']);
  assert.equal((await s.call('POST', '/internal/polls', { title: 'No token', options: ['a', 'b'] }, null)).statusCode, 403);
  assert.deepEqual((await s.call('GET', '/internal/polls')).json(), { data: [] });

  const owner = await dashboardSession(t.app, 'PollOwner');
  const theirs = (await owner.call('POST', '/internal/polls', { title: 'Mine', options: ['a', 'b'] })).json().data;
  assert.equal((await s.call('GET', `/internal/polls/${theirs.id}`)).statusCode, 404);
  assert.equal((await s.call('POST', `/internal/polls/${theirs.id}/close`)).statusCode, 404);
  assert.equal((await owner.call('GET', '/internal/polls/active')).json().data.id, theirs.id);
});
