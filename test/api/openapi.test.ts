import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCOPES } from '../../src/oauth/scopes.js';
import { apiFixture, json, type ApiFixture } from './helpers.js';

const API = [
  { path: '/api/v1/user/oauth', method: 'get', scope: 'oauth-user-show', ok: '200' },
  { path: '/api/v1/alerts/donations', method: 'get', scope: 'oauth-donation-index', ok: '200' },
  { path: '/api/v1/custom_alert', method: 'post', scope: 'oauth-custom_alert-store', ok: '201' },
];

const DOCUMENTED_PREFIXES = ['/api/v1/', '/oauth/', '/.well-known/'];
const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const MERCHANDISE = [
  ['post', '/api/v1/merchandise'],
  ['put', '/api/v1/merchandise/{id}'],
  ['put', '/api/v1/merchandise/{merchant_identifier}/{merchandise_identifier}'],
  ['post', '/api/v1/merchandise/{merchant_identifier}/{merchandise_identifier}'],
  ['get', '/api/v1/merchandise/user'],
  ['post', '/api/v1/merchandise_sale'],
] as const;

/** Every operation of the document as [path, method, operation]. */
function operations(doc: any): Array<[string, string, any]> {
  return Object.entries<any>(doc.paths).flatMap(([path, item]) =>
    Object.entries<any>(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]): [string, string, any] => [path, method, operation]),
  );
}

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

  test('every route under /api/v1, /oauth and /.well-known is in the document, with its method', () => {
    const routes = registeredRoutes(f.t.app.printRoutes({ commonPrefix: false })).filter((r) => DOCUMENTED_PREFIXES.some((prefix) => r.path.startsWith(prefix)));
    const count = (prefix: string) => routes.filter((r) => r.path.startsWith(prefix)).length;
    assert.ok(count('/api/v1/') >= 8, `found ${count('/api/v1/')} API routes`);
    assert.ok(count('/oauth/') >= 3 && count('/.well-known/') >= 1, 'OAuth routes found');
    for (const { path, methods } of routes) {
      for (const method of methods.filter((m) => m !== 'HEAD' && m !== 'OPTIONS')) {
        // A tree node shared by routes with different parameter names prints them as `:a|:b`.
        const documented = path.split('|').length === 1 ? [path] : alternatives(path);
        assert.ok(documented.some((p) => doc.paths[p]?.[method.toLowerCase()]), `${method} ${path} documented`);
      }
    }
  });

  test('every operation states its security: a scheme of the document, or none for the public OAuth pages', () => {
    const schemes = Object.keys(doc.components.securitySchemes);
    for (const [path, method, operation] of operations(doc)) {
      assert.ok(Array.isArray(operation.security), `${method} ${path} states its security`);
      for (const requirement of operation.security) for (const name of Object.keys(requirement)) assert.ok(schemes.includes(name), `${method} ${path}: unknown scheme ${name}`);
      // The signed intake (an OpenAlerts extension) authenticates by a Standard Webhooks signature instead.
      if (path.startsWith('/api/v1/') && operation['x-openalerts-extension'] && operation.security.some((r: object) => 'standardWebhooks' in r)) {
        assert.deepEqual(operation.security, [{ standardWebhooks: [] }], `${method} ${path}: signed`);
      } else if (path.startsWith('/api/v1/')) {
        assert.ok(operation.security.length > 0, `${method} ${path} needs a token`);
        for (const requirement of operation.security) assert.ok(requirement.oauth2, `${method} ${path}: every alternative needs the bearer token`);
      }
    }
    for (const path of ['/oauth/token', '/oauth/revoke']) assert.deepEqual(doc.paths[path].post.security, [{ clientSecretBasic: [] }, {}], path);
    assert.deepEqual(doc.paths['/oauth/authorize'].get.security, []);
    assert.deepEqual(doc.paths['/.well-known/oauth-authorization-server'].get.security, []);
  });

  test('every operation lists its error responses', () => {
    for (const [path, method, operation] of operations(doc)) {
      const statuses = Object.keys(operation.responses);
      assert.ok(statuses.some((s) => /^2|^3/.test(s)), `${method} ${path}: a success response`);
      assert.ok(statuses.includes('500'), `${method} ${path}: 500`);
      const signed = (operation.security ?? []).some((r: object) => 'standardWebhooks' in r);
      const needs = signed ? ['400', '403', '429'] : ['400', '401', '403', '429'];
      if (path.startsWith('/api/v1/')) for (const status of needs) assert.ok(statuses.includes(status), `${method} ${path}: ${status}`);
      if (operation.requestBody && path.startsWith('/api/v1/')) assert.ok(statuses.includes('413'), `${method} ${path}: 413`);
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        if (/^[45]/.test(status)) assert.ok(response.description && response.description !== 'Default Response', `${method} ${path} ${status} is described`);
      }
    }
  });

  test('the Merchandise API: token of the merchant application plus the signature, parameters, bodies in three encodings, errors', () => {
    const signature = doc.components.securitySchemes.merchantSignature;
    assert.deepEqual([signature.type, signature.in, signature.name], ['apiKey', 'query', 'signature']);
    assert.match(signature.description, /SHA-256/);
    assert.match(signature.description, /client_credentials/);
    const ops = MERCHANDISE.map(([method, path]) => [method, path, doc.paths[path]?.[method]] as const);
    for (const [method, path, op] of ops) {
      assert.ok(op, `${method} ${path} documented`);
      assert.deepEqual(op.security, [{ oauth2: [], merchantSignature: [] }], `${method} ${path}`);
      assert.deepEqual(op.tags, ['Merchandise API']);
      assert.match(op.responses['403'].description, /Invalid signature/);
      assert.match(op.responses['400'].description, /signature/);
      const success = op.responses['201'] ?? op.responses['200'];
      assert.ok(success.content['application/json'].schema.properties.data, `${method} ${path} success body`);
      if (method === 'get') continue;
      const content = op.requestBody.content;
      assert.deepEqual(Object.keys(content).sort(), ['application/json', 'application/x-www-form-urlencoded', 'multipart/form-data'], `${method} ${path}`);
      assert.ok(content['application/json'].schema.required.includes('signature'), `${method} ${path}: signature required`);
    }
    const create = doc.paths['/api/v1/merchandise'].post;
    const body = create.requestBody.content['application/x-www-form-urlencoded'].schema;
    assert.deepEqual(body.required.sort(), ['currency', 'merchandise_identifier', 'merchant_identifier', 'price_service', 'price_user', 'signature', 'title']);
    assert.equal(body.properties.merchandise_identifier.maxLength, 16);
    assert.equal(body.properties.url.maxLength, 128);
    assert.deepEqual(body.properties.title.required, ['en_US']);
    assert.equal(body.properties.title.properties.en_US.maxLength, 1024);
    assert.deepEqual(doc.paths['/api/v1/merchandise/{id}'].put.requestBody.content['application/json'].schema.required, ['signature']);
    assert.ok(doc.paths['/api/v1/merchandise/{id}'].put.responses['404']);
    const upsert = doc.paths['/api/v1/merchandise/{merchant_identifier}/{merchandise_identifier}'];
    for (const method of ['put', 'post']) {
      const op = upsert[method];
      assert.deepEqual(op.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort(), ['path:merchandise_identifier', 'path:merchant_identifier']);
      assert.ok(!('merchant_identifier' in op.requestBody.content['application/json'].schema.properties), 'identifiers come from the path');
      assert.ok(op.responses['200'] && op.responses['201'], 'created or updated');
    }
    // The query `signature` is the merchantSignature scheme's parameter (listed once, not twice).
    const lookup = doc.paths['/api/v1/merchandise/user'].get;
    assert.deepEqual(lookup.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`), ['query:promocode']);
    const sale = doc.paths['/api/v1/merchandise_sale'].post;
    const saleBody = sale.requestBody.content['multipart/form-data'].schema;
    assert.deepEqual(saleBody.required.sort(), ['amount', 'currency', 'external_id', 'merchandise_identifier', 'merchant_identifier', 'signature', 'user_id']);
    assert.equal(saleBody.properties.external_id.maxLength, 32);
    assert.ok(sale.responses['200'].description.includes('retry'));
    assert.deepEqual(sale.responses['201'].content['application/json'].schema.properties.data.properties.name.enum, ['merchandise-sale']);
  });

  test('the OAuth endpoints: parameters, flows and the league/Passport error shape', () => {
    const flows = doc.components.securitySchemes.oauth2.flows;
    assert.equal(flows.clientCredentials.tokenUrl, 'https://alerts.example.test/oauth/token');
    assert.equal(flows.authorizationCode.refreshUrl, 'https://alerts.example.test/oauth/token');
    assert.equal(doc.components.securitySchemes.clientSecretBasic.scheme, 'basic');

    const authorize = doc.paths['/oauth/authorize'].get;
    const query = Object.fromEntries(authorize.parameters.map((p: { name: string }) => [p.name, p]));
    for (const name of ['response_type', 'client_id', 'redirect_uri', 'scope', 'state', 'code_challenge', 'code_challenge_method']) assert.equal(query[name]?.in, 'query', name);
    assert.equal(query.response_type.required, true);
    assert.equal(query.client_id.required, true);
    assert.ok(authorize.responses['302'].headers.Location);
    assert.ok(authorize.responses['400'].content['text/html']);
    const consent = doc.paths['/oauth/authorize'].post.requestBody.content['application/x-www-form-urlencoded'].schema;
    assert.ok(consent.required.includes('decision') && consent.required.includes('_csrf'));

    for (const path of ['/oauth/token', '/oauth/revoke']) {
      const op = doc.paths[path].post;
      assert.ok(op.requestBody.content['application/x-www-form-urlencoded'] && op.requestBody.content['application/json'], `${path} form and JSON`);
      for (const status of ['400', '401']) {
        assert.deepEqual(op.responses[status].content['application/json'].schema.required, ['error', 'error_description', 'hint', 'message'], `${path} ${status}`);
      }
      assert.match(op.responses['401'].description, /invalid_client/);
    }
    const token = doc.paths['/oauth/token'].post;
    assert.deepEqual(token.requestBody.content['application/json'].schema.properties.grant_type.enum, ['authorization_code', 'refresh_token', 'client_credentials']);
    assert.deepEqual(token.responses['200'].content['application/json'].schema.required, ['token_type', 'expires_in', 'access_token']);
    const metadata = doc.paths['/.well-known/oauth-authorization-server'].get.responses['200'].content['application/json'].schema;
    assert.ok(metadata.properties.token_endpoint && metadata.properties.revocation_endpoint);
  });

  test('/centrifuge/subscribe: JSON or text/plain body, a scope per channel, every error', () => {
    const op = doc.paths['/api/v1/centrifuge/subscribe'].post;
    assert.deepEqual(Object.keys(op.requestBody.content).sort(), ['application/json', 'text/plain']);
    assert.deepEqual(op.requestBody.content['application/json'].schema.required, ['channels', 'client']);
    assert.deepEqual(op.security.map((r: { oauth2: string[] }) => r.oauth2[0]).sort(), ['oauth-donation-subscribe', 'oauth-goal-subscribe', 'oauth-poll-subscribe']);
    assert.match(op.responses['403'].description, /channel/);
    assert.ok(op.responses['200'].content['application/json'].schema.properties.channels);
  });

  test('the document is structurally valid OpenAPI 3.1', () => {
    assert.equal(typeof doc.info.version, 'string');
    const ids = new Set<string>();
    for (const [path, method, operation] of operations(doc)) {
      const where = `${method} ${path}`;
      assert.match(path, /^\//);
      assert.ok(HTTP_METHODS.includes(method), where);
      if (operation.operationId) {
        assert.ok(!ids.has(operation.operationId), `${where}: unique operationId`);
        ids.add(operation.operationId);
      }
      // Every path template variable is a required path parameter, and nothing else is.
      const templated = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const parameters: any[] = operation.parameters ?? [];
      assert.deepEqual(parameters.filter((p) => p.in === 'path').map((p) => p.name).sort(), templated, `${where}: path parameters`);
      for (const p of parameters) {
        assert.ok(['query', 'header', 'path', 'cookie'].includes(p.in), `${where}: parameter ${p.name} location`);
        assert.ok(p.schema && typeof p.name === 'string', `${where}: parameter ${p.name} has a schema`);
        if (p.in === 'path') assert.equal(p.required, true, `${where}: path parameter ${p.name} required`);
      }
      assert.equal(new Set(parameters.map((p) => `${p.in}:${p.name}`)).size, parameters.length, `${where}: no duplicate parameter`);
      if (operation.requestBody) {
        assert.ok(Object.keys(operation.requestBody.content).length > 0, `${where}: request body media types`);
        for (const media of Object.values<any>(operation.requestBody.content)) assert.equal(typeof media.schema, 'object', `${where}: request body schema`);
      }
      assert.ok(Object.keys(operation.responses).length > 0, `${where}: responses`);
      for (const [status, response] of Object.entries<any>(operation.responses)) {
        assert.match(status, /^([1-5]\d\d|[1-5]XX|default)$/, `${where}: status ${status}`);
        assert.equal(typeof response.description, 'string', `${where} ${status}: description`);
        for (const media of Object.values<any>(response.content ?? {})) assert.equal(typeof media.schema, 'object', `${where} ${status}: schema`);
      }
    }
    // Every $ref resolves inside the document.
    const text = JSON.stringify(doc);
    for (const [, ref] of text.matchAll(/"\$ref":"([^"]+)"/g)) {
      assert.match(ref!, /^#\//, `local $ref ${ref}`);
      const target = ref!.slice(2).split('/').reduce<any>((node, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
      assert.ok(target !== undefined, `$ref ${ref} resolves`);
    }
    for (const [name, scheme] of Object.entries<any>(doc.components.securitySchemes)) {
      assert.ok(['apiKey', 'http', 'oauth2', 'openIdConnect', 'mutualTLS'].includes(scheme.type), `${name} type`);
      if (scheme.type === 'apiKey') assert.ok(['query', 'header', 'cookie'].includes(scheme.in) && scheme.name, `${name} apiKey`);
      if (scheme.type === 'oauth2') {
        for (const [flow, spec] of Object.entries<any>(scheme.flows)) {
          for (const key of ['authorizationUrl', 'tokenUrl', 'refreshUrl']) if (spec[key]) assert.doesNotThrow(() => new URL(spec[key]), `${flow}.${key}`);
          assert.equal(typeof spec.scopes, 'object', `${flow} scopes`);
        }
      }
    }
    const tags = new Set(doc.tags.map((t: { name: string }) => t.name));
    for (const [path, method, operation] of operations(doc)) for (const tag of operation.tags ?? []) assert.ok(tags.has(tag), `${method} ${path}: tag ${tag} declared`);
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
