import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCOPES } from '../../src/oauth/scopes.js';
import { apiFixture, json, type ApiFixture } from './helpers.js';

const API = [
  { path: '/api/v1/user/oauth', method: 'get', scope: 'oauth-user-show', ok: '200' },
  { path: '/api/v1/alerts/donations', method: 'get', scope: 'oauth-donation-index', ok: '200' },
  { path: '/api/v1/custom_alert', method: 'post', scope: 'oauth-custom_alert-store', ok: '201' },
];

describe('OpenAPI 3.1 at /openapi.json and docs at /docs', () => {
  let f: ApiFixture;
  let doc: any;
  before(async () => {
    f = await apiFixture();
    const res = await f.t.app.inject({ url: '/openapi.json' });
    assert.equal(res.statusCode, 200);
    doc = json(res);
  });
  after(() => f.close());

  test('an OpenAPI 3.1 document with the OAuth 2.0 flows and every scope', () => {
    assert.equal(doc.openapi, '3.1.0');
    assert.equal(typeof doc.info.title, 'string');
    assert.equal(doc.servers[0].url, 'https://alerts.example.test');
    const flows = doc.components.securitySchemes.oauth2.flows;
    assert.equal(flows.authorizationCode.authorizationUrl, 'https://alerts.example.test/oauth/authorize');
    assert.equal(flows.authorizationCode.tokenUrl, 'https://alerts.example.test/oauth/token');
    assert.equal(flows.implicit.authorizationUrl, 'https://alerts.example.test/oauth/authorize');
    assert.deepEqual(Object.keys(flows.authorizationCode.scopes).sort(), Object.keys(SCOPES).sort());
  });

  for (const op of API) {
    test(`${op.method.toUpperCase()} ${op.path}: scope, success schema and every error response`, () => {
      const operation = doc.paths[op.path]?.[op.method];
      assert.ok(operation, `${op.path} documented`);
      assert.deepEqual(operation.security, [{ oauth2: [op.scope] }]);
      assert.ok(operation.summary);
      for (const status of [op.ok, '400', '401', '403', '429', '500']) assert.ok(operation.responses[status], `${status} documented`);
      const success = operation.responses[op.ok].content['application/json'].schema;
      assert.ok(success.properties.data, 'success body has data');
      assert.deepEqual(operation.responses['400'].content['application/json'].schema.required, ['message']);
      assert.match(operation.responses['403'].description, new RegExp(op.scope));
    });
  }

  test('the custom alert body is documented for the three encodings with its limits', () => {
    const body = doc.paths['/api/v1/custom_alert'].post.requestBody.content;
    assert.deepEqual(Object.keys(body).sort(), ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data']);
    const props = body['application/json'].schema.properties;
    assert.equal(props.external_id.maxLength, 32);
    assert.equal(props.header.maxLength, 255);
    assert.equal(props.message.maxLength, 300);
    assert.equal(props.image_url.maxLength, 255);
    assert.equal(props.is_shown.maximum, 1);
  });

  test('the page parameter and the pagination shape are documented', () => {
    const op = doc.paths['/api/v1/alerts/donations'].get;
    const page = op.parameters.find((p: { name: string }) => p.name === 'page');
    assert.equal(page.in, 'query');
    assert.equal(page.schema.type, 'integer');
    const schema = op.responses['200'].content['application/json'].schema;
    assert.deepEqual(Object.keys(schema.properties).sort(), ['data', 'links', 'meta']);
    assert.ok(schema.properties.data.items.properties.amount_in_user_currency);
  });

  test('every route under /api/v1 is in the document', () => {
    const routes = registeredRoutes(f.t.app.printRoutes({ commonPrefix: false })).filter((r) => r.path.startsWith('/api/v1/'));
    assert.ok(routes.length > API.length, `found ${routes.length} API routes`);
    for (const { path, methods } of routes) {
      for (const method of methods.filter((m) => m !== 'HEAD' && m !== 'OPTIONS')) {
        // A tree node shared by routes with different parameter names prints them as `:a|:b`.
        const documented = path.split('|').length === 1 ? [path] : alternatives(path);
        assert.ok(documented.some((p) => doc.paths[p]?.[method.toLowerCase()]), `${method} ${path} documented`);
      }
    }
  });

  test('pages and internal routes are left out', () => {
    for (const path of Object.keys(doc.paths)) assert.ok(!['/login', '/openapi.json', '/docs', '/'].includes(path), `${path} should not be documented`);
  });

  test('/docs serves the interactive documentation', async () => {
    const res = await f.t.app.inject({ url: '/docs/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /text\/html/);
    assert.match(res.body, /swagger/i);
    const spec = await f.t.app.inject({ url: '/docs/json' });
    assert.equal(spec.statusCode, 200);
    assert.deepEqual(Object.keys(json(spec).paths).sort(), Object.keys(doc.paths).sort());
  });
});

/** Full paths and methods from Fastify's route tree (`printRoutes({ commonPrefix: false })`). */
function registeredRoutes(tree: string): Array<{ path: string; methods: string[] }> {
  const stack: string[] = [];
  const routes: Array<{ path: string; methods: string[] }> = [];
  for (const line of tree.split('\n')) {
    const m = /^((?:│ {3}| {4})*)[├└]── (\S+)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    stack.push(m[2]!);
    const full = stack.join('').replace(/^\/\//, '/');
    const path = (full.startsWith('/') ? full : `/${full}`).replace(/:([A-Za-z_]+)/g, '{$1}');
    if (m[3]) routes.push({ path, methods: m[3].split(', ') });
  }
  return routes;
}

/** `/a/{x}|{y}/b` → `/a/{x}/b`, `/a/{y}/b`. */
function alternatives(path: string): string[] {
  return path
    .split('/')
    .slice(1)
    .reduce<string[]>((acc, seg) => acc.flatMap((prefix) => seg.split('|').map((alt) => `${prefix}/${alt}`)), ['']);
}
