import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { acquireServerLock, DatabaseInUseError } from '../../src/ops/server-lock.js';
import { tempDir } from '../helper.js';
import { runCli, startServerProcess } from '../process.js';

test('a second `serve` on the same SQLite file is refused with the holder named; CLI commands still run beside the server', async () => {
  const env = { DATA_DIR: tempDir() };
  const first = await startServerProcess(env);
  try {
    const second = await runCli(['serve'], { ...env, PORT: '0', HOST: '127.0.0.1' });
    assert.equal(second.code, 1);
    assert.match(second.stderr, /openalerts\.sqlite is in use by an OpenAlerts server \(PID \d+ on .+\); stop it first/);
    assert.match(second.stderr, /use PostgreSQL and Redis/);
    assert.equal(second.stderr.includes('    at '), false, 'no stack trace');

    const created = await runCli(['user', 'create', '--email', 'beside@example.test', '--password', 'a long passphrase', '--name', 'Beside'], env);
    assert.equal(created.code, 0, created.stderr);
    assert.equal((await fetch(`${first.url}/readyz`)).status, 200, 'the first server still serves');
  } finally {
    assert.equal(await first.stop(), 0);
  }
  // A clean stop releases the file.
  const again = await startServerProcess(env);
  await again.stop();
});

test('a server killed without shutting down leaves no stale lock: the next start succeeds', async () => {
  const env = { DATA_DIR: tempDir() };
  const killed = await startServerProcess(env);
  await killed.stop('SIGKILL');
  const next = await startServerProcess(env);
  try {
    assert.equal((await fetch(`${next.url}/readyz`)).status, 200);
  } finally {
    await next.stop();
  }
});

test('the lock is per database file: another file is free, the same file is refused within one process too', () => {
  const dir = tempDir();
  const a = acquireServerLock(path.join(dir, 'a.sqlite'), 'server A');
  try {
    const b = acquireServerLock(path.join(dir, 'b.sqlite'), 'server B');
    b.release();
    assert.throws(() => acquireServerLock(path.join(dir, 'a.sqlite'), 'server C'), (err: unknown) => err instanceof DatabaseInUseError && /in use by server A \(PID/.test((err as Error).message));
  } finally {
    a.release();
  }
  acquireServerLock(path.join(dir, 'a.sqlite'), 'server D').release();
});
