import type { SwaggerOptions } from '@fastify/swagger';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { DOCS_CSP_DIRECTIVES, useContentSecurityPolicy } from '../http/security-headers.js';
import { SCOPES } from '../oauth/scopes.js';

const DESCRIPTION = `A self-hostable donation-alerts service, compatible with the clients of the original API.

* **Authentication**: OAuth 2.0 (RFC 6749). Send \`Authorization: Bearer <access_token>\`; each operation names the scope it needs.
* **Request bodies**: \`application/x-www-form-urlencoded\` (bracket notation and repeated keys), \`multipart/form-data\` or \`application/json\`.
* **Errors**: \`400\` \`{"message", "errors": {"field": ["..."]}}\`; \`401\` \`{"message":"Unauthenticated."}\` with \`WWW-Authenticate: Bearer\`; \`403\` insufficient scope with \`WWW-Authenticate: Bearer error="insufficient_scope"\`; \`404\` / \`413\` / \`500\` \`{"message"}\`.
* **OAuth endpoints** (\`/oauth/token\`, \`/oauth/revoke\`) answer errors as \`{"error", "error_description", "hint", "message"}\` (RFC 6749 §5.2 codes), \`400\`, or \`401\` for \`invalid_client\`.
* **Merchandise API**: the merchant application's bearer token plus a \`signature\` parameter (see the \`merchantSignature\` scheme).
* **Rate limit**: per application, per minute. Every API response carries \`X-RateLimit-Limit\` and \`X-RateLimit-Remaining\`; over the limit, \`429\` \`{"message":"Too Many Attempts."}\` with \`Retry-After\` (seconds) and \`X-RateLimit-Reset\` (unix time).
* **Date-times**: \`YYYY-MM-DD HH:MM:SS\`, UTC. Money: numbers in major units.`;

const MERCHANT_SIGNATURE = `Merchandise API requests carry a \`signature\` parameter (spec 5.5, compatibility.md §3), in the body or the query string, besides the bearer token of the merchant's application (any grant; a \`client_credentials\` token will do; no scope). It is the lowercase hex SHA-256 of: the values of every other received parameter (query and body, not the path; unknown keys included; nested values such as \`title[en_US]\` flattened), each as the string sent, sorted — plain code-unit order or PHP \`sort()\` order, either is accepted — and concatenated without separator, followed by the application's \`client_secret\`. Missing: 400; wrong: 403 \`{"message":"Invalid signature."}\`.`;

type RouteSchema = Record<string, unknown> | undefined;
const DOCUMENTING_KEYS = ['body', 'querystring', 'params', 'response', 'summary', 'description'];

declare module 'fastify' {
  interface FastifyInstance {
    /** The OpenAPI document and the Swagger UI server, each built on first use (registerOpenApi). */
    openApi: { document(): Promise<unknown>; ui(): Promise<FastifyInstance> };
  }
}

function swaggerOptions(base: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'OpenAlerts API', version: '1', description: DESCRIPTION },
      servers: [{ url: base }],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description: 'Access tokens are opaque; every operation names the scope it needs.',
            flows: {
              authorizationCode: { authorizationUrl: `${base}/oauth/authorize`, tokenUrl: `${base}/oauth/token`, refreshUrl: `${base}/oauth/token`, scopes: { ...SCOPES } },
              implicit: { authorizationUrl: `${base}/oauth/authorize`, scopes: { ...SCOPES } },
              clientCredentials: { tokenUrl: `${base}/oauth/token`, scopes: { ...SCOPES } },
            },
          },
          merchantSignature: {
            type: 'apiKey',
            in: 'query',
            name: 'signature',
            description: MERCHANT_SIGNATURE,
          },
          standardWebhooks: {
            type: 'apiKey',
            in: 'header',
            name: 'webhook-signature',
            description: 'OpenAlerts extension: a request signed per Standard Webhooks with the streamer’s own `whsec_…` secret — `webhook-id`, `webhook-timestamp` (unix seconds, within 5 minutes of now) and `webhook-signature: v1,<base64 HMAC-SHA256 of "<webhook-id>.<webhook-timestamp>.<raw body>">`. No bearer token.',
          },
          clientSecretBasic: {
            type: 'http',
            scheme: 'basic',
            description: 'Client authentication at /oauth/token and /oauth/revoke (RFC 6749 §2.3.1): `client_id:client_secret`, each form-urlencoded. Alternatively send `client_id` and `client_secret` in the body; public clients send `client_id` alone.',
          },
        },
      },
      tags: [
        { name: 'User' },
        { name: 'Donations' },
        { name: 'Custom alerts' },
        { name: 'Real-time', description: 'Tokens for private channels of the Centrifuge-compatible WebSocket at `/connection/websocket`.' },
        { name: 'Merchandise API', description: `Server to server, for merchants. ${MERCHANT_SIGNATURE}` },
        { name: 'OAuth 2.0', description: 'The authorization server (RFC 6749, RFC 7009, RFC 8414).' },
        {
          name: 'Webhooks',
          description:
            'OpenAlerts extension (operations marked `x-openalerts-extension`), not part of the original API: the authorized streamer’s events POSTed to your HTTPS endpoint, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`), in order per subscription, retried with backoff for 24 hours.',
        },
        { name: 'Payments', description: 'OpenAlerts extensions (marked `x-openalerts-extension`), not in the original API: donations reported by other payment processors and bots, signed per Standard Webhooks.' },
      ],
    },
    transform: ({ schema, url }) => {
      const s = schema as RouteSchema;
      const documented = s !== undefined && DOCUMENTING_KEYS.some((key) => s[key] !== undefined);
      return { schema: (documented ? s : { ...s, hide: true }) as typeof schema, url };
    },
  };
}

