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
  assert.deepEqual(envToConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x' }).database, { dialect: 'postgres', url: 'postgres://u:p@db:5432/x', statementTimeoutMs: 10_000 });
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
    [{ TRUST_PROXY: 'true' }, /Invalid TRUST_PROXY: "true" would let any client forge its address/],
    [{ TRUST_PROXY: '10.0.0.0/33' }, /Invalid TRUST_PROXY: "10.0.0.0\/33" is not an IP address, a CIDR range or one of loopback/],
    [{ TRUST_PROXY: 'loopback, proxy.example' }, /Invalid TRUST_PROXY: "proxy.example"/],
    [{ TRUST_PROXY: '99' }, /Invalid TRUST_PROXY: 99 hops/],
    [{ PKCE_ALLOW_PLAIN: 'yes' }, /Invalid PKCE_ALLOW_PLAIN: "yes" is not a flag/],
  ];
  for (const [env, message] of cases) {
    assert.throws(() => envToConfig(env), (err: unknown) => err instanceof ConfigError && message.test((err as Error).message), JSON.stringify(env));
  }
});

test('TRUST_PROXY is off by default and takes a hop count or proxy addresses, ranges and names', () => {
  assert.equal(envToConfig({}).trustProxy, false);
  assert.equal(envToConfig({ TRUST_PROXY: 'false' }).trustProxy, false);
  assert.equal(envToConfig({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.deepEqual(envToConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,192.168.1.7, fd00::/8' }).trustProxy, ['loopback', '10.0.0.0/8', '192.168.1.7', 'fd00::/8']);
  assert.equal(envToConfig({}).pkceAllowPlain, false);
  assert.equal(envToConfig({ PKCE_ALLOW_PLAIN: 'true' }).pkceAllowPlain, true);
});

test('readEnv takes only known variables and ignores empty ones', () => {
  assert.deepEqual(readEnv({ PORT: '1', HOST: '', UNRELATED: 'x' }), { PORT: '1' });
});
