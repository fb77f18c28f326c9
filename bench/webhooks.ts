/**
 * Webhooks: `npx tsx bench/webhooks.ts [--rounds 3] [--seconds 5] [--connections 10] [--burst 500] [--dialect sqlite|postgres]`.
 *
 * A real listening server in its own process (SQLite file in a temp dir, production durability;
 * WEBHOOKS_ALLOW_HTTP=1 so it may call the loopback receiver) and, in this process, autocannon and
 * the receiver: a plain node:http server answering 200 at once.
 *
 * 1. Donation request latency, 0 vs 10 subscriptions. `POST /bench/donate/:user` records a donation
 *    through the real service (`createDonation`: transaction, outbox row) for a streamer with no
 *    webhook subscription, or for one with 10 (all to the receiver). Rounds alternate the two sides;
 *    after each round the bench waits until every delivery went out, so each round starts from an
 *    empty queue and the deliveries of one round are delivered during that round (competing for the
 *    server's CPU, as in real life) and not the next. Delivery is off the request path, so the ratio
 *    should stay near 1.
 * 2. Delivery throughput: a burst of `--burst` donations written at once for a streamer with 1
 *    subscription, then for one with 10; deliveries/s = deliveries ÷ time from the first write until
 *    the receiver had them all.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { alternateRounds, autocannon, dialectArg, isServerProcess, median, numberArg, printReport, serveBenchApp, startServer } from './lib.js';

interface Seed {
  url: string;
  /** Streamers by how many subscriptions they have. */
  users: { none: number; ten: number; one: number; burstTen: number };
}

async function server(): Promise<void> {
  const receiverUrl = process.argv[process.argv.indexOf('--receiver') + 1]!;
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createApp } = await import('../src/modules/apps/apps.service.js');
  const { createDonation } = await import('../src/modules/donations/donations.service.js');
  await serveBenchApp(
    { WEBHOOKS_ALLOW_HTTP: '1', RATE_LIMIT_PER_MINUTE: '1000000' },
    async (app): Promise<Omit<Seed, 'url'>> => {
      const db = app.ctx.db;
      // Routes first: the first inject readies the app, after which none can be added.
      app.post<{ Params: { user: string } }>('/bench/donate/:user', async (request, reply) => {
        const donation = await createDonation(db, { userId: Number(request.params.user), amount: 5, currency: 'USD', username: 'bench', message: 'hi' });
        return reply.status(201).send({ data: { id: donation.id } });
      });
      app.post<{ Params: { user: string; count: string } }>('/bench/burst/:user/:count', async (request) => {
        for (let i = 0; i < Number(request.params.count); i++) await createDonation(db, { userId: Number(request.params.user), amount: 1, currency: 'USD' });
        return { ok: true };
      });
      app.get('/bench/pending', async () => {
        const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').executeTakeFirstOrThrow();
        return { pending: Number(row.n) };
      });
      const account = (name: string) => createAccount(db, { email: `${name}@example.test`, password: 'correct horse battery', name });
      const owner = await account('owner');
      const { app: client } = await createApp(db, app.ctx.secrets.encryptionKey, { ownerId: owner.id, name: 'Bench bot', redirectUris: ['https://bench.example.test/cb'] });
      const subscribe = async (userId: number, count: number) => {
        const grantId = await app.ctx.tokens.createGrant(db, { clientId: client.client_id, userId, scopes: ['oauth-donation-subscribe'], kind: 'authorization_code' });
        const { accessToken } = await app.ctx.tokens.issue(db, { grantId, clientId: client.client_id, userId, scopes: ['oauth-donation-subscribe'] }, false);
        for (let i = 0; i < count; i++) {
          const res = await app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: { authorization: `Bearer ${accessToken}` }, payload: { url: `${receiverUrl}/${userId}/${i}`, events: ['donation.created'] } });
          if (res.statusCode !== 201) throw new Error(`subscribe: ${res.statusCode} ${res.body}`);
        }
      };
      const users = { none: (await account('none')).id, ten: (await account('ten')).id, one: (await account('one')).id, burstTen: (await account('burst')).id };
      await subscribe(users.ten, 10);
      await subscribe(users.one, 1);
      await subscribe(users.burstTen, 10);
      return { users };
    },
  );
}

async function main(): Promise<void> {
  const rounds = numberArg('rounds', 3);
  const seconds = numberArg('seconds', 5);
  const connections = numberArg('connections', 10);
  const burst = numberArg('burst', 500);
  const dialect = dialectArg();
  let received = 0;
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      // Registration: echo the challenge (only these bodies are parsed).
      if (body.startsWith('{"type":"webhook.challenge"')) return res.writeHead(200).end(JSON.parse(body).data.challenge);
      received += 1;
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const load = [os.loadavg()[0]!];
  const srv = await startServer<Seed>(import.meta.url, { args: ['--receiver', receiverUrl, '--dialect', dialect] });
  const base = srv.ready.url;
  const drained = async () => {
    for (;;) {
      const { pending } = (await (await fetch(`${base}/bench/pending`)).json()) as { pending: number };
      if (pending === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  const sides = ['none', 'ten'] as const;
  const results = await alternateRounds(
    rounds,
    sides,
    async (side) => {
      const before = received;
      const r = await autocannon({ url: `${base}/bench/donate/${srv.ready.users[side]}`, method: 'POST', connections, duration: seconds });
      await drained();
      load.push(os.loadavg()[0]!);
      return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, ok: r['2xx'], deliveries: received - before };
    },
    { rotate: true },
  );

  const throughput = async (user: number, subscriptions: number) => {
    await drained();
    const before = received;
    const start = performance.now();
    await fetch(`${base}/bench/burst/${user}/${burst}`, { method: 'POST' });
    while (received - before < burst * subscriptions) await new Promise((r) => setTimeout(r, 20));
    const ms = performance.now() - start;
    load.push(os.loadavg()[0]!);
    return { events: burst, subscriptions, deliveries: burst * subscriptions, seconds: +(ms / 1000).toFixed(2), deliveriesPerSecond: Math.round((burst * subscriptions * 1000) / ms) };
  };
  const one = await throughput(srv.ready.users.one, 1);
  const ten = await throughput(srv.ready.users.burstTen, 10);
  await srv.stop();
  receiver.close();

  const p50 = (side: (typeof sides)[number]) => median(results[side].map((r) => r.p50));
  const ratios = results.none.map((r, i) => +(results.ten[i]!.p50 / Math.max(r.p50, 0.001)).toFixed(2));
  printReport('webhooks: donation request latency with 0 vs 10 subscriptions; delivery throughput', {
    dialect,
    settings: { rounds, seconds, connections, burst },
    loadAverage1m: { min: Math.min(...load), max: Math.max(...load) },
    donationRequest: {
      rounds: results,
      medianP50ms: { none: p50('none'), ten: p50('ten') },
      medianReqPerSec: { none: median(results.none.map((r) => r.rps)), ten: median(results.ten.map((r) => r.rps)) },
      p50RatioTenOverNonePerRound: ratios,
    },
    delivery: { one, ten },
  });
}

if (isServerProcess) await server();
else await main();
