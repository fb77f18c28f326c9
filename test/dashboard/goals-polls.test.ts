import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { formatDateTime } from '../../src/domain/datetime.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { TokenVerifier } from '../../src/security/jwt.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertHtml, pageData, streamer, followAccepted } from './helpers.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(() => t.close());

const goalsOf = (userId: number) => t.database.db.selectFrom('goals').selectAll().where('user_id', '=', userId).orderBy('id').execute();

test('goals: start one (local end time with the browser offset), see progress, edit, close; live channel tokens', async () => {
  const { user, browser } = await streamer(t, { currency: 'USD' });
  const page = await browser.get('/dashboard/goals');
  assertHtml(page);
  assert.match(page.body, /No goal is running/);
  const data = pageData(page);
  assert.equal(data.realtime.channels[0].channel, `$goals:goal_${user.id}`);
  assert.equal((await new TokenVerifier(t.app.ctx.secrets.realtimeTokenSecret).verify(data.realtime.channels[0].token)).sub, String(user.id));

  const year = new Date().getUTCFullYear() + 1;
  const created = await followAccepted(browser, await browser.postForm('/dashboard/goals', { title: 'New <mic>', goal_amount: '500', start_amount: '50', currency: 'USD', expires_at: `${year}-06-01T20:30`, tz_offset: '120' }), '/dashboard/goals');
  assert.match(created.body, /Goal “New &lt;mic&gt;” started/);
  const [goal] = await goalsOf(user.id);
  assert.ok(goal);
  assert.equal(goal.expires_at, Date.UTC(year, 5, 1, 18, 30), '20:30 at UTC+2 is 18:30 UTC');
  assert.equal(goal.raised_amount, 5000);

  await createDonation(t.database.db, { userId: user.id, amount: '25.50', currency: 'USD' });
  const progress = await browser.get('/dashboard/goals');
  assert.match(progress.body, new RegExp(`data-goal-id="${goal.id}"`));
  assert.match(progress.body, /<div class="progress-line">\$75\.50 of \$500\.00 · 15%<\/div>/);
  assert.match(progress.body, /<progress max="500" value="75.5">/);
  assert.match(progress.body, new RegExp(`value="${formatDateTime(goal.expires_at!).replace(' ', 'T').slice(0, 16)}" data-utc`), 'the edit form holds the end in UTC');

  const edited = await followAccepted(browser, await browser.postForm(`/dashboard/goals/${goal.id}`, { title: 'Better mic', goal_amount: '600', start_amount: '50', expires_at: '' }), '/dashboard/goals');
  assert.match(edited.body, /Goal saved/);
  const [after1] = await goalsOf(user.id);
  assert.equal(after1!.title, 'Better mic');
  assert.equal(after1!.goal_amount, 60000);
  assert.equal(after1!.expires_at, null);

  const closed = await followAccepted(browser, await browser.postForm(`/dashboard/goals/${goal.id}/close`, {}), '/dashboard/goals');
  assert.match(closed.body, /Goal “Better mic” closed/);
  assert.match(closed.body, /Finished goals/);
  assert.equal((await goalsOf(user.id))[0]!.is_active, 0);
  const late = await browser.postForm(`/dashboard/goals/${goal.id}`, { title: 'Too late', goal_amount: '700' });
  assertHtml(late, 409);
  assert.match(late.body, /This goal has ended/);

  const events = await eventsOnChannel(t.database.db, `$goals:goal_${user.id}`);
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'finished']);
  assert.deepEqual(events.map((e) => e.type), ['goal.created', 'goal.updated', 'goal.updated', 'goal.finished']);
});

test('goals: validation errors beside the fields, the form keeps input; CSRF; other streamers’ goals untouchable', async () => {
  const { user, browser } = await streamer(t);
  await browser.get('/dashboard/goals');
  const bad = await browser.postForm('/dashboard/goals', { title: '', goal_amount: '10', start_amount: '20', currency: 'XXX', expires_at: '2001-01-01T00:00' });
  assertHtml(bad, 422);
  assert.match(bad.body, /The title field is required/);
  assert.match(bad.body, /The currency must be one of/);
  assert.match(bad.body, /The expires_at field must be a date-time in the future/);
  assert.match(bad.body, /name="start_amount" inputmode="decimal" value="20"/);
  assert.equal((await goalsOf(user.id)).length, 0);
  assert.equal((await browser.postForm('/dashboard/goals', { title: 'x', goal_amount: '10', _csrf: 'forged' })).statusCode, 403);

  await browser.postForm('/dashboard/goals', { title: 'Mine', goal_amount: '10' });
  const [mine] = await goalsOf(user.id);
  const other = await streamer(t);
  assert.doesNotMatch((await other.browser.get('/dashboard/goals')).body, /Mine/);
  assert.equal((await other.browser.postForm(`/dashboard/goals/${mine!.id}`, { title: 'Hijacked', goal_amount: '10' })).statusCode, 404);
  assert.equal((await other.browser.postForm(`/dashboard/goals/${mine!.id}/close`, {})).statusCode, 404);
  assert.equal((await goalsOf(user.id))[0]!.is_active, 1);
  assert.equal((await goalsOf(user.id))[0]!.title, 'Mine');
});

