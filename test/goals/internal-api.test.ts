import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { goalChannel } from '../../src/modules/outbox/channels.js';
import { buildTestApp, type TestApp } from '../helper.js';
import { dashboardSession } from './dashboard-session.js';
import { daysFromNow, outbox } from './fixture.js';

let t: TestApp;
before(async () => {
  t = await buildTestApp();
});
after(async () => t.close());

test('without a session every route answers 401 JSON, before looking at the body', async () => {
  for (const [method, url] of [['GET', '/internal/goals'], ['POST', '/internal/goals'], ['PATCH', '/internal/goals/1'], ['POST', '/internal/goals/1/close'], ['GET', '/internal/session']] as const) {
    const res = await t.app.inject({ method, url, payload: method === 'GET' ? undefined : { nonsense: true }, headers: { cookie: 'oa_session=forged' } });
    assert.equal(res.statusCode, 401, `${method} ${url}`);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.deepEqual(res.json(), { message: 'Unauthenticated.' });
  }
});

test('writes need the CSRF token in x-csrf-token: missing or wrong is 403 and writes nothing', async () => {
  const s = await dashboardSession(t.app, 'Csrfer');
  for (const csrf of [null, 'forged-token']) {
    const res = await s.call('POST', '/internal/goals', { title: 'T', goal_amount: 10 }, csrf);
    assert.equal(res.statusCode, 403);
    assert.equal(res.headers['content-type'], 'application/json');
    assert.equal(typeof res.json().message, 'string');
  }
  assert.deepEqual((await s.call('GET', '/internal/goals')).json(), { data: [] });
  assert.deepEqual(await outbox(t.database.db, goalChannel(s.userId)), []);
});

test('create, read, list, edit and close goals; each change is queued on the goals channel', async () => {
  const s = await dashboardSession(t.app, 'Goalie', 'EUR');
  const expiresAt = daysFromNow(7);
  const created = await s.call('POST', '/internal/goals', { title: 'New camera', goal_amount: '300.50', start_amount: 20, expires_at: expiresAt });
  assert.equal(created.statusCode, 201, created.body);
  assert.equal(created.headers['content-type'], 'application/json');
  const goal = created.json().data;
  assert.deepEqual(
    { ...goal, started_at: typeof goal.started_at },
    { id: goal.id, is_active: 1, title: 'New camera', currency: 'EUR', start_amount: 20, raised_amount: 20, goal_amount: 300.5, started_at: 'string', expires_at: expiresAt, ended_at: null },
  );
  assert.match(goal.started_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

  assert.deepEqual((await s.call('GET', `/internal/goals/${goal.id}`)).json(), { data: goal });
  assert.deepEqual((await s.call('GET', '/internal/goals?state=active')).json(), { data: [goal] });
  assert.deepEqual((await s.call('GET', '/internal/goals?state=finished')).json(), { data: [] });

  const edited = await s.call('PATCH', `/internal/goals/${goal.id}`, { title: 'Better camera', goal_amount: 400, expires_at: null });
  assert.equal(edited.statusCode, 200, edited.body);
  assert.deepEqual([edited.json().data.title, edited.json().data.goal_amount, edited.json().data.expires_at], ['Better camera', 400, null]);

  const closed = await s.call('POST', `/internal/goals/${goal.id}/close`);
  assert.equal(closed.statusCode, 200, closed.body);
  assert.equal(closed.json().data.is_active, 0);
  const late = await s.call('PATCH', `/internal/goals/${goal.id}`, { title: 'Too late' });
  assert.equal(late.statusCode, 409);
  assert.equal(typeof late.json().message, 'string');

  const events = await outbox(t.database.db, goalChannel(s.userId));
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'finished']);
  const { ended_at: _ended, ...resource } = closed.json().data;
  assert.deepEqual(events[2]!.payload, { ...resource, reason: 'finished' });
});

test('bad input is a 400 in the INTEROP §1 shape; other streamers\' goals are 404', async () => {
  const s = await dashboardSession(t.app, 'Validator');
  const missing = await s.call('POST', '/internal/goals', { title: 'No amount' });
  assert.equal(missing.statusCode, 400);
  assert.deepEqual(missing.json(), { message: 'The goal_amount field is required.', errors: { goal_amount: ['The goal_amount field is required.'] } });
  const rules = await s.call('POST', '/internal/goals', { title: 'Upside down', goal_amount: 5, start_amount: '10', currency: 'XXX', expires_at: '2001-01-01 00:00:00' });
  assert.equal(rules.statusCode, 400);
  assert.deepEqual(Object.keys(rules.json().errors).sort(), ['currency', 'expires_at', 'goal_amount']);
  assert.equal(rules.json().message, Object.values(rules.json().errors as Record<string, string[]>)[0]![0]);
  const long = await s.call('POST', '/internal/goals', { title: 'x'.repeat(256), goal_amount: 5 });
  assert.equal(long.statusCode, 400);
  assert.deepEqual(Object.keys(long.json().errors), ['title']);
  assert.equal((await s.call('GET', '/internal/goals/abc')).statusCode, 400);
  assert.equal((await s.call('GET', '/internal/goals?state=everything')).statusCode, 400);

  const owner = await dashboardSession(t.app, 'Owner');
  const theirs = (await owner.call('POST', '/internal/goals', { title: 'Mine', goal_amount: 50 })).json().data;
  for (const res of [
    await s.call('GET', `/internal/goals/${theirs.id}`),
    await s.call('PATCH', `/internal/goals/${theirs.id}`, { title: 'Stolen' }),
    await s.call('POST', `/internal/goals/${theirs.id}/close`),
  ]) {
    assert.equal(res.statusCode, 404);
    assert.equal(res.headers['content-type'], 'application/json');
  }
  assert.equal((await owner.call('GET', `/internal/goals/${theirs.id}`)).json().data.is_active, 1);
});

test('the internal API stays out of the public OpenAPI document', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
  assert.deepEqual(Object.keys(doc.paths).filter((p) => p.startsWith('/internal')), []);
});
