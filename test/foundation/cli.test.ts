import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadSecrets } from '../../src/config/secrets.js';
import { createDatabase, type Database } from '../../src/db/database.js';
import { appSecret, findApp } from '../../src/modules/apps/apps.service.js';
import { tempDir } from '../helper.js';
import { runCli, startServerProcess } from '../process.js';
import { eventsOnChannel } from '../../src/modules/outbox/outbox.repository.js';

const dataDir = tempDir();
const env = { DATA_DIR: dataDir };
let database: Database;

before(async () => {
  const migrated = await runCli(['migrate'], env);
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.deepEqual(JSON.parse(migrated.stdout).applied.slice(0, 2), ['0001_foundation', '0002_oauth']);
  database = createDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'openalerts.sqlite') });
});
after(async () => database.close());

test('user create prints the account as JSON and stores it', async () => {
  const res = await runCli(['user', 'create', '--email', 'Cli@Example.test', '--password', 'a long passphrase', '--name', 'Cli Streamer', '--currency', 'RUB', '--language', 'ru_RU'], env);
  assert.equal(res.code, 0, res.stderr);
  const user = JSON.parse(res.stdout);
  assert.equal(user.email, 'cli@example.test');
  assert.equal(user.code, 'cli_streamer');
  assert.equal(user.role, 'admin');
  const row = await database.db.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
  assert.equal(row.currency, 'RUB');
  assert.equal(row.language, 'ru_RU');
  const second = JSON.parse((await runCli(['user', 'create', '--email', 'two@example.test', '--password', 'a long passphrase', '--name', 'Two', '--admin'], env)).stdout);
  assert.equal(second.role, 'admin');
});

test('user show accepts id, e-mail or code', async () => {
  for (const ref of ['1', 'cli@example.test', 'cli_streamer']) {
    const res = await runCli(['user', 'show', ref], env);
    assert.equal(res.code, 0, res.stderr);
    assert.equal(JSON.parse(res.stdout).id, 1);
  }
});

test('app create prints client_id and a client_secret that the service can read back', async () => {
  const res = await runCli(['app', 'create', '--owner', 'cli_streamer', '--name', 'Overlay', '--redirect-uri', 'https://a.example/cb', '--redirect-uri', 'https://b.example/cb'], env);
  assert.equal(res.code, 0, res.stderr);
  const app = JSON.parse(res.stdout);
  assert.ok(Number.isInteger(app.client_id));
  assert.deepEqual(app.redirect_uris, ['https://a.example/cb', 'https://b.example/cb']);
  const row = (await findApp(database.db, app.client_id))!;
  assert.equal(appSecret(loadSecrets({ dataDir, secretKey: null, realtimeTokenSecret: null }).encryptionKey, row), app.client_secret);
  const access = await runCli(['app', 'merchandise-access', String(app.client_id)], env);
  assert.equal(access.code, 0, access.stderr);
  assert.equal((await findApp(database.db, app.client_id))!.merchandise_access, 1);
});

test('donation simulate fills omitted fields with realistic values, and honours given ones', async () => {
  const one = await runCli(['donation', 'simulate', '--user', 'cli@example.test', '--amount', '150', '--currency', 'RUB', '--username', 'Viewer', '--message', 'hello'], env);
  assert.equal(one.code, 0, one.stderr);
  const donation = JSON.parse(one.stdout);
  assert.equal(donation.amount, 150);
  assert.equal(donation.currency, 'RUB');
  assert.equal(donation.amount_in_user_currency, 150);
  assert.equal(donation.username, 'Viewer');
  assert.deepEqual(donation.payin_system, { title: 'Sandbox' });

  const many = await runCli(['donation', 'simulate', '--user', '1', '--count', '5', '--interval', '10'], env);
  assert.equal(many.code, 0, many.stderr);
  const { donations } = JSON.parse(many.stdout);
  assert.equal(donations.length, 5);
  for (const d of donations) {
    assert.ok(d.amount > 0);
    assert.ok(['EUR', 'USD', 'RUB', 'BRL', 'TRY'].includes(d.currency));
    assert.ok(d.username.length > 0);
  }
  const events = await eventsOnChannel(database.db, '$alerts:donation_1');
  assert.equal(events.length, 6);
});

