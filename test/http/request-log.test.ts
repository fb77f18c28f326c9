import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { redactUrl } from '../../src/http/request-log.js';
import { buildTestApp, tempDir, type TestApp } from '../helper.js';
import { runCli, startServerProcess, type ServerProcess } from '../process.js';

const secret = (label: string) => `${label}${randomBytes(12).toString('hex')}`;

/** A tiny cookie-keeping client for the real server: fetch with the cookies it was given. */
class Client {
  cookies = new Map<string, string>();
  ids: string[] = [];
  /** Ids of requests whose route logs nothing (health probes). */
  quiet: string[] = [];
  constructor(private readonly base: string) {}
  async send(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    if (this.cookies.size) headers.set('cookie', [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(this.base + path, { ...init, headers, redirect: 'manual' });
    for (const line of res.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const [name, value] = pair!.split('=');
      if (value) this.cookies.set(name!, value);
      else this.cookies.delete(name!);
    }
    (path.startsWith('/healthz') ? this.quiet : this.ids).push(res.headers.get('x-request-id') ?? '');
    await res.arrayBuffer();
    return res;
  }
  async csrf(path: string): Promise<string> {
    const res = await fetch(this.base + path, { headers: { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } });
    for (const line of res.headers.getSetCookie()) {
      const [name, value] = line.split(';')[0]!.split('=');
      if (value) this.cookies.set(name!, value);
    }
    return /name="_csrf" value="([^"]+)"/.exec(await res.text())![1]!;
  }
}

const form = (fields: Record<string, string>) => ({
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
});

describe('request logs of a real server', () => {
  let server: ServerProcess;
  const used: Record<string, string> = {};
  let client: Client;

  before(async () => {
    const env = { DATA_DIR: tempDir(), LOG_LEVEL: 'trace', NODE_ENV: 'production' };
    used.password = secret('pw');
    const user = await runCli(['user', 'create', '--email', 'logs@example.test', '--password', used.password, '--name', 'Logs'], env);
    assert.equal(user.code, 0, user.stderr);
    const app = await runCli(['app', 'create', '--owner', 'logs@example.test', '--name', 'Logged', '--redirect-uri', 'https://client.example/cb'], env);
    assert.equal(app.code, 0, app.stderr);
    const { client_id: clientId, client_secret: clientSecret } = JSON.parse(app.stdout) as { client_id: number; client_secret: string };
    used.client_secret = clientSecret;
    server = await startServerProcess(env);
    client = new Client(server.url);

    // Log in with the password (form body, and wrongly in the query too): the session cookie is a secret.
    let csrf = await client.csrf('/login');
    used.csrf = csrf;
    const login = await client.send(`/login?password=${used.password}`, form({ _csrf: csrf, email: 'logs@example.test', password: used.password }));
    assert.equal(login.status, 303);
    used.session = client.cookies.get('oa_session')!;
    assert.ok(used.session);
    await client.send('/dashboard');

    // A client secret in the query string and the body, and through HTTP Basic.
    const token = await client.send(`/oauth/token?client_secret=${clientSecret}&client_id=${clientId}`, form({ grant_type: 'client_credentials', client_id: String(clientId), client_secret: clientSecret }));
    assert.ok(token.status < 500);
    const basic = Buffer.from(`${clientId}:${clientSecret}`).toString('base64');
    await client.send('/oauth/token', { ...form({ grant_type: 'client_credentials' }), headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' } });
    // Codes, refresh tokens and verifiers, in the query and in JSON.
    used.code = secret('code');
    used.refresh_token = secret('refresh');
    used.code_verifier = secret('verifier').padEnd(50, 'x');
    await client.send(`/oauth/token?code=${used.code}&refresh_token=${used.refresh_token}&code_verifier=${used.code_verifier}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: clientId, client_secret: clientSecret, code: used.code, refresh_token: used.refresh_token }),
    });
    // A body that does not parse, carrying a secret.
    used.broken = secret('broken');
    await client.send('/oauth/token', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"client_secret":"${used.broken}",` });
    // Bearer tokens on the API, access_token in a query, a widget token in an OBS URL.
    used.bearer = secret('bearer');
    await client.send('/api/v1/user/oauth', { headers: { authorization: `Bearer ${used.bearer}` } });
    used.access_token = secret('access');
    await client.send(`/api/v1/user/oauth?access_token=${used.access_token}`);
    used.widget = secret('widget');
    await client.send(`/widget/alerts?token=${used.widget}`);
    await client.send(`/widget/api/unshown?Token=${used.widget}x`);
    // A forged request id from a client that is not a trusted proxy.
    await client.send('/healthz', { headers: { 'x-request-id': 'forged-request-id-1' } });
    csrf = await client.csrf('/dashboard');
    await client.send('/logout', form({ _csrf: csrf }));
    await new Promise((resolve) => setTimeout(resolve, 200)); // let pino flush the last lines
  });
  after(async () => server?.stop());

  test('no secret the test used appears anywhere in the output', () => {
    const output = server.output();
    assert.ok(output.includes('incoming request'), 'request logs were captured');
    for (const [name, value] of Object.entries(used)) assert.equal(output.includes(value), false, `${name} leaked into the log`);
    assert.match(output, /client_secret=\[REDACTED\]/);
    assert.match(output, /token=\[REDACTED\]/);
  });

  test('every line about a request carries its id, which the response returned as X-Request-Id', () => {
    const lines = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { reqId?: string; req?: unknown; res?: unknown; msg?: string });
    const requestLines = lines.filter((line) => line.req || line.res);
    assert.ok(requestLines.length >= client.ids.length * 2);
    for (const line of requestLines) assert.ok(line.reqId, JSON.stringify(line));
    const ids = new Set(client.ids);
    assert.equal(ids.size, client.ids.length, 'one id per request');
    for (const id of ids) {
      assert.match(id, /^[0-9a-f-]{36}$/);
      const mine = requestLines.filter((line) => line.reqId === id);
      assert.deepEqual(mine.map((line) => line.msg).sort(), ['incoming request', 'request completed'], id);
    }
    assert.equal(client.quiet.length, 1);
    assert.match(client.quiet[0]!, /^[0-9a-f-]{36}$/, 'an id from an untrusted client is replaced');
    assert.equal(server.output().includes('forged-request-id-1'), false);
  });
});

