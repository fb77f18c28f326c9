import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import net from 'node:net';
import { Centrifuge, type Subscription } from 'centrifuge';
import Centrifuge2 from 'centrifuge2';
import WebSocket from 'ws';
import { loadSecrets } from '../../src/config/secrets.js';
import { createApp } from '../../src/modules/apps/apps.service.js';
import { TokenStore } from '../../src/oauth/token-store.js';
import { signChannelToken, signConnectionToken } from '../../src/security/jwt.js';
import { makeUser } from '../helper.js';
import { closedBy, connected, REVOKED, subscribe, type Socket } from '../realtime/revocation-helpers.js';
import { runCli, startServerProcess, workerPids, type ServerProcess } from '../process.js';
import { sqliteBackend, type ServerBackend } from '../server-backend.js';
import { until } from '../wait.js';

const SCOPES = ['oauth-user-show', 'oauth-donation-subscribe', 'oauth-donation-index'];

/**
 * `openalerts serve --workers 2` on SQLite without Redis: one port, two worker processes, the
 * primary holding the broker, the counters and the relay. Connections are spread over the workers
 * by node:cluster (round robin); which worker served a request is read from the server's own
 * request log (pino writes each line with its process id), never from a response.
 */
describe('serve --workers 2 (SQLite, no Redis)', () => {
  let s: ServerBackend;
  let server: ServerProcess;
  let streamer: { id: number; code: string };
  let realtimeSecret: string;
  let encryptionKey: Buffer;
  let tokens: TokenStore;

  before(async () => {
    s = await sqliteBackend();
    server = await startServerProcess({ ...s.env, LOG_LEVEL: 'info', RATE_LIMIT_PER_MINUTE: '20', HISTORY_SIZE: '1000' }, undefined, 2);
    const user = await makeUser(s.database().db, { currency: 'EUR' });
    streamer = { id: user.id, code: user.code };
    const secrets = loadSecrets({ dataDir: s.dataDir, secretKey: null, realtimeTokenSecret: null });
    realtimeSecret = secrets.realtimeTokenSecret;
    encryptionKey = secrets.encryptionKey;
    tokens = new TokenStore(s.database().db, { accessTokenTtl: 3600, refreshTokenTtl: 3600 });
  });
  after(async () => {
    // Clients left connected by a failed test would reconnect forever and keep this file's process alive.
    for (const x of subscribers) x.client.disconnect();
    await server?.stop();
    await s?.cleanup();
  });

  /** A request on a connection of its own (so node:cluster may hand it to either worker); resolves with the pid that served it. */
  async function fresh(path: string, init: RequestInit = {}): Promise<{ res: Response; pid: number }> {
    const res = await fetch(`${server.url}${path}`, { ...init, redirect: 'manual', signal: AbortSignal.timeout(15_000), headers: { connection: 'close', ...(init.headers ?? {}) } });
    const reqId = res.headers.get('x-request-id');
    assert.ok(reqId, 'the response names its request');
    let pid = 0;
    await until(
      () => {
        const line = server.output().split('\n').find((l) => l.includes(`"reqId":"${reqId}"`));
        pid = line ? Number(JSON.parse(line).pid) : 0;
        return pid > 0;
      },
      20_000,
      `the request log line of ${reqId}`,
    );
    return { res, pid };
  }

  /** A donation through the donor page (form and post on fresh connections); the pid of the worker that committed it. */
  async function donate(username: string): Promise<number> {
    const page = await fresh(`/r/${streamer.code}`);
    const html = await page.res.text();
    const csrf = /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
    assert.ok(csrf, 'the donor form carries a CSRF token');
    const cookie = page.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const posted = await fresh(`/r/${streamer.code}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
      body: new URLSearchParams({ _csrf: csrf, username, amount: '5', currency: 'USD', message: 'hi' }),
    });
    assert.equal(posted.res.status, 303, `donation accepted (${posted.res.status})`);
    return posted.pid;
  }

  function subscriber(): { client: Centrifuge; sub: Subscription; got: { name: string; offset: number }[]; subscribed: { recovered: boolean; wasRecovering: boolean }[] } {
    const channel = `$alerts:donation_${streamer.id}`;
    const client = new Centrifuge(`${server.url.replace('http', 'ws')}/connection/websocket`, {
      websocket: WebSocket,
      getToken: () => signConnectionToken(realtimeSecret, streamer.id, 3600),
      minReconnectDelay: 50,
      maxReconnectDelay: 300,
    });
    const sub = client.newSubscription(channel, { getToken: () => signChannelToken(realtimeSecret, { channel, sub: String(streamer.id) }) });
    const got: { name: string; offset: number }[] = [];
    const subscribed: { recovered: boolean; wasRecovering: boolean }[] = [];
    sub.on('publication', (ctx) => got.push({ name: ctx.data.username, offset: Number(ctx.offset) }));
    sub.on('subscribed', (ctx) => subscribed.push({ recovered: ctx.recovered, wasRecovering: ctx.wasRecovering }));
    client.connect();
    sub.subscribe();
    return { client, sub, got, subscribed };
  }

  const subscribers: ReturnType<typeof subscriber>[] = [];
  const donated: string[] = [];
  /** Every subscriber got every donation, in order, at consecutive offsets: one stream per channel across the workers. */
  const everyDonationInOrder = () => {
    for (const x of subscribers) {
      assert.deepEqual(
        x.got.map((g) => g.name),
        donated,
      );
      assert.deepEqual(
        x.got.map((g) => g.offset),
        x.got.map((_, i) => x.got[0].offset + i),
      );
    }
  };

  test('every subscriber, whichever worker it is on, hears donations committed by either worker', async () => {
    for (let i = 0; i < 6; i++) subscribers.push(subscriber());
    await until(() => subscribers.every((x) => x.subscribed.length === 1), 15_000, 'six subscriptions');
    const pids = new Set<number>();
    // Round robin hands fresh connections to the workers in turn (a donation takes two): one more
    // request now and then shifts which worker gets the post.
    for (let i = 0; i < 12 && (pids.size < 2 || i < 4); i++) {
      if (i % 2 === 1) await (await fetch(`${server.url}/healthz`, { headers: { connection: 'close' } })).text();
      const name = `d${i}`;
      pids.add(await donate(name));
      donated.push(name);
    }
    assert.deepEqual([...pids].sort(), workerPids(server.child).sort(), 'both workers committed donations');
    await until(() => subscribers.every((x) => x.got.length === donated.length), 10_000, 'every donation at every subscriber');
    everyDonationInOrder();
  });

  // The killed worker's clients reconnect within their 300 ms back-off, long before its replacement
  // listens: they recover on the other worker, from the primary's one history of the channel.
  test('kill -9 of a worker: the primary starts another, its clients reconnect and recover without a gap', async () => {
    const [victim, survivor] = workerPids(server.child);
    assert.ok(victim && survivor, 'two workers');
    process.kill(victim, 'SIGKILL');
    // A connection node:cluster handed to the worker as it died is lost (the client's own timeout
    // and retry cover that): the test's requests start once the primary has seen the death.
    await until(() => !workerPids(server.child).includes(victim), 10_000, 'the primary reaps the killed worker');
    // Donations while the victim's clients are away: they must come back through recovery.
    for (let i = 0; i < 3; i++) {
      const name = `k${i}`;
      await donate(name);
      donated.push(name);
    }
    await until(() => workerPids(server.child).length === 2, 30_000, 'a replacement worker');
    const replacement = workerPids(server.child).find((pid) => pid !== survivor)!;
    const listening = (line: string) => line.includes('Server listening') && line.includes(`"pid":${replacement},`);
    await until(() => server.output().split('\n').some(listening), 60_000, 'the replacement worker listening');
    await until(() => subscribers.every((x) => x.got.length === donated.length), 20_000, 'every donation at every subscriber after the kill');
    const resubscribed = subscribers.filter((x) => x.subscribed.length > 1);
    assert.ok(resubscribed.length > 0 && resubscribed.length < subscribers.length, `the killed worker had some of the subscribers, not all (${resubscribed.length} of ${subscribers.length})`);
    for (const x of resubscribed) assert.deepEqual(x.subscribed.slice(1), [{ recovered: true, wasRecovering: true }]);
    everyDonationInOrder();
    for (const x of subscribers) x.client.disconnect();
  });

  test('centrifuge-js 2.8.5 through the subscribe endpoint recovers after its connection drops, whichever worker it comes back to', async () => {
    const db = s.database().db;
    const { app } = await createApp(db, encryptionKey, { ownerId: streamer.id, name: 'Legacy', redirectUris: ['https://legacy.example/cb'] });
    const grantId = await tokens.createGrant(db, { clientId: app.client_id, userId: streamer.id, scopes: SCOPES, kind: 'authorization_code' });
    const token = (await tokens.issue(db, { grantId, clientId: app.client_id, userId: streamer.id, scopes: SCOPES }, false)).accessToken;
    // A TCP proxy in front of the server: dropping its sockets is a network failure (no close frame);
    // each reconnection is a new connection node:cluster hands to a worker in turn.
    const port = Number(new URL(server.url).port);
    const proxied = new Set<net.Socket>();
    const proxy = net.createServer((inbound) => {
      const outbound = net.connect(port, '127.0.0.1');
      proxied.add(inbound);
      inbound.pipe(outbound).pipe(inbound);
      const drop = () => {
        inbound.destroy();
        outbound.destroy();
        proxied.delete(inbound);
      };
      inbound.on('error', drop).on('close', drop);
      outbound.on('error', drop).on('close', drop);
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', () => r()));
    const channel = `$alerts:donation_${streamer.id}`;
    const c = new Centrifuge2(`ws://127.0.0.1:${(proxy.address() as net.AddressInfo).port}/connection/websocket`, {
      websocket: WebSocket,
      minRetry: 50,
      maxRetry: 200,
      onPrivateSubscribe: (ctx: { data: { client: string; channels: string[] } }, cb: (r: unknown) => void) => {
        fetch(`${server.url}/api/v1/centrifuge/subscribe`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(ctx.data) })
          .then(async (r) => cb({ status: r.status, data: await r.json() }))
          .catch(() => cb({ status: 500, data: null }));
      },
    } as any);
    c.setToken(await signConnectionToken(realtimeSecret, streamer.id, 3600));
    const got: string[] = [];
    const subscribed: { recovered?: boolean }[] = [];
    let disconnects = 0;
    c.on('disconnect', () => disconnects++);
    c.subscribe(channel, { publish: (ctx: any) => got.push(ctx.data.username), subscribe: (ctx: any) => subscribed.push(ctx) });
    const names: string[] = [];
    try {
      c.connect();
      await until(() => subscribed.length === 1, 10_000, 'subscribe');
      for (let drop = 1; drop <= 2; drop++) {
        names.push(`legacy-live-${drop}`);
        await donate(names.at(-1)!);
        await until(() => got.length === names.length, 10_000, 'a live publication');
        for (const socket of proxied) socket.destroy();
        await until(() => disconnects === drop, 20_000, 'the drop');
        names.push(`legacy-missed-${drop}`);
        await donate(names.at(-1)!);
        await until(() => subscribed.length === drop + 1, 10_000, 'the re-subscription');
        assert.equal(subscribed[drop]!.recovered, true);
        await until(() => got.length === names.length, 10_000, 'the missed publication, recovered');
      }
      assert.deepEqual(got, names);
    } finally {
      c.disconnect();
      await new Promise((r) => proxy.close(r));
    }
  });

  test('the API rate limit is one limit across the workers, not one per worker', async () => {
    const db = s.database().db;
    const { app } = await createApp(db, encryptionKey, { ownerId: streamer.id, name: 'Limited', redirectUris: ['https://l.example/cb'] });
    const grantId = await tokens.createGrant(db, { clientId: app.client_id, userId: streamer.id, scopes: SCOPES, kind: 'authorization_code' });
    const token = (await tokens.issue(db, { grantId, clientId: app.client_id, userId: streamer.id, scopes: SCOPES }, false)).accessToken;
    const statuses: number[] = [];
    const pids = new Set<number>();
    for (let i = 0; i < 30; i++) {
      const { res, pid } = await fresh('/api/v1/user/oauth', { headers: { authorization: `Bearer ${token}` } });
      statuses.push(res.status);
      pids.add(pid);
    }
    assert.equal(pids.size, 2, `both workers answered: ${JSON.stringify([...pids])} ${statuses}`);
    assert.deepEqual(statuses, [...Array(20).fill(200), ...Array(10).fill(429)]);
  });

  test('the per-account log-in backoff counts the failures made on every worker', async () => {
    const email = `nobody-${Date.now()}@example.test`;
    const attempt = async () => {
      const page = await fresh('/login');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await page.res.text())?.[1];
      assert.ok(csrf, 'the log-in form carries a CSRF token');
      const cookie = page.res.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
      return fresh('/login', {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
        body: new URLSearchParams({ _csrf: csrf, email, password: 'not the password at all' }),
      });
    };
    const pids = new Set<number>();
    // Five failures are free (LOGIN_FREE_FAILURES), spread over both workers.
    for (let i = 0; i < 5; i++) {
      if (i % 2 === 1) await (await fetch(`${server.url}/healthz`, { headers: { connection: 'close' } })).text();
      const failed = await attempt();
      assert.equal(failed.res.status, 401);
      pids.add(failed.pid);
    }
    assert.equal(pids.size, 2, 'both workers counted failures');
    // Counted per worker, neither would have reached five: the next attempts wait, on either worker.
    for (let i = 0; i < 2; i++) {
      const waited = await attempt();
      assert.equal(waited.res.status, 429);
      assert.ok(Number(waited.res.headers.get('retry-after')) >= 1);
    }
  });

  test('revoking a grant closes its sockets and empties the token caches on every worker', async () => {
    const db = s.database().db;
    const { app, clientSecret } = await createApp(db, encryptionKey, { ownerId: streamer.id, name: 'Revocable', redirectUris: ['https://r.example/cb'] });
    const grantId = await tokens.createGrant(db, { clientId: app.client_id, userId: streamer.id, scopes: SCOPES, kind: 'authorization_code' });
    const oauth = await tokens.issue(db, { grantId, clientId: app.client_id, userId: streamer.id, scopes: SCOPES }, true);
    const api = async (path: string, body?: unknown) => {
      const { res } = await fresh(`/api/v1${path}`, {
        method: body ? 'POST' : 'GET',
        headers: { authorization: `Bearer ${oauth.accessToken}`, ...(body ? { 'content-type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      assert.equal(res.status, 200, path);
      return res.json() as Promise<any>;
    };
    const connectionToken: string = (await api('/user/oauth')).data.socket_connection_token;
    const channel = `$alerts:donation_${streamer.id}`;
    const sockets: Socket[] = [];
    for (let i = 0; i < 6; i++) {
      const socket = await connected(server.url.replace('http', 'ws'), connectionToken, 'modern');
      const token = (await api('/centrifuge/subscribe', { channels: [channel], client: socket.client })).channels[0].token;
      assert.equal((await subscribe(socket, channel, token)).error, undefined);
      sockets.push(socket);
    }
    const { res } = await fresh('/oauth/revoke', {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: oauth.refreshToken!, client_id: String(app.client_id), client_secret: clientSecret }),
    });
    assert.equal(res.status, 200);
    for (const socket of sockets) assert.deepEqual(await closedBy(socket), REVOKED);
    // Both workers had verified (and cached) the access token above; neither accepts it now.
    const pids = new Set<number>();
    for (let i = 0; i < 4; i++) {
      const after = await fresh('/api/v1/user/oauth', { headers: { authorization: `Bearer ${oauth.accessToken}` } });
      assert.equal(after.res.status, 401);
      pids.add(after.pid);
    }
    assert.equal(pids.size, 2, 'both workers refused it');
  });

  test('a second `serve` on the same SQLite file is refused while the workers run', async () => {
    const second = await runCli(['serve'], { ...s.env, HOST: '127.0.0.1', PORT: '0' });
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, /is in use by an OpenAlerts server/);
  });

  test('SIGTERM to the primary stops every worker, then the primary, cleanly', async () => {
    const pids = workerPids(server.child);
    assert.equal(pids.length, 2);
    assert.equal(await server.stop('SIGTERM'), 0);
    for (const pid of pids) assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' }, `worker ${pid} is gone`);
  });
});

describe('serve --workers: bad values', () => {
  for (const value of ['0', 'abc']) {
    test(`--workers ${JSON.stringify(value)} is refused with a one-line reason`, async () => {
      const r = await runCli(['serve', '--workers', value], { DATA_DIR: '/nonexistent/never-used' });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /--workers/);
      assert.equal(r.stderr.trim().split('\n').length <= 2, true, r.stderr);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    });
  }
});