test('rates show and set', async () => {
  const set = await runCli(['rates', 'set', 'EUR', '0.95', '--as-of', '2026-11-24'], env);
  assert.equal(set.code, 0, set.stderr);
  const shown = JSON.parse((await runCli(['rates', 'show'], env)).stdout);
  assert.equal(shown.base, 'USD');
  assert.deepEqual(shown.rates.find((r: { currency: string }) => r.currency === 'EUR'), { ...shown.rates.find((r: { currency: string }) => r.currency === 'EUR'), per_usd: 0.95, as_of: '2026-11-24' });
});

test('bad arguments exit non-zero with a one-line reason and write nothing', async () => {
  const before = (await database.db.selectFrom('donations').select('id').execute()).length;
  const cases: [string[], RegExp][] = [
    [['user', 'create', '--email', 'x@example.test', '--password', 'short', '--name', 'Shorty'], /password: The password must be at least 8 characters/],
    [['user', 'create', '--email', 'cli@example.test', '--password', 'a long passphrase', '--name', 'Dup'], /email: The email has already been taken/],
    [['user', 'create', '--email', 'y@example.test'], /required option '--password/],
    [['user', 'show', 'ghost'], /No user "ghost"/],
    [['app', 'create', '--owner', 'cli_streamer', '--name', 'Bad', '--redirect-uri', 'nope'], /redirect_uris: "nope" is not an absolute URL/],
    [['donation', 'simulate', '--user', '1', '--currency', 'KZT'], /currency: The currency must be one of EUR, USD, RUB, BRL, TRY/],
    [['donation', 'simulate', '--user', '1', '--amount', '-3'], /amount: The amount must be a positive number/],
    [['donation', 'simulate', '--user', '1', '--count', 'many'], /must be a whole number/],
    [['rates', 'set', 'XXX', '1'], /currency: The currency must be one of/],
    [['nonsense'], /unknown command 'nonsense'/],
  ];
  for (const [args, message] of cases) {
    const res = await runCli(args, env);
    assert.notEqual(res.code, 0, args.join(' '));
    assert.match(res.stderr, message, args.join(' '));
    assert.equal(res.stderr.includes('    at '), false, `no stack trace for ${args.join(' ')}`);
  }
  assert.equal((await database.db.selectFrom('donations').select('id').execute()).length, before);
});

test('every command has --help', async () => {
  for (const args of [[], ['serve'], ['migrate'], ['user', 'create'], ['user', 'show'], ['app', 'create'], ['donation', 'simulate'], ['rates'], ['rates', 'set']]) {
    const res = await runCli([...args, '--help'], env);
    assert.equal(res.code, 0, args.join(' '));
    assert.match(res.stdout, /Usage: openalerts/);
  }
});

test('serve --workers: 1 by default, a number or auto (one per core) accepted; over 256 refused', async () => {
  const help = await runCli(['serve', '--help'], env);
  assert.match(help.stdout, /--workers <n>[\s\S]*"auto" for one per core \(default: 1\)/);
  // An accepted value gets as far as reading the configuration: the bad PORT is the complaint, not --workers.
  for (const value of ['auto', 'AUTO', '2']) {
    const r = await runCli(['serve', '--workers', value], { DATA_DIR: tempDir(), PORT: 'not-a-port' });
    assert.notEqual(r.code, 0, value);
    assert.match(r.stderr, /PORT/, value);
    assert.doesNotMatch(r.stderr, /--workers/, value);
  }
  const tooMany = await runCli(['serve', '--workers', '257'], { DATA_DIR: '/nonexistent/never-used' });
  assert.notEqual(tooMany.code, 0);
  assert.match(tooMany.stderr, /--workers.*at most 256/);
});

test('commands work while a server runs on the same SQLite file', async () => {
  const server = await startServerProcess(env);
  try {
    const results = await Promise.all([
      runCli(['donation', 'simulate', '--user', '1', '--count', '3'], env),
      runCli(['user', 'create', '--email', 'live@example.test', '--password', 'a long passphrase', '--name', 'Live'], env),
      (async () => {
        // The server keeps serving and writing while the CLI writes.
        const res = await fetch(`${server.url}/signup`);
        return { code: res.ok ? 0 : 1, stdout: '', stderr: String(res.status) };
      })(),
    ]);
    for (const r of results) assert.equal(r.code, 0, r.stderr);
    assert.equal((await fetch(`${server.url}/readyz`)).status, 200);
  } finally {
    await server.stop();
  }
});
