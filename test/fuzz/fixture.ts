import assert from 'node:assert/strict';
import path from 'node:path';
import { createDatabase } from '../../src/db/database.js';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import { TokenStore } from '../../src/oauth/token-store.js';
import { tempDir } from '../helper.js';
import { runCli, startServerProcess, type ServerProcess } from '../process.js';

export const REALTIME_SECRET = 'fuzz-realtime-secret-0123456789abcdef';

export interface FuzzServer {
  server: ServerProcess;
  email: string;
  password: string;
  userId: number;
  state: { bearer: string; clientId: number; clientSecret: string; merchant: string; userCode: string };
  close(): Promise<void>;
}

/**
 * A real `openalerts serve` on a fresh SQLite file, as the fuzz tests attack it: one streamer, an
 * application with Merchandise API access and a merchant, and a bearer token with every scope
 * (issued through the token store on the same file). Behind a "proxy" (TRUST_PROXY=loopback), so
 * a fuzz run can be many clients, and with the per-application limit out of the way.
 */
export async function startFuzzServer(): Promise<FuzzServer> {
  const dataDir = tempDir('openalerts-fuzz-');
  const env = {
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
    TRUST_PROXY: 'loopback',
    RATE_LIMIT_PER_MINUTE: '1000000',
    REALTIME_TOKEN_SECRET: REALTIME_SECRET,
  };
  const email = 'fuzz@example.test';
  const password = 'fuzzing passphrase 1';
  const user = await runCli(['user', 'create', '--email', email, '--password', password, '--name', 'Fuzz'], env);
  assert.equal(user.code, 0, user.stderr);
  const account = JSON.parse(user.stdout) as { id: number; code: string };
  const created = await runCli(['app', 'create', '--owner', String(account.id), '--name', 'Fuzz app', '--redirect-uri', 'https://client.example/cb'], env);
  assert.equal(created.code, 0, created.stderr);
  const app = JSON.parse(created.stdout) as { client_id: number; client_secret: string };
  assert.equal((await runCli(['app', 'merchandise-access', String(app.client_id)], env)).code, 0);
  const merchant = 'fuzz_merchant';
  assert.equal((await runCli(['merchant', 'create', '--app', String(app.client_id), '--identifier', merchant, '--name', 'Fuzz merchant'], env)).code, 0);

  const database = createDatabase({ dialect: 'sqlite', file: path.join(dataDir, 'openalerts.sqlite') });
  let bearer: string;
  try {
    const tokens = new TokenStore(database.db, { accessTokenTtl: 3600, refreshTokenTtl: 3600 });
    const grantId = await tokens.createGrant(database.db, { clientId: app.client_id, userId: account.id, scopes: ALL_SCOPES, kind: 'authorization_code' });
    bearer = (await tokens.issue(database.db, { grantId, clientId: app.client_id, userId: account.id, scopes: ALL_SCOPES }, false)).accessToken;
  } finally {
    await database.close();
  }

  const server = await startServerProcess(env);
  return {
    server,
    email,
    password,
    userId: account.id,
    state: { bearer, clientId: app.client_id, clientSecret: app.client_secret, merchant, userCode: account.code },
    close: async () => {
      await server.stop();
    },
  };
}
