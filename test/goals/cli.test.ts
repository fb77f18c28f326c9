import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { goalChannel } from '../../src/modules/outbox/channels.js';
import { cliDatabase, cliJson } from '../cli-fixture.js';
import { makeUser } from '../helper.js';
import { runCli } from '../process.js';
import { daysFromNow, outbox } from './fixture.js';

const cli = cliDatabase();

test('goal create / list / close print JSON', async () => {
  const user = await makeUser(cli.db, { currency: 'EUR' });
  const expiresAt = daysFromNow(3);
  const goal = cliJson(await runCli(['goal', 'create', '--user', user.email, '--title', 'Stream PC', '--goal-amount', '1000', '--start-amount', '100', '--currency', 'EUR', '--expires-at', expiresAt], cli.env));
  assert.deepEqual({ ...goal, started_at: typeof goal.started_at }, {
    id: goal.id, is_active: 1, title: 'Stream PC', currency: 'EUR', start_amount: 100, raised_amount: 100, goal_amount: 1000, started_at: 'string', expires_at: expiresAt, ended_at: null,
  });
  await createDonation(cli.db, { userId: user.id, amount: 25, currency: 'EUR' });
  await createDonation(cli.db, { userId: user.id, amount: 25, currency: 'EUR' });
  const closed = cliJson(await runCli(['goal', 'close', String(goal.id)], cli.env));
  assert.equal(closed.is_active, 0);
  const listed = cliJson(await runCli(['goal', 'list', '--user', user.code], cli.env));
  assert.deepEqual(listed, { goals: [closed] });
  assert.equal(closed.raised_amount, 150);
  const events = await outbox(cli.db, goalChannel(user.id));
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'finished']);
});

test('bad goal input exits non-zero with a one-line reason and writes nothing', async () => {
  const user = await makeUser(cli.db);
  const cases: [string[], RegExp][] = [
    [['goal', 'create', '--user', String(user.id), '--title', 'Low', '--goal-amount', '5', '--start-amount', '10'], /^openalerts: goal_amount: The goal_amount must be greater than the start_amount\.\n$/],
  ];
  for (const [args, stderr] of cases) {
    const res = await runCli(args, cli.env);
    assert.equal(res.code, 1, args.join(' '));
    assert.match(res.stderr, stderr);
    assert.equal(res.stdout, '');
  }
  assert.deepEqual(await outbox(cli.db, goalChannel(user.id)), []);
});
