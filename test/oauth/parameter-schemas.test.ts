import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { buildTestApp, type TestApp } from '../helper.js';
import { assertOAuthError, authorizeUrl, fixture, REDIRECT, tokenRequest, type Fixture } from './helpers.js';

// The OAuth endpoints read their parameters with the schemas /openapi.json publishes
// (src/oauth/params.ts): the documented maxLength of each parameter is the one enforced, one
// character over is an RFC 6749 invalid_request naming it, and errors keep the league/Passport shape.

type Schema = { maxLength?: number; anyOf?: Schema[] };
let t: TestApp;
let f: Fixture;
let doc: { paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: { properties: Record<string, Schema> } }> }; parameters?: Array<{ name: string; schema: Schema }> }>> };
before(async () => {
  t = await buildTestApp();
  f = await fixture(t);
  doc = (await t.app.inject({ url: '/openapi.json' })).json();
});
after(() => t.close());

function documentedMax(path: string, name: string): number {
  const op = doc.paths[path]!.post!;
  let schema = op.requestBody!.content['application/x-www-form-urlencoded']!.schema.properties[name]!;
  if (schema.anyOf) schema = schema.anyOf.find((s) => s.maxLength !== undefined)!;
  assert.equal(typeof schema.maxLength, 'number', `${path} documents a maxLength for ${name}`);
  return schema.maxLength!;
}

const client = () => ({ client_id: String(f.clientId), client_secret: f.clientSecret });
const revoke = (form: Record<string, string>) =>
  t.app.inject({ method: 'POST', url: '/oauth/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });

/** Each parameter with a request that reaches the check reading it. */
const CASES: Array<[path: string, name: string, send: (value: string) => Promise<LightMyRequestResponse>]> = [
  ['/oauth/token', 'grant_type', (v) => tokenRequest(t.app, { grant_type: v, ...client() })],
  ['/oauth/token', 'client_secret', (v) => tokenRequest(t.app, { grant_type: 'client_credentials', client_id: String(f.clientId), client_secret: v })],
  ['/oauth/token', 'code', (v) => tokenRequest(t.app, { grant_type: 'authorization_code', ...client(), redirect_uri: REDIRECT, code: v })],
  ['/oauth/token', 'refresh_token', (v) => tokenRequest(t.app, { grant_type: 'refresh_token', ...client(), refresh_token: v })],
  ['/oauth/token', 'scope', (v) => tokenRequest(t.app, { grant_type: 'client_credentials', ...client(), scope: v })],
  ['/oauth/revoke', 'token', (v) => revoke({ ...client(), token: v })],
  ['/oauth/revoke', 'token_type_hint', (v) => revoke({ ...client(), token: 'x', token_type_hint: v })],
];

describe('documented parameter limits are the enforced ones', () => {
  for (const [path, name, send] of CASES) {
    test(`${path} ${name}`, async () => {
      const max = documentedMax(path, name);
      const over = assertOAuthError(await send('a'.repeat(max + 1)), 400, 'invalid_request');
      assert.match(over.hint, new RegExp(`\`${name}\` parameter must not be longer than ${max} characters`));
      const at = await send('a'.repeat(max));
      assert.doesNotMatch(at.body, /must not be longer than/, `${name} at ${max} characters is not too long`);
    });
  }

  test('GET /oauth/authorize: a state over the documented limit comes back to the client as invalid_request', async () => {
    const max = doc.paths['/oauth/authorize']!.get!.parameters!.find((p) => p.name === 'state')!.schema.maxLength!;
    const res = await f.browser.get(authorizeUrl({ response_type: 'code', client_id: String(f.clientId), redirect_uri: REDIRECT, state: 's'.repeat(max + 1) }));
    assert.equal(res.statusCode, 302, res.body);
    const location = new URL(String(res.headers.location));
    assert.equal(location.origin + location.pathname, REDIRECT);
    assert.equal(location.searchParams.get('error'), 'invalid_request');
    assert.match(location.searchParams.get('hint') ?? '', /`state` parameter must not be longer than/);
  });

  test('a parameter given twice or as a nested value is refused as RFC 6749 says, before its length is looked at', async () => {
    const twice = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=client_credentials&grant_type=client_credentials' });
    assert.match(assertOAuthError(twice, 400, 'invalid_request').hint, /`grant_type` parameter must be given once/);
    const nested = await t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ grant_type: { a: 'b' } }) });
    assert.match(assertOAuthError(nested, 400, 'invalid_request').hint, /`grant_type` parameter must be a string/);
  });
});
