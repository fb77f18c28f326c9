import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pollChannel } from '../../src/modules/outbox/channels.js';
import { outbox } from '../goals/fixture.js';
import { cliDatabase, cliJson } from '../cli-fixture.js';
import { makeUser } from '../helper.js';
import { runCli } from '../process.js';

const cli = cliDatabase();

test('poll create / show / close and sandbox votes by id, by title and at random', async () => {
  const user = await makeUser(cli.db);
  const poll = cliJson(await runCli(['poll', 'create', '--user', user.code, '--title', 'Snack?', '--option', 'Chips', '--option', 'Popcorn', '--type', 'count', '--allow-user-options'], cli.env));
  assert.deepEqual([poll.is_active, poll.type, poll.allow_user_options, poll.options.map((o: { title: string }) => o.title)], [1, 'count', 1, ['Chips', 'Popcorn']]);
  const [chips] = poll.options as { id: number }[];

  // Separate processes voting at once, as several sandbox terminals would.
  const votes = await Promise.all([
    runCli(['donation', 'simulate', '--user', user.code, '--poll-option', String(chips!.id)], cli.env),
    runCli(['donation', 'simulate', '--user', user.code, '--poll-option-title', 'NACHOS'], cli.env),
    runCli(['donation', 'simulate', '--user', user.code, '--vote-randomly', '--count', '2'], cli.env),
  ]);
  votes.forEach(cliJson);
  const closed = cliJson(await runCli(['poll', 'close', String(poll.id)], cli.env));
  assert.equal(closed.is_active, 0);
  assert.deepEqual(closed.options.map((o: { title: string }) => o.title).sort(), ['Chips', 'NACHOS', 'Popcorn']);
  assert.equal(closed.options.find((o: { title: string }) => o.title === 'NACHOS').amount_value >= 1, true);
  assert.equal(closed.options.reduce((sum: number, o: { amount_value: number }) => sum + o.amount_value, 0), 4, 'every donation voted once');
  assert.deepEqual(cliJson(await runCli(['poll', 'show', String(poll.id)], cli.env)), closed);
  const events = await outbox(cli.db, pollChannel(user.id));
  assert.deepEqual(events.map((e) => e.payload.reason), ['created', 'updated', 'updated', 'updated', 'updated', 'finished']);
});
