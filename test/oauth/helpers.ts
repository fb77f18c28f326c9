import { createHash, randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { startSession } from '../../src/modules/accounts/accounts.service.js';
import { cookieNames } from '../../src/web/session.js';
import { makeApp, makeUser, type TestApp } from '../helper.js';

export const PASSWORD = 'correct horse battery';
export const REDIRECT = 'https://client.example.test/callback';

/** A cookie-keeping client over app.inject, as a browser would drive the pages. */
export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly app: FastifyInstance) {}

  async request(method: 'GET' | 'POST', url: string, form?: Record<string, string>): Promise<LightMyRequestResponse> {
    const headers: Record<string, string> = { accept: 'text/html' };
    if (this.cookies.size) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const options: InjectOptions = { method, url, headers };
    if (form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      options.payload = new URLSearchParams(form).toString();
    }
    const res = await this.app.inject(options);
    for (const c of res.cookies as { name: string; value: string; maxAge?: number; expires?: Date }[]) {
      if (c.value === '' || c.maxAge === 0 || (c.expires && c.expires.getTime() < Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
    return res;
  }

  get(url: string) {
    return this.request('GET', url);
  }
  post(url: string, form: Record<string, string>) {
    return this.request('POST', url, form);
  }
}

const ENTITIES: Record<string, string> = { '&amp;': '&', '&lt;': '<', '&gt;': '>', '&quot;': '"', '&#39;': "'", '&#96;': '`' };
const unescape = (s: string) => s.replace(/&(amp|lt|gt|quot|#39|#96);/g, (m) => ENTITIES[m]!);

/** Hidden inputs of the first form posting to `action` in a page. */
export function hiddenFields(html: string, action: string): Record<string, string> {
  const start = html.indexOf(`action="${action}"`);
  if (start < 0) throw new Error(`no form posting to ${action}`);
  const form = html.slice(start, html.indexOf('</form>', start));
  const fields: Record<string, string> = {};
  for (const m of form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[unescape(m[1]!)] = unescape(m[2]!);
  return fields;
}

/** The log-in form as a browser submits it: GET for the CSRF token and cookie, then POST. */
export async function logIn(browser: Browser, email: string, next = ''): Promise<LightMyRequestResponse> {
  const form = await browser.get(`/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
  const fields = hiddenFields(form.body, '/login');
  return browser.post('/login', { ...fields, email, password: PASSWORD });
}

/**
 * A browser already holding a session (POST /login is rate limited to 10 a minute per address;
 * the full log-in form is exercised by the browser-flow test).
 */
export async function sessionFor(t: TestApp, userId: number): Promise<Browser> {
  const browser = new Browser(t.app);
  browser.cookies.set(cookieNames(t.config).session, await startSession(t.database.db, userId));
  return browser;
}

export interface Fixture {
  user: UserRow;
  browser: Browser;
  clientId: number;
  clientSecret: string;
}

export async function fixture(t: TestApp, redirectUris = [REDIRECT]): Promise<Fixture> {
  const user = await makeUser(t.database.db);
  const { app, clientSecret } = await makeApp(t, user.id, redirectUris);
  const browser = await sessionFor(t, user.id);
  return { user, browser, clientId: app.client_id, clientSecret };
}

export function authorizeUrl(params: Record<string, string>): string {
  return `/oauth/authorize?${new URLSearchParams(params)}`;
}

/** GET authorize (logged in) → consent page → POST the decision. Returns the final redirect response. */
export async function consent(browser: Browser, params: Record<string, string>, decision: 'allow' | 'deny' = 'allow'): Promise<LightMyRequestResponse> {
  const page = await browser.get(authorizeUrl(params));
  if (page.statusCode !== 200) throw new Error(`expected the consent page, got ${page.statusCode} ${page.headers.location ?? ''}`);
  return browser.post('/oauth/authorize', { ...hiddenFields(page.body, '/oauth/authorize'), decision });
}

/** Query (or fragment) parameters of a redirect to the client. */
export function redirectParams(res: LightMyRequestResponse, part: 'query' | 'fragment' = 'query'): URLSearchParams {
  const location = String(res.headers.location ?? '');
  const url = new URL(location);
  return new URLSearchParams(part === 'query' ? url.search : url.hash.slice(1));
}

/** Authorization code for the fixture's client, consenting if needed. */
export async function obtainCode(f: Fixture, params: Record<string, string> = {}): Promise<string> {
  const all = { response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT, scope: 'oauth-user-show oauth-donation-index', state: 's1', ...params };
  let res = await f.browser.get(authorizeUrl(all));
  if (res.statusCode === 200) res = await f.browser.post('/oauth/authorize', { ...hiddenFields(res.body, '/oauth/authorize'), decision: 'allow' });
  const code = redirectParams(res).get('code');
  if (!code) throw new Error(`no code in ${res.statusCode} ${res.headers.location}`);
  return code;
}

export function tokenRequest(app: FastifyInstance, form: Record<string, string>, headers: Record<string, string> = {}) {
  return app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(form).toString() });
}

export async function exchange(t: TestApp, f: Fixture, code: string, extra: Record<string, string> = {}) {
  return tokenRequest(t.app, { grant_type: 'authorization_code', client_id: String(f.clientId), client_secret: f.clientSecret, redirect_uri: REDIRECT, code, ...extra });
}

export function basic(id: string | number, secret: string): string {
  return `Basic ${Buffer.from(`${encodeURIComponent(String(id))}:${encodeURIComponent(secret)}`).toString('base64')}`;
}

export function pkcePair(method: 'S256' | 'plain' = 'S256'): { verifier: string; challenge: string } {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier };
}

/** The league/Passport error shape (compatibility.md §4), exactly these keys. */
export function assertOAuthError(res: LightMyRequestResponse, status: number, error: string): Record<string, string> {
  if (res.statusCode !== status) throw new Error(`expected ${status} ${error}, got ${res.statusCode} ${res.body}`);
  if (res.headers['content-type'] !== 'application/json') throw new Error(`content-type ${res.headers['content-type']}`);
  const body = res.json() as Record<string, string>;
  const keys = Object.keys(body).sort().join(',');
  if (keys !== 'error,error_description,hint,message') throw new Error(`keys ${keys}`);
  if (body.error !== error) throw new Error(`expected ${error}, got ${JSON.stringify(body)}`);
  if (body.message !== body.error_description || typeof body.hint !== 'string') throw new Error(`shape ${JSON.stringify(body)}`);
  return body;
}
