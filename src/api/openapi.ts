import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
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

const MERCHANT_SIGNATURE = `Merchandise API requests carry a \`signature\` parameter (spec 5.5, INTEROP §3), in the body or the query string, besides the bearer token of the merchant's application (any grant; a \`client_credentials\` token will do; no scope). It is the lowercase hex SHA-256 of: the values of every other received parameter (query and body, not the path; unknown keys included; nested values such as \`title[en_US]\` flattened), each as the string sent, sorted — plain code-unit order or PHP \`sort()\` order, either is accepted — and concatenated without separator, followed by the application's \`client_secret\`. Missing: 400; wrong: 403 \`{"message":"Invalid signature."}\`.`;

type RouteSchema = Record<string, unknown> | undefined;
const DOCUMENTING_KEYS = ['body', 'querystring', 'params', 'response', 'summary', 'description'];

/**
 * OpenAPI 3.1 generated from route schemas (TypeBox). Routes without a schema (pages, static files)
 * are left out. It collects routes as they are added (an onRoute hook), so it is registered at the
 * root before every plugin whose routes it documents — the API's and the OAuth server's.
 */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  const base = app.ctx.config.publicUrl;
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'OpenAlerts API', version: '1', description: DESCRIPTION },
      servers: [{ url: base }],
      components: {
        securitySchemes: {
          oauth2: {
            type: 'oauth2',
            description: 'Access tokens are opaque; scopes per spec 5.2.',
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
        { name: 'Real-time', description: 'Tokens for private channels of the Centrifuge-compatible WebSocket at `/connection/websocket` (spec 6).' },
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
  });
}

/** The document at /openapi.json and Swagger UI at /docs, under its own Content-Security-Policy. */
export async function docsRoutes(app: FastifyInstance): Promise<void> {
  app.get('/openapi.json', { schema: { hide: true }, logLevel: 'warn' }, async (_request, reply) => reply.type('application/json').send(app.swagger()));
  await app.register(async (docs) => {
    useContentSecurityPolicy(docs, DOCS_CSP_DIRECTIVES);
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true, persistAuthorization: false } });
  });
}