describe('X-Request-Id from a trusted proxy', () => {
  let t: TestApp;
  before(async () => {
    t = await buildTestApp({ env: { TRUST_PROXY: '10.0.0.0/8' } });
  });
  after(async () => t.close());

  test('kept when it comes from the proxy and is well formed; replaced otherwise', async () => {
    const viaProxy = await t.app.inject({ url: '/healthz', remoteAddress: '10.1.2.3', headers: { 'x-request-id': 'edge-7f3a:42' } });
    assert.equal(viaProxy.headers['x-request-id'], 'edge-7f3a:42');
    for (const bad of ['has space', '"quoted"', 'x'.repeat(200), '-leading-dash', 'semi;colon']) {
      const res = await t.app.inject({ url: '/healthz', remoteAddress: '10.1.2.3', headers: { 'x-request-id': bad } });
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, bad);
    }
    const direct = await t.app.inject({ url: '/healthz', remoteAddress: '192.0.2.1', headers: { 'x-request-id': 'edge-7f3a:42' } });
    assert.match(String(direct.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });
});

test('redactUrl hides every secret query value, however the name is spelled, and keeps the rest', () => {
  assert.equal(redactUrl('/a?x=1&token=abc&CLIENT_SECRET=s&refresh_token[0]=r&cod%65=c&page=2'), '/a?x=1&token=[REDACTED]&CLIENT_SECRET=[REDACTED]&refresh_token[0]=[REDACTED]&cod%65=[REDACTED]&page=2');
  assert.equal(redactUrl('/plain/path'), '/plain/path');
  assert.equal(redactUrl('/a?%zz=1&password'), '/a?%zz=1&password=[REDACTED]');
});
