import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { goalChannel } from '../../src/modules/outbox/channels.js';
import { makeUser, openTestDatabase, tempDir, type TestDatabase } from '../helper.js';
import { runCli } from '../process.js';
import { daysFromNow, outbox } from './fixture.js';

let t: TestDatabase;
let env: Record<string, string>;
before(async () => {
  t = await openTestDatabase('sqlite');
  env = { DATA_DIR: tempDir(), ...t.env };
});
after(async () => t.drop());

const json = (res: { code: number | null; stdout: string; stderr: string }) => {
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
};

test('goal create / list / close print JSON', async () => {
  const user = await makeUser(t.database.db, { currency: 'EUR' });
  const expiresAt = daysFromNow(3);
  const goal = json(await runCli(['goal', 'create', '--user', user.email, '--title', 'Stream PC', '--goal-amount', '1000', '--start-amount', '100', '--currency', 'EUR', '--expires-at', expiresAt], env));
  assert.deepEqual({ ...goal, started_at: typeof goal.started_at }, {
    id: goal.id, is_active: 1, title: 'Stream PC', currency: 'EUR', start_amount: 100, raised_amount: 100, goal_amount: 1000, started_at: 'string', expires_at: expiresAt, ended_at: null,
  });
  await createDonation(t.database.db, { userId: user.id, amount: 25, currency: 'EUR' });
  await createDonation(t.database.db, { userId: user.id, amount: 25, currency: 'EUR' });
  const closed = json(await runCli(['goal', 'close', String(goal.id)], env));
  assert.equal(closed.is_active, 0);
  const listed = json(await runCli(['goal', 'list', '--user', user.code], env));
  assert.deepEqual(listed, { goals: [closed] });
  assert.equal(closed.raised_amount, 150);
  const events = await outbox(t.database.db, goalChannel(user.id));
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'finished']);
});

test('bad goal input exits non-zero with a one-line reason and writes nothing', async () => {
  const user = await makeUser(t.database.db);
  const cases: [string[], RegExp][] = [
    [['goal', 'create', '--user', String(user.id), '--title', 'Low', '--goal-amount', '5', '--start-amount', '10'], /^openalerts: goal_amount: The goal_amount must be greater than the start_amount\.\n$/],
  ];
  for (const [args, stderr] of cases) {
    const res = await runCli(args, env);
    assert.equal(res.code, 1, args.join(' '));
    assert.match(res.stderr, stderr);
    assert.equal(res.stdout, '');
  }
  assert.deepEqual(await outbox(t.database.db, goalChannel(user.id)), []);
});
