import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import { requireToken } from '../../oauth/bearer.js';
import { captureSignedParams, verifySignedRequest } from './merchant-auth.js';

const DESCRIPTION_SUFFIX =
  ' Merchandise API (server to server): a bearer token of an application granted Merchandise API access (client credentials will do) and the `signature` parameter — lowercase hex SHA-256 of the values of every other parameter sorted (JS code-unit or PHP `sort()` order), concatenated, followed by the client secret. Missing signature → 400; wrong → 403 `{"message":"Invalid signature."}`; a merchant of another application → 403.';

/**
 * Hooks of every Merchandise API route, in order: the token (onRequest, before the body is read),
 * the snapshot of the signed parameters (preValidation, before anything can coerce them), then the
 * application's access and the signature (preHandler).
 */
export function signedRoute(app: FastifyInstance, doc: { summary: string; description: string }): RouteShorthandOptions {
  if (!app.hasRequestDecorator('signedParams')) app.decorateRequest('signedParams', null);
  if (!app.hasRequestDecorator('merchantClientId')) app.decorateRequest('merchantClientId', null);
  return {
    schema: {
      tags: ['Merchandise API'],
      summary: doc.summary,
      description: doc.description + DESCRIPTION_SUFFIX,
      consumes: ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'],
    },
    onRequest: requireToken(undefined, { userRequired: false }),
    preValidation: captureSignedParams,
    preHandler: verifySignedRequest,
  };
}

export function bodyOf(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
