import { createHash, randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import qs from 'qs';
import type { Dialect } from '../../src/db/database.js';
import type { UserRow } from '../../src/modules/accounts/accounts.table.js';
import { setMerchandiseAccess } from '../../src/modules/apps/apps.service.js';
import { upsertRate } from '../../src/modules/currencies/currencies.repository.js';
import { createMerchant, type MerchantView } from '../../src/modules/merchants/merchants.service.js';
import { buildTestApp, issueToken, makeApp, makeUser, type TestApp } from '../helper.js';

export type Encoding = 'form' | 'multipart' | 'json';
export type Params = Record<string, unknown>;

/** Leaf values in order, nested ones flattened — written here independently of src/domain/signature.ts. */
export function leafValues(params: Params): string[] {
  const out: string[] = [];
  const walk = (v: unknown) => {
    if (v !== null && typeof v === 'object') Object.values(v as object).forEach(walk);
    else out.push(v === null || v === undefined ? '' : String(v));
  };
  for (const [k, v] of Object.entries(params)) if (k !== 'signature') walk(v);
  return out;
}

export const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** What a JS client computes: values.sort().join('') + secret. */
export function jsSignature(params: Params, secret: string): string {
  return sha256(leafValues(params).sort().join('') + secret);
}

/** `title[en_US]=…` style pairs, as form and multipart bodies carry them. */
function flatPairs(params: Params, prefix = ''): Array<[string, string]> {
  const pairs: Array<[string, string]> = [];
  for (const [k, v] of Object.entries(params)) {
    const key = prefix ? `${prefix}[${k}]` : k;
    if (v !== null && typeof v === 'object') pairs.push(...flatPairs(v as Params, key));
    else pairs.push([key, v === null || v === undefined ? '' : String(v)]);
  }
  return pairs;
}

export function encodeBody(params: Params, encoding: Encoding): { payload: string | Buffer; headers: Record<string, string> } {
  if (encoding === 'json') return { payload: JSON.stringify(params), headers: { 'content-type': 'application/json' } };
  if (encoding === 'form') return { payload: qs.stringify(params), headers: { 'content-type': 'application/x-www-form-urlencoded' } };
  const boundary = `----oa${randomBytes(8).toString('hex')}`;
  const parts = flatPairs(params).map(([k, v]) => `--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`);
  return { payload: Buffer.from(parts.join('') + `--${boundary}--\r\n`), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

export interface MerchandiseWorld {
  t: TestApp;
  clientId: number;
  secret: string;
  token: string;
  merchant: MerchantView;
  streamer: UserRow;
  /** Sends a signed (JS order) request unless `signature` is given in params. */
  call(method: 'GET' | 'POST' | 'PUT', url: string, params: Params, opts?: { encoding?: Encoding; token?: string; sign?: boolean }): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

let seq = 0;
export const uniqueId = (prefix = 'x') => `${prefix}${Date.now().toString(36).slice(-5)}${(seq++).toString(36)}`;

/** A merchant application with Merchandise API access, its merchant, a streamer, and known rates. */
export async function merchandiseWorld(dialect: Dialect = 'sqlite'): Promise<MerchandiseWorld> {
  const t = await buildTestApp({ dialect, env: { RATE_LIMIT_PER_MINUTE: '1000000' } });
  const db = t.database.db;
  const owner = await makeUser(db);
  const { app: client, clientSecret } = await makeApp(t, owner.id);
  await setMerchandiseAccess(db, client.client_id, true);
  const merchant = await createMerchant(db, { clientId: client.client_id, identifier: uniqueId('shop'), name: 'Shop & Co' });
  const token = await issueToken(t, { userId: null, clientId: client.client_id, scopes: [] });
  const streamer = await makeUser(db, { currency: 'USD' });
  // Round rates so expected conversions can be written by hand: 1 USD = 0.8 EUR = 80 RUB = 5 BRL.
  for (const [currency, perUsd] of [['EUR', 0.8], ['RUB', 80], ['BRL', 5], ['TRY', 40]] as const) await upsertRate(db, currency, perUsd, '2025-01-01');
  return {
    t,
    clientId: client.client_id,
    secret: clientSecret,
    token,
    merchant,
    streamer,
    async call(method, url, params, opts = {}) {
      const signed = opts.sign === false || 'signature' in params ? params : { ...params, signature: jsSignature(params, clientSecret) };
      const headers = { authorization: `Bearer ${opts.token ?? token}` };
      if (method === 'GET') return t.app.inject({ method, url: `${url}?${qs.stringify(signed)}`, headers });
      const body = encodeBody(signed, opts.encoding ?? 'form');
      return t.app.inject({ method, url, payload: body.payload, headers: { ...headers, ...body.headers } });
    },
    close: () => t.close(),
  };
}

export function merchandiseParams(w: MerchandiseWorld, overrides: Params = {}): Params {
  return {
    merchant_identifier: w.merchant.identifier,
    merchandise_identifier: uniqueId('m'),
    title: { en_US: 'Hoodie', ru_RU: 'Худи' },
    is_active: '1',
    currency: 'EUR',
    price_user: '5.5',
    price_service: '1.25',
    ...overrides,
  };
}
