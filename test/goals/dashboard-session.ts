import assert from 'node:assert/strict';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { BrowserSession } from '../browser-session.js';

/** A logged-in dashboard: signs up through the pages, then takes a CSRF token from /internal/session. */
export async function dashboardSession(app: FastifyInstance, name: string, currency = 'USD') {
  const browser = new BrowserSession(app);
  await browser.get('/signup');
  const signup = await browser.postForm('/signup', { email: `${name.toLowerCase()}@example.test`, name, password: 'a long passphrase', currency, language: 'en_US' });
  assert.equal(signup.statusCode, 303, signup.body);
  const session = await browser.request({ method: 'GET', url: '/internal/session' });
  assert.equal(session.statusCode, 200, session.body);
  const { user, csrf_token } = session.json().data as { user: { id: number }; csrf_token: string };
  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, csrf: string | null = csrf_token): Promise<LightMyRequestResponse> =>
    browser.request({
      method,
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: { ...(csrf ? { 'x-csrf-token': csrf } : {}), ...(payload === undefined ? {} : { 'content-type': 'application/json' }) },
    });
  return { browser, userId: user.id, csrf: csrf_token, call };
}
