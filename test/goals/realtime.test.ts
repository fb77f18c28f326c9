import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { closeGoal, createGoal } from '../../src/modules/goals/goals.service.js';
import { goalChannel, pollChannel } from '../../src/modules/outbox/channels.js';
import { closePoll, createPoll } from '../../src/modules/polls/polls.service.js';
import { publicationsOn, subscribeAsApp } from '../realtime/app-subscriber.js';
import { until } from '../wait.js';
import { buildTestApp, issueToken, listen, makeApp, makeUser, type TestApp } from '../helper.js';

let t: TestApp;
let base: string;
before(async () => {
  t = await buildTestApp();
  base = await listen(t.app);
});
after(async () => t.close());


test('goal and poll changes reach a subscriber of $goals: and $polls: with the spec payload and reason', async () => {
  const db = t.database.db;
  const streamer = await makeUser(db, { currency: 'USD' });
  const { app } = await makeApp(t, streamer.id);
  const token = await issueToken(t, { userId: streamer.id, clientId: app.client_id, scopes: ['oauth-user-show', 'oauth-goal-subscribe', 'oauth-poll-subscribe'] });
  const goals = goalChannel(streamer.id);
  const polls = pollChannel(streamer.id);
  const client = await subscribeAsApp(base, token, [goals, polls]);
  try {
    const goal = await createGoal(db, streamer.id, { title: 'New chair', goalAmount: 200, startAmount: 10 });
    const poll = await createPoll(db, streamer.id, { title: 'Which chair?', options: ['Red', 'Black'] });
    await createDonation(db, { userId: streamer.id, amount: 15, currency: 'USD', pollOptionId: poll.options[1]!.id });
    const finishedGoal = await closeGoal(db, goal.id);
    const finishedPoll = await closePoll(db, poll.id);
    await until(() => publicationsOn(client, goals).length >= 3 && publicationsOn(client, polls).length >= 3, 3000, 'goal and poll publications');

    const { ended_at: _g, ...goalResource } = finishedGoal;
    assert.deepEqual(publicationsOn(client, goals), [
      { ...goalResource, is_active: 1, raised_amount: 10, reason: 'created' },
      { ...goalResource, is_active: 1, raised_amount: 25, reason: 'updated' },
      { ...goalResource, reason: 'finished' },
    ]);
    const { currency: _c, started_at: _s, ended_at: _e, ...pollResource } = finishedPoll;
    const [red, black] = poll.options;
    assert.deepEqual(publicationsOn(client, polls), [
      { ...pollResource, is_active: 1, options: [red, black], reason: 'created' },
      { ...pollResource, is_active: 1, options: [red, { ...black, amount_value: 1, amount_percent: 100, is_winner: 1 }], reason: 'updated' },
      { ...pollResource, reason: 'finished' },
    ]);
    assert.deepEqual(pollResource.options.map((o) => o.is_winner), [0, 1]);
  } finally {
    client.close();
  }
});
