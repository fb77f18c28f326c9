import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { test } from 'node:test';
import { loadSecrets } from '../../src/config/secrets.js';
import { signConnectionToken } from '../../src/security/jwt.js';
import { RawClient } from '../ws-client.js';
import { tempDir } from '../helper.js';
import { freePort, runCli, startServerProcess } from '../process.js';

test('a fresh start answers /healthz with no set-up; a second start reuses secrets and data', async () => {
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir };
  const first = await startServerProcess(env);
  try {
    assert.match(first.output(), /OpenAlerts is running: open http:\/\/localhost:\d+\/ to sign up/);
    assert.match(first.output(), /new secret key written/);
    const ready = await fetch(`${first.url}/readyz`);
    assert.equal(ready.status, 200);
    assert.ok(fs.existsSync(path.join(dataDir, 'openalerts.sqlite')));
  } finally {
    assert.equal(await first.stop(), 0, 'SIGTERM shuts down cleanly');
  }
  const key = fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8');
  assert.equal(fs.statSync(path.join(dataDir, 'secret.key')).mode & 0o777, 0o600);

  // Users, applications and donations written by one process survive into the next.
  const user = JSON.parse((await runCli(['user', 'create', '--email', 'keep@example.test', '--password', 'a long passphrase', '--name', 'Keeper'], env)).stdout);
  const app = JSON.parse((await runCli(['app', 'create', '--owner', 'keep@example.test', '--name', 'Kept', '--redirect-uri', 'https://kept.example/cb'], env)).stdout);
  await runCli(['donation', 'simulate', '--user', 'keeper', '--amount', '3', '--currency', 'EUR'], env);

  const second = await startServerProcess(env);
  try {
    assert.doesNotMatch(second.output(), /new secret key written/);
    assert.equal(fs.readFileSync(path.join(dataDir, 'secret.key'), 'utf8'), key);
    // The log-in works against the restarted server: the account survived.
    const login = await fetch(`${second.url}/login`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(await login.text())![1]!;
    const cookies = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const res = await fetch(`${second.url}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: cookies },
      body: new URLSearchParams({ _csrf: csrf, email: 'keep@example.test', password: 'a long passphrase' }),
    });
    assert.equal(res.status, 303);
  } finally {
    await second.stop();
  }
  const shown = JSON.parse((await runCli(['user', 'show', String(user.id)], env)).stdout);
  assert.equal(shown.email, 'keep@example.test');
  assert.ok(app.client_id > 0);
});

test('the first /healthz 200 means ready: a page, an OAuth token, an API answer and a real-time connection work at once', async () => {
  // Work a start leaves for later (housekeeping, lazily loaded modules) must never make the
  // server answer /healthz before it serves: these requests go out right after the first 200.
  const dataDir = tempDir();
  const env = { DATA_DIR: dataDir };
  const user = JSON.parse((await runCli(['user', 'create', '--email', 'ready@example.test', '--password', 'a long passphrase', '--name', 'Ready'], env)).stdout);
  const app = JSON.parse((await runCli(['app', 'create', '--owner', 'ready@example.test', '--name', 'Ready app', '--redirect-uri', 'https://ready.example/cb'], env)).stdout);
  const server = await startServerProcess(env);
  try {
    const secret = loadSecrets({ dataDir, secretKey: null, realtimeTokenSecret: null }).realtimeTokenSecret;
    const [page, token, api, ws] = await Promise.all([
      fetch(`${server.url}/login`),
      fetch(`${server.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'client_credentials', client_id: String(app.client_id), client_secret: app.client_secret }),
      }),
      fetch(`${server.url}/api/v1/user/oauth`),
      RawClient.open(`${server.url.replace('http', 'ws')}/connection/websocket`),
    ]);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /name="_csrf" value="[^"]+"/);
    assert.equal(token.status, 200);
    assert.match((await token.json()).access_token, /\S{20,}/);
    assert.equal(api.status, 401);
    assert.equal(typeof (await api.json()).message, 'string');
    ws.send({ params: { token: await signConnectionToken(secret, user.id, 60) }, id: 1 });
    assert.match((await ws.reply(1)).result.client, /^[0-9a-f-]{36}$/);
    ws.ws.close();
  } finally {
    assert.equal(await server.stop(), 0);
  }
});

test('invalid configuration stops the start with a message naming the variable', async () => {
  const res = await runCli(['serve'], { DATA_DIR: tempDir(), PORT: 'eighty' });
  assert.notEqual(res.code, 0);
  assert.match(res.stderr, /Invalid PORT: "eighty" is not a whole number/);
  assert.equal(res.stderr.includes('    at '), false, 'no stack trace');
});

test('SIGTERM closes real-time clients with 3001 so they reconnect, then exits cleanly', async () => {
  const dataDir = tempDir();
  // Real-time tokens of a user id are checked against the account: the streamer must exist.
  const user = JSON.parse((await runCli(['user', 'create', '--email', 'live@example.test', '--password', 'a long passphrase', '--name', 'Live'], { DATA_DIR: dataDir })).stdout);
  const server = await startServerProcess({ DATA_DIR: dataDir });
  const secret = loadSecrets({ dataDir, secretKey: null, realtimeTokenSecret: null }).realtimeTokenSecret;
  const ws = await RawClient.open(`${server.url.replace('http', 'ws')}/connection/websocket`);
  ws.send({ params: { token: await signConnectionToken(secret, user.id, 60) }, id: 1 });
  assert.match((await ws.reply(1)).result.client, /^[0-9a-f-]{36}$/);
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.ws.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  assert.equal(await server.stop('SIGTERM'), 0);
  const { code, reason } = await closed;
  assert.equal(code, 3001);
  assert.deepEqual(JSON.parse(reason), { reason: 'shutdown', reconnect: true });
});

test('the test harness never takes another server on its port for the one it started', async () => {
  // Something else listens on the port (in CI: another suite's server took it while ours started),
  // and its /healthz answers 200. Ours fails to listen: the start must fail, not hand back a URL
  // that reaches the stranger.
  const port = await freePort();
  assert.ok(port < Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').split(/\s+/)[0]), 'picked below the ephemeral range');
  const stranger = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  await new Promise<void>((resolve) => stranger.listen(port, '127.0.0.1', resolve));
  try {
    await assert.rejects(startServerProcess({ DATA_DIR: tempDir(), PORT: String(port) }), /EADDRINUSE/);
  } finally {
    stranger.close();
  }
});
