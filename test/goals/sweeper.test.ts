import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findGoal } from '../../src/modules/goals/goals.repository.js';
import { GOAL_SWEEP_INTERVAL_MS } from '../../src/modules/goals/goals.sweeper.js';
import { createGoal } from '../../src/modules/goals/goals.service.js';
import { goalChannel } from '../../src/modules/outbox/channels.js';
import { buildTestApp, makeUser } from '../helper.js';
import { until } from '../wait.js';
import { backdateGoal, daysFromNow, outbox } from './fixture.js';

test('the running app ends expired goals by itself (one `finished`) and stops sweeping when closed', async () => {
  const t = await buildTestApp();
  const db = t.database.db;
  const errors: unknown[] = [];
  t.app.log.error = ((...args: unknown[]) => void errors.push(args)) as typeof t.app.log.error;
  try {
    const user = await makeUser(db);
    const goal = await createGoal(db, user.id, { title: 'Ends soon', goalAmount: 10, expiresAt: daysFromNow(1) });
    const endsAt = Date.now() - 1;
    await backdateGoal(db, goal.id, endsAt);
    const row = await until(async () => {
      const now = (await findGoal(db, goal.id))!;
      return now.is_active ? null : now;
    }, 3000, 'the sweeper to end the goal');
    assert.equal(row.ended_at, endsAt);
    assert.deepEqual((await outbox(db, goalChannel(user.id))).map((e) => e.payload.reason), ['created', 'finished']);
  } finally {
    await t.close();
  }
  // A sweeper still ticking after close would fail on the closed database and log it.
  await new Promise((r) => setTimeout(r, GOAL_SWEEP_INTERVAL_MS * 1.5));
  assert.deepEqual(errors, [], 'no sweep failed, during or after close');
});