test('polls: start one, live results channel, add options, close; one at a time; errors shown', async () => {
  const { user, browser } = await streamer(t, { currency: 'EUR' });
  const page = await browser.get('/dashboard/polls');
  assertHtml(page);
  assert.equal(pageData(page).realtime.channels[0].channel, `$polls:poll_${user.id}`);

  const bad = await browser.postForm('/dashboard/polls', { title: 'Which?', options: 'only one', type: 'count' });
  assertHtml(bad, 422);
  assert.match(bad.body, /only one<\/textarea>/);
  assert.match(bad.body, /<p class="error" role="alert">[^<]*option/i);

  const started = await followAccepted(browser, await browser.postForm('/dashboard/polls', { title: 'Next <game>?', options: 'Chess\r\nGo\r\n\r\nShogi', type: 'sum', currency: 'EUR', allow_user_options: '1' }), '/dashboard/polls');
  assert.match(started.body, /Poll “Next &lt;game&gt;\?” started/);
  assert.doesNotMatch(started.body, /Start a poll/, 'no second poll while one runs');
  const poll = await t.database.db.selectFrom('polls').selectAll().where('user_id', '=', user.id).executeTakeFirstOrThrow();
  assert.equal(poll.type, 'sum');
  assert.equal(poll.allow_user_options, 1);
  const options = await t.database.db.selectFrom('poll_options').selectAll().where('poll_id', '=', poll.id).orderBy('id').execute();
  assert.deepEqual(options.map((o) => o.title), ['Chess', 'Go', 'Shogi']);

  await createDonation(t.database.db, { userId: user.id, amount: '30', currency: 'EUR', pollOptionId: options[1]!.id });
  const results = await browser.get('/dashboard/polls');
  assert.match(results.body, new RegExp(`<li class="option winner" data-option-id="${options[1]!.id}">`));
  assert.match(results.body, /€30\.00 · 100%/);

  const again = await browser.postForm('/dashboard/polls', { title: 'Second', options: 'a\nb' });
  assertHtml(again, 409);
  assert.match(again.body, /You already run a poll/);

  const added = await followAccepted(browser, await browser.postForm(`/dashboard/polls/${poll.id}/options`, { add_options: 'Checkers\nchess' }), '/dashboard/polls');
  assert.match(added.body, /Options added/);
  assert.equal((await t.database.db.selectFrom('poll_options').select('id').where('poll_id', '=', poll.id).execute()).length, 4);
  const empty = await browser.postForm(`/dashboard/polls/${poll.id}/options`, { add_options: '  ' });
  assertHtml(empty, 422);
  assert.match(empty.body, /Type at least one option/);

  const other = await streamer(t);
  assert.doesNotMatch((await other.browser.get('/dashboard/polls')).body, /Chess/);
  assert.equal((await other.browser.postForm(`/dashboard/polls/${poll.id}/close`, {})).statusCode, 404);
  assert.equal((await other.browser.postForm(`/dashboard/polls/${poll.id}/options`, { add_options: 'spam' })).statusCode, 404);

  const closed = await followAccepted(browser, await browser.postForm(`/dashboard/polls/${poll.id}/close`, {}), '/dashboard/polls');
  assert.match(closed.body, /Poll “Next &lt;game&gt;\?” closed/);
  assert.match(closed.body, /Finished polls/);
  assert.match(closed.body, /<td data-label="Winner">Go<\/td>/);
  assert.match(closed.body, /Start a poll/);
  const reasons = (await eventsOnChannel(t.database.db, `$polls:poll_${user.id}`)).map((e) => e.payload.reason);
  assert.deepEqual(reasons, ['created', 'updated', 'updated', 'finished']);
});

test('polls: every form needs this session’s CSRF token; a forged one is refused and writes nothing', async () => {
  const { user, browser } = await streamer(t);
  const pollsOf = () => t.database.db.selectFrom('polls').selectAll().where('user_id', '=', user.id).execute();
  await browser.get('/dashboard/polls');
  assert.equal((await browser.postForm('/dashboard/polls', { title: 'Forged', options: 'a\nb', _csrf: 'forged' })).statusCode, 403);
  assert.equal((await browser.postForm('/dashboard/polls', { title: 'No token', options: 'a\nb' }, false)).statusCode, 403);
  assert.deepEqual(await pollsOf(), []);

  await followAccepted(browser, await browser.postForm('/dashboard/polls', { title: 'Real', options: 'a\nb' }), '/dashboard/polls');
  const [poll] = await pollsOf();
  assert.equal((await browser.postForm(`/dashboard/polls/${poll!.id}/options`, { add_options: 'c', _csrf: 'forged' })).statusCode, 403);
  assert.equal((await browser.postForm(`/dashboard/polls/${poll!.id}/close`, { _csrf: 'forged' })).statusCode, 403);
  assert.equal((await pollsOf())[0]!.is_active, 1);
  assert.equal((await t.database.db.selectFrom('poll_options').select('id').where('poll_id', '=', poll!.id).execute()).length, 2);
});
