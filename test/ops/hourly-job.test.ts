import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { hourlyJob } from '../../src/ops/hourly-job.js';

test('an hourly job runs shortly after ready, again on its interval without overlapping, and close waits for its round', async () => {
  const app = Fastify({ logger: false });
  let started = 0;
  let finished = 0;
  let release: () => void = () => {};
  hourlyJob(app, 'test job', async () => {
    started += 1;
    await new Promise<void>((resolve) => (release = resolve));
    finished += 1;
    return 1;
  }, 20, 10);
  assert.equal(started, 0, 'nothing before the server is ready (inject-only tests and the CLI never run it)');
  await app.ready();
  assert.equal(started, 0, 'the first round waits a moment: a starting server answers requests first');
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(started, 1, 'one round shortly after start');
  await new Promise((r) => setTimeout(r, 100));
  assert.equal(started, 1, 'a round still running is not started again by the interval');
  const closing = app.close();
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(finished, 0, 'close is waiting for the round');
  release();
  await closing;
  assert.equal(finished, 1);
});

test('a failed round is logged and the next one runs', async () => {
  const lines: string[] = [];
  const app = Fastify({ logger: { level: 'info', stream: { write: (line: string) => lines.push(line) } } });
  let rounds = 0;
  hourlyJob(app, 'flaky job', async () => {
    rounds += 1;
    if (rounds === 1) throw new Error('database away');
    return 0;
  }, 20, 0);
  await app.ready();
  while (rounds < 2) await new Promise((r) => setTimeout(r, 10));
  await app.close();
  assert.ok(lines.some((l) => l.includes('flaky job failed; will retry in an hour') && l.includes('database away')), lines.join(''));
});
