import { after, before } from 'node:test';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import type { Dialect } from '../../src/db/database.js';
import { createDonation } from '../../src/modules/donations/donations.service.js';
import { apiFixture, type ApiFixture } from '../api/helpers.js';

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

export { ALL_SCOPES };
