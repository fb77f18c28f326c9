import { after, before, type TestContext } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import type { Database, Dialect } from '../../src/db/database.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { apiFixture, type ApiFixture } from '../api/helpers.js';
import { openTestDatabase, testConfig, type TestApp } from '../helper.js';

/** Test settings: loopback receivers over http, quick retries, short timeouts (never asserted as timings). */
export const WEBHOOK_TEST_ENV = { WEBHOOKS_ALLOW_HTTP: '1', WEBHOOKS_RETRY_BASE_MS: '20', WEBHOOKS_TIMEOUT_MS: '2000' };

export interface WebhookFixture extends ApiFixture {
  subscribe(url: string, events: string[], token?: string): Promise<{ id: number; secret: string }>;
  donate(amount?: number, username?: string): Promise<{ id: number }>;
}

export async function webhookFixture(options: { dialect?: Dialect; env?: Record<string, string> } = {}): Promise<WebhookFixture> {
  const f = await apiFixture({ dialect: options.dialect, env: { ...WEBHOOK_TEST_ENV, ...options.env } });
  return {
    ...f,
    async subscribe(url, events, token = f.token) {
      const response = await f.t.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: f.auth(token), payload: { url, events } });
      if (response.statusCode !== 201) throw new Error(`subscribe: ${response.statusCode} ${response.body}`);
      const data = response.json().data;
      return { id: data.id, secret: data.secret };
    },
    donate: (amount = 5, username = 'donor') => createDonation(f.t.database.db, { userId: f.userId, amount, currency: 'USD', username, message: 'hi' }),
  };
}

/**
 * A fixture for one describe block (like `receivers()`): made before its tests, closed after them
 * (registered with node:test's `before` and `after`, so call it inside the describe). The object is
 * filled in by `before`: use its fields in the tests, not at the describe's top level.
 */
export function useWebhookFixture(options: Parameters<typeof webhookFixture>[0] = {}): WebhookFixture {
  const fixture = {} as WebhookFixture;
  before(async () => {
    Object.assign(fixture, await webhookFixture(options));
  });
  after(async () => {
    await fixture.close?.();
  });
  return fixture;
}

/** Nodes sharing a database share SECRET_KEY (README): each must unseal the signing secrets. */
const SHARED_SECRET_KEY = 'webhooks-nodes-test-secret-key-0123456789abcdef';

export interface TwoNodes {
  nodes: FastifyInstance[];
  database: Database;
  /** The first node as the test helpers take it (makeApp, issueToken). */
  node0: TestApp;
  /** Run in reverse order after the test (the nodes and the database are the first in). */
  closers: (() => Promise<void>)[];
}

/** Two nodes on one fresh database of `dialect` (10 s attempt timeout), closed with it after test `t`. */
export async function twoNodes(t: TestContext, dialect: Dialect, options: { env?: Record<string, string>; logger?: boolean } = {}): Promise<TwoNodes> {
  const closers: (() => Promise<void>)[] = [];
  t.after(async () => {
    for (const close of closers.reverse()) await close();
  });
  const testDb = await openTestDatabase(dialect);
  closers.push(() => testDb.drop());
  const nodes: FastifyInstance[] = [];
  for (let i = 0; i < 2; i++) {
    const app = await buildApp(testConfig({ ...WEBHOOK_TEST_ENV, WEBHOOKS_TIMEOUT_MS: '10000', SECRET_KEY: SHARED_SECRET_KEY, ...options.env }), { logger: options.logger ?? false, database: testDb.database });
    await app.ready();
    nodes.push(app);
    closers.push(() => app.close());
  }
  return { nodes, database: testDb.database, node0: { app: nodes[0]!, database: testDb.database } as unknown as TestApp, closers };
}

export { ALL_SCOPES };