/** Resets a memoized load when it fails, so that the next request tries again. */
function once<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((err: unknown) => {
      loading = undefined;
      throw err;
    }));
}

/**
 * OpenAPI 3.1 generated from route schemas (TypeBox) by @fastify/swagger. Routes without a schema
 * (pages, static files) are left out. The routes are collected as they are added (an onRoute hook),
 * so this is registered at the root before every plugin whose routes it documents — the API's and
 * the OAuth server's.
 *
 * Only the collecting happens at start: @fastify/swagger (and the YAML library it loads) is
 * imported and builds the document on the first request for /openapi.json or /docs — loading it
 * at start was a large share of `serve`'s start-up. It sees the same route objects it would have
 * seen registered at start (openapi-docs.ts).
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  const routes: RouteOptions[] = [];
  const instances: FastifyInstance[] = [];
  const sharedSchemas: Record<string, unknown> = {};
  app.addHook('onRoute', (route) => {
    routes.push(route);
  });
  app.addHook('onRegister', (instance) => {
    instances.push(instance);
  });
  // Shared schemas (addSchema) of every plugin, then the root's, as @fastify/swagger collects them.
  app.addHook('onReady', async () => {
    for (const instance of [...instances, app]) Object.assign(sharedSchemas, instance.getSchemas());
    instances.length = 0;
  });
  const options = swaggerOptions(app.ctx.config.publicUrl);
  const documentFunction = once(async () => (await import('./openapi-docs.js')).openApiDocumentFunction(routes, sharedSchemas, options));
  app.decorate('openApi', {
    document: async () => (await documentFunction())(),
    ui: once(async () => (await import('./openapi-docs.js')).swaggerUiServer(await documentFunction())),
  });
}

/**
 * The document at /openapi.json and Swagger UI at /docs, under its own Content-Security-Policy.
 * Swagger UI (@fastify/swagger-ui with @fastify/static: about a hundred files to load) runs in a
 * Fastify instance of its own, built on the first request for /docs; these routes pass /docs
 * requests to it, so that everything of ours — security headers, request ids, logs, error and
 * not-found answers — applies as to any other route.
 */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => reply.type('application/json').send(await app.openApi.document()));
  await app.register(async (docs) => {
    useContentSecurityPolicy(docs, DOCS_CSP_DIRECTIVES);
    const forward = async (request: FastifyRequest, reply: FastifyReply) => {
      const ui = await app.openApi.ui();
      const headers = Object.fromEntries(PASSED_HEADERS.flatMap((name) => (request.headers[name] === undefined ? [] : [[name, request.headers[name]!]])));
      const res = await ui.inject({ method: 'GET', url: request.url, headers });
      if (res.statusCode === 404) return reply.callNotFound();
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined && !HOP_HEADERS.has(name)) reply.header(name, value);
      // A redirect or a 304 has no body, and no content type to add to it.
      return reply.code(res.statusCode).send(res.rawPayload.length > 0 ? res.rawPayload : undefined);
    };
    docs.get('/docs', { schema: { hide: true } }, forward);
    docs.get('/docs/*', { schema: { hide: true } }, forward);
  });
}

/** Request headers Swagger UI's answer depends on (content negotiation and cache validation). */
const PASSED_HEADERS = ['accept', 'accept-encoding', 'if-none-match', 'if-modified-since'] as const;

/** Headers of Swagger UI's answer that describe its own transfer, not the content. */
const HOP_HEADERS = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'date']);
