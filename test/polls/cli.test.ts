import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pollChannel } from '../../src/modules/outbox/channels.js';
import { outbox } from '../goals/fixture.js';
import { makeUser, openTestDatabase, tempDir, type TestDatabase } from '../helper.js';
import { runCli } from '../process.js';

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

test('poll create / show / close and sandbox votes by id, by title and at random', async () => {
  const user = await makeUser(t.database.db);
  const poll = json(await runCli(['poll', 'create', '--user', user.code, '--title', 'Snack?', '--option', 'Chips', '--option', 'Popcorn', '--type', 'count', '--allow-user-options'], env));
  assert.deepEqual([poll.is_active, poll.type, poll.allow_user_options, poll.options.map((o: { title: string }) => o.title)], [1, 'count', 1, ['Chips', 'Popcorn']]);
  const [chips] = poll.options as { id: number }[];

  // Separate processes voting at once, as several sandbox terminals would.
  const votes = await Promise.all([
    runCli(['donation', 'simulate', '--user', user.code, '--poll-option', String(chips!.id)], env),
    runCli(['donation', 'simulate', '--user', user.code, '--poll-option-title', 'NACHOS'], env),
    runCli(['donation', 'simulate', '--user', user.code, '--vote-randomly', '--count', '2'], env),
  ]);
  votes.forEach(json);
  const closed = json(await runCli(['poll', 'close', String(poll.id)], env));
  assert.equal(closed.is_active, 0);
  assert.deepEqual(closed.options.map((o: { title: string }) => o.title).sort(), ['Chips', 'NACHOS', 'Popcorn']);
  assert.equal(closed.options.find((o: { title: string }) => o.title === 'NACHOS').amount_value >= 1, true);
  assert.equal(closed.options.reduce((sum: number, o: { amount_value: number }) => sum + o.amount_value, 0), 4, 'every donation voted once');
  assert.deepEqual(json(await runCli(['poll', 'show', String(poll.id)], env)), closed);
  const events = await outbox(t.database.db, pollChannel(user.id));
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'updated', 'updated', 'finished']);
});
