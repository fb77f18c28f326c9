/**
 * Refresh-grant throughput on POST /oauth/token: `npx tsx bench/oauth-refresh.ts [--connections=10]
 * [--seconds=10]`.
 *
 * A real listening server (its own process, SQLite file in a temp dir, production durability:
 * WAL + synchronous=FULL) and autocannon in this process. Every request presents a live refresh
 * token and gets a new pair back (rotation: one transaction marking the old token used and
 * inserting an access and a refresh token). Tokens circulate through a pool: each response's new
 * refresh token is what a later request presents, so no token is ever reused (a reuse would revoke
 * its grant and show up as non-2xx).
 */
import { autocannon, isServerProcess, numberArg, printReport, serveBenchApp, startServer } from './lib.js';

interface Seed {
  url: string;
  clientId: number;
  clientSecret: string;
  refreshTokens: string[];
}

async function server(): Promise<void> {
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createApp } = await import('../src/modules/apps/apps.service.js');
  await serveBenchApp({}, async (app): Promise<Omit<Seed, 'url'>> => {
    const db = app.ctx.db;
    const user = await createAccount(db, { email: 'bench@example.test', password: 'correct horse battery', name: 'Bench Streamer' });
    const { app: client, clientSecret } = await createApp(db, app.ctx.secrets.encryptionKey, { ownerId: user.id, name: 'Bench client', redirectUris: ['https://bench.example.test/cb'] });
    const scopes = ['oauth-user-show', 'oauth-donation-index'];
    const refreshTokens: string[] = [];
    for (let i = 0; i < Number(process.argv[3] ?? 200); i++) {
      const grantId = await app.ctx.tokens.createGrant(db, { clientId: client.client_id, userId: user.id, scopes, kind: 'authorization_code' });
      const issued = await app.ctx.tokens.issue(db, { grantId, clientId: client.client_id, userId: user.id, scopes }, true);
      refreshTokens.push(issued.refreshToken!);
    }
    return { clientId: client.client_id, clientSecret, refreshTokens };
  });
}

async function main(): Promise<void> {
  const connections = numberArg('connections', 10);
  const seconds = numberArg('seconds', 10);
  const server = await startServer<Seed>(import.meta.url, { args: [String(connections * 20)] });
  const seed = server.ready;
  const pool = [...seed.refreshTokens];
  const prefix = `grant_type=refresh_token&client_id=${seed.clientId}&client_secret=${encodeURIComponent(seed.clientSecret)}&refresh_token=`;
  const run = (duration: number) =>
    autocannon({
      url: `${seed.url}/oauth/token`,
      connections,
      duration,
      requests: [
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          setupRequest: (req: Record<string, unknown>) => ({ ...req, body: prefix + (pool.shift() ?? 'pool-exhausted') }),
          onResponse: (status: number, body: string) => {
            if (status === 200) pool.push((JSON.parse(body) as { refresh_token: string }).refresh_token);
          },
        },
      ],
    });
  await run(2); // warm-up
  const result = await run(seconds);
  printReport('POST /oauth/token grant_type=refresh_token (rotation), SQLite WAL synchronous=FULL', {
    connections,
    seconds,
    requests_per_second: Math.round(result.requests.average),
    latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
    total_2xx: result['2xx'],
    non_2xx: result.non2xx,
    errors: result.errors,
  });
  await server.stop();
}

if (isServerProcess) await server();
else await main();
