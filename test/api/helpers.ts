import type { LightMyRequestResponse } from 'fastify';
import assert from 'node:assert/strict';
import type { Dialect } from '../../src/db/database.js';
import { ALL_SCOPES } from '../../src/oauth/scopes.js';
import { buildTestApp, issueToken, makeApp, makeUser, type TestApp } from '../helper.js';

export interface ApiFixture {
  t: TestApp;
  userId: number;
  clientId: number;
  /** A token of the fixture's client and user with every scope. */
  token: string;
  tokenWith(scopes: string[], opts?: { userId?: number | null; clientId?: number }): Promise<string>;
  auth(token?: string): { authorization: string };
  close(): Promise<void>;
}

/** A real app with one streamer, one client application and an all-scopes token; no rate limit unless `env` sets one. */
export async function apiFixture(options: { dialect?: Dialect; env?: Record<string, string> } = {}): Promise<ApiFixture> {
  const t = await buildTestApp({ dialect: options.dialect, env: { PUBLIC_URL: 'https://alerts.example.test', RATE_LIMIT_PER_MINUTE: '1000000', ...options.env } });
  const user = await makeUser(t.database.db);
  const { app: client } = await makeApp(t, user.id);
  const tokenWith = (scopes: string[], opts: { userId?: number | null; clientId?: number } = {}) =>
    issueToken(t, { userId: opts.userId === undefined ? user.id : opts.userId, clientId: opts.clientId ?? client.client_id, scopes });
  const token = await tokenWith([...ALL_SCOPES]);
  return {
    t,
    userId: user.id,
    clientId: client.client_id,
    token,
    tokenWith,
    auth: (tok = token) => ({ authorization: `Bearer ${tok}` }),
    close: () => t.close(),
  };
}

/** compatibility.md §1: JSON responses carry exactly `application/json`. */
export function json(response: LightMyRequestResponse): any {
  assert.equal(response.headers['content-type'], 'application/json', `content type of ${response.statusCode} ${response.body.slice(0, 200)}`);
  return response.json();
}

/** A 400 in the compatibility.md §1 shape whose errors name exactly `fields`. */
export function assertValidationError(response: LightMyRequestResponse, fields: string[]): Record<string, string[]> {
  assert.equal(response.statusCode, 400, response.body);
  const body = json(response);
  assert.equal(typeof body.message, 'string');
  assert.deepEqual(Object.keys(body.errors).sort(), [...fields].sort(), response.body);
  const first = Object.values(body.errors as Record<string, string[]>)[0]![0];
  assert.equal(body.message, first, 'message repeats the first field message');
  return body.errors;
}
