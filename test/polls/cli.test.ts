import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { pollChannel } from '../../src/modules/outbox/channels.js';
import { count, outbox } from '../goals/fixture.js';
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

  json(await runCli(['donation', 'simulate', '--user', user.code, '--poll-option', String(chips!.id)], env));
  json(await runCli(['donation', 'simulate', '--user', user.code, '--poll-option-title', 'NACHOS'], env));
  json(await runCli(['donation', 'simulate', '--user', user.code, '--vote-randomly', '--count', '2'], env));
  const closed = json(await runCli(['poll', 'close', String(poll.id)], env));
  assert.equal(closed.is_active, 0);
  assert.deepEqual(closed.options.map((o: { title: string }) => o.title), ['Chips', 'Popcorn', 'NACHOS']);
  assert.equal(closed.options.reduce((sum: number, o: { amount_value: number }) => sum + o.amount_value, 0), 4, 'every donation voted once');
  assert.deepEqual(json(await runCli(['poll', 'show', String(poll.id)], env)), closed);
  const events = await outbox(t.database.db, pollChannel(user.id));
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'updated', 'updated', 'finished']);
});

test('a bad vote exits non-zero with one line and write nothing', async () => {
  const user = await makeUser(t.database.db);
  const donations = await count(t.database.db, 'donations');
  const cases: [string[], RegExp][] = [
    [['donation', 'simulate', '--user', user.code, '--poll-option', '12345'], /^openalerts: poll_option_id: The streamer has no active poll to vote in\.\n$/],
  ];
  for (const [args, stderr] of cases) {
    const res = await runCli(args, env);
    assert.equal(res.code, 1, args.join(' '));
    assert.match(res.stderr, stderr);
    assert.equal(res.stdout, '');
  }
  assert.equal(await count(t.database.db, 'donations'), donations);
  assert.deepEqual(await outbox(t.database.db, pollChannel(user.id)), []);
});
