import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError, envToConfig } from '../../src/config/config.js';
import { readEnv } from '../../src/config/env.js';

test('defaults give the zero-set-up service: port 3000, SQLite under ./data', () => {
  const config = envToConfig({});
  assert.equal(config.port, 3000);
  assert.equal(config.publicUrl, 'http://localhost:3000');
  assert.equal(config.database.dialect, 'sqlite');
  assert.match((config.database as { file: string }).file, /data\/openalerts\.sqlite$/);
  assert.equal(config.redisUrl, null);
  assert.equal(config.accessTokenTtl, 365 * 24 * 3600);
  assert.ok(Object.isFrozen(config));
});

test('PUBLIC_URL follows PORT and loses its trailing slash', () => {
  assert.equal(envToConfig({ PORT: '8080' }).publicUrl, 'http://localhost:8080');
  assert.equal(envToConfig({ PUBLIC_URL: 'https://alerts.example.com/' }).publicUrl, 'https://alerts.example.com');
});

test('DATABASE_URL chooses PostgreSQL or an explicit SQLite file', () => {
  assert.deepEqual(envToConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x' }).database, { dialect: 'postgres', url: 'postgres://u:p@db:5432/x' });
  assert.equal(envToConfig({ DATABASE_URL: 'sqlite:/tmp/x.sqlite' }).database.dialect, 'sqlite');
});

test('invalid values stop the start with a message naming the variable and what is allowed', () => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ PORT: 'abc' }, /Invalid PORT: .*whole number/],
    [{ PORT: '70000' }, /Invalid PORT: .*0–65535/],
    [{ PUBLIC_URL: 'ftp://x' }, /Invalid PUBLIC_URL/],
    [{ DATABASE_URL: 'mysql://x' }, /Invalid DATABASE_URL: must start with postgres/],
    [{ REDIS_URL: 'localhost:6379' }, /Invalid REDIS_URL: must start with redis:\/\//],
    [{ LOG_LEVEL: 'loud' }, /Invalid LOG_LEVEL: .*fatal, error/],
    [{ SECRET_KEY: 'short' }, /Invalid SECRET_KEY: is too short/],
    [{ RATE_LIMIT_PER_MINUTE: '0' }, /Invalid RATE_LIMIT_PER_MINUTE/],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => envToConfig(env), (err: unknown) => err instanceof ConfigError && message.test((err as Error).message), JSON.stringify(env));
  }
});

test('readEnv takes only known variables and ignores empty ones', () => {
  assert.deepEqual(readEnv({ PORT: '1', HOST: '', UNRELATED: 'x' }), { PORT: '1' });
});
