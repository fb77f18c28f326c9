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
import { fork } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The part of autocannon's API used here (the package ships no type declarations). */
interface AutocannonResult {
  requests: { average: number };
  latency: { p50: number; p99: number };
  '2xx': number;
  non2xx: number;
  errors: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;
const AUTOCANNON: string = 'autocannon';
const autocannon = ((await import(AUTOCANNON)) as { default: Autocannon }).default;

interface Seed {
  url: string;
  clientId: number;
  clientSecret: string;
  refreshTokens: string[];
}

const arg = (name: string, fallback: number) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit ? Number(hit.split('=')[1]) : fallback;
};

async function server(): Promise<void> {
  const { buildApp } = await import('../src/app.js');
  const { envToConfig } = await import('../src/config/config.js');
  const { createAccount } = await import('../src/modules/accounts/accounts.service.js');
  const { createApp } = await import('../src/modules/apps/apps.service.js');
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'openalerts-bench-'));
  const config = envToConfig({ DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' });
  const app = await buildApp(config, { logger: false });
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
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  process.send!({ url: address, clientId: client.client_id, clientSecret, refreshTokens } satisfies Seed);
  process.on('message', async () => {
    await app.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
}

async function main(): Promise<void> {
  const connections = arg('connections', 10);
  const seconds = arg('seconds', 10);
  const child = fork(fileURLToPath(import.meta.url), ['--server', String(connections * 20)], { execArgv: ['--import', 'tsx'] });
  const seed = await new Promise<Seed>((resolve) => child.once('message', (m) => resolve(m as Seed)));
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
  const cpu = os.cpus();
  console.log(
    JSON.stringify(
      {
        benchmark: 'POST /oauth/token grant_type=refresh_token (rotation), SQLite WAL synchronous=FULL',
        machine: `${cpu[0]?.model ?? 'unknown CPU'} × ${cpu.length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, Node ${process.version}, ${os.platform()}`,
        connections,
        seconds,
        requests_per_second: Math.round(result.requests.average),
        latency_ms: { p50: result.latency.p50, p99: result.latency.p99 },
        total_2xx: result['2xx'],
        non_2xx: result.non2xx,
        errors: result.errors,
      },
      null,
      2,
    ),
  );
  child.send('stop');
}

if (process.argv[2] === '--server') await server();
else await main();
