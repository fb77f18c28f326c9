import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { apiFixture, type ApiFixture } from '../api/helpers.js';

let f: ApiFixture;
before(async () => {
  f = await apiFixture();
});
after(async () => f.close());

/** Every POST route the app has, from its own route table. */
function postRoutes(): string[] {
  const routes = new Set<string>();
  for (const line of f.t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /([^\s│├└─]+) \(([^)]*)\)/.exec(line);
    if (match && match[2]!.split(', ').includes('POST')) routes.add(match[1]!);
  }
  return [...routes].map((path) => path.replace(/:[A-Za-z_]+/g, '1'));
}

const JSON_HTML = { accept: 'application/json' };

/** The compatibility.md §1 validation shape: 400, `errors` by field, `message` the first of them. */
function assertValidationShape(res: { statusCode: number; body: string }, field: string, message: RegExp) {
  assert.equal(res.statusCode, 400, res.body);
  const body = JSON.parse(res.body) as { message: string; errors: Record<string, string[]> };
  assert.deepEqual(Object.keys(body.errors), [field], res.body);
  assert.equal(body.message, body.errors[field]![0]);
  assert.match(body.message, message);
}

describe('malformed multipart on every POST route is a 4xx, never a 5xx', () => {
  // [what, content type, body, refused]: a part busboy skips (no name) leaves a valid, empty body.
  const bodies: [string, string, string, boolean][] = [
    ['no boundary', 'multipart/form-data', '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n', true],
    ['an empty boundary', 'multipart/form-data; boundary=', '--\r\n', true],
    ['a truncated body', 'multipart/form-data; boundary=XX', '--XX\r\nContent-Disposition: form-data; name="a"\r\n\r\nval', true],
    ['a malformed part header', 'multipart/form-data; boundary=XX', '--XX\r\nContent-Disposition\r\n\r\nv\r\n--XX--\r\n', false],
  ];
  test('with and without credentials', async () => {
    const routes = postRoutes();
    assert.ok(routes.length >= 15, routes.join(' '));
    for (const path of routes) {
      for (const [what, type, payload, refused] of bodies) {
        for (const headers of [{}, f.auth()]) {
          const res = await f.t.app.inject({ method: 'POST', url: path, payload, headers: { ...JSON_HTML, ...headers, 'content-type': type } });
          assert.ok(res.statusCode < 500 && (!refused || res.statusCode >= 400), `${path} with ${what}: ${res.statusCode} ${res.body.slice(0, 200)}`);
        }
      }
    }
  });

  test('a body busboy cannot read is a 400 that says why', async () => {
    const res = await f.t.app.inject({ method: 'POST', url: '/api/v1/custom_alert', headers: { ...f.auth(), 'content-type': 'multipart/form-data; boundary=XX' }, payload: '--XX\r\nContent-Disposition: form-data; name="header"\r\n\r\nval' });
    assertValidationShape(res, 'body', /multipart body could not be read \(Unexpected end of multipart data\)/);
  });
});

describe('nesting depth and parameter count are capped in every parser, with a 400 in the compatibility.md §1 shape', () => {
  const deepKey = 'a' + '[b]'.repeat(10);
  const manyPairs = Array.from({ length: 1500 }, (_, i) => `f${i}=1`).join('&');
  const multipartOf = (pairs: [string, string][]) => ({
    'content-type': 'multipart/form-data; boundary=B',
    payload: pairs.map(([k, v]) => `--B\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`).join('') + '--B--\r\n',
  });
  const cases: [string, { 'content-type'?: string; payload?: string; query?: string }, RegExp, string][] = [
    ['form, deep', { 'content-type': 'application/x-www-form-urlencoded', payload: `${deepKey}=1` }, /more than 4 levels deep/, 'body'],
    ['form, many', { 'content-type': 'application/x-www-form-urlencoded', payload: manyPairs }, /more than 1000 parameters/, 'body'],
    ['form, long array', { 'content-type': 'application/x-www-form-urlencoded', payload: 'scope[500]=x' }, /more than 100 items/, 'body'],
    ['JSON, deep', { 'content-type': 'application/json', payload: '{"a":'.repeat(50_000) + '1' + '}'.repeat(50_000) }, /more than 4 levels deep/, 'body'],
    ['JSON, many', { 'content-type': 'application/json', payload: JSON.stringify({ list: Array.from({ length: 1500 }, (_, i) => i) }) }, /more than 1000 parameters/, 'body'],
    ['JSON, __proto__', { 'content-type': 'application/json', payload: '{"header":"x","__proto__":{"admin":1}}' }, /__proto__/, 'body'],
    ['JSON, not JSON', { 'content-type': 'application/json', payload: '{"header":' }, /not valid JSON/, 'body'],
    ['text/plain JSON, deep', { 'content-type': 'text/plain', payload: '['.repeat(100) + ']'.repeat(100) }, /more than 4 levels deep/, 'body'],
    ['multipart, deep', multipartOf([[deepKey, '1']]), /more than 4 levels deep/, 'body'],
    ['multipart, many', multipartOf(Array.from({ length: 1100 }, (_, i) => [`f${i}`, '1'] as [string, string])), /more than 1000 (parameters|parts)/, 'body'],
    ['query, many', { query: manyPairs }, /more than 1000 parameters/, 'query'],
  ];
  for (const [name, input, message, field] of cases) {
    test(name, async () => {
      const { query, payload, ...type } = input;
      const res = await f.t.app.inject({ method: 'POST', url: `/api/v1/custom_alert${query ? `?${query}` : ''}`, payload: payload ?? '', headers: { ...f.auth(), ...type } });
      assertValidationShape(res, field, message);
    });
  }

  test('the OAuth token endpoint answers the same refusals in its own shape', async () => {
    const res = await f.t.app.inject({ method: 'POST', url: '/oauth/token', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: `${deepKey}=1` });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'invalid_request');
    assert.match(res.json().hint, /more than 4 levels deep/);
  });

  test('within the limits, bracket notation and repeated keys still parse (compatibility.md §1)', async () => {
    const res = await f.t.app.inject({
      method: 'POST',
      url: '/api/v1/custom_alert',
      headers: { ...f.auth(), 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'header=a&header=b',
    });
    assertValidationShape(res, 'header', /string/);
  });
});

describe('numbers written as text are plain decimals', () => {
  for (const page of ['1e309', 'Infinity', '-Infinity', '1e3', '0x10', '0b1', '1e-309', ' ']) {
    test(`page=${page} is a 400`, async () => {
      const res = await f.t.app.inject({ url: `/api/v1/alerts/donations?page=${encodeURIComponent(page)}`, headers: f.auth() });
      assertValidationShape(res, 'page', /The page field must be/);
    });
  }
  test('page=2 and page=002 are pages', async () => {
    for (const page of ['2', '002']) {
      const res = await f.t.app.inject({ url: `/api/v1/alerts/donations?page=${page}`, headers: f.auth() });
      assert.equal(res.statusCode, 200);
      assert.equal(res.json().meta.current_page, 2);
    }
  });
});
