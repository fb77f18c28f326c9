import type { FastifyInstance, RouteShorthandOptions } from 'fastify';
import type { TSchema } from 'typebox';
import { BODY_MEDIA_TYPES, bodyTooLarge, documentationOnly, merchantErrorResponses, merchantSecurity } from '../../api/schemas.js';
import { requireToken } from '../../oauth/bearer.js';
import { captureSignedParams, verifySignedRequest } from './merchant-auth.js';

const DESCRIPTION_SUFFIX =
  ' Merchandise API (server to server): a bearer token of an application granted Merchandise API access (client credentials will do) and the `signature` parameter — lowercase hex SHA-256 of the values of every other parameter sorted (JS code-unit or PHP `sort()` order), concatenated, followed by the client secret. Missing signature → 400; wrong → 403 `{"message":"Invalid signature."}`; a merchant of another application → 403.';

/** What the OpenAPI document says about a Merchandise API route. */
export interface SignedRouteDoc {
  summary: string;
  description: string;
  params?: TSchema;
  querystring?: TSchema;
  body?: TSchema;
  /** Success replies, and errors beyond those every signed route gives. */
  response: Record<number, TSchema>;
}

/**
 * Hooks of every Merchandise API route, in order: the token (onRequest, before the body is read),
 * the snapshot of the signed parameters (preValidation, before anything can coerce them), then the
 * application's access and the signature (preHandler). The schema documents only
 * (`documentationOnly`): the signature covers the values exactly as received, and the route's own
 * reader validates them afterwards in the INTEROP §1 shape.
 */
export function signedRoute(app: FastifyInstance, doc: SignedRouteDoc): RouteShorthandOptions {
  if (!app.hasRequestDecorator('signedParams')) app.decorateRequest('signedParams', null);
  if (!app.hasRequestDecorator('merchantClientId')) app.decorateRequest('merchantClientId', null);
  return {
    schema: {
      tags: ['Merchandise API'],
      summary: doc.summary,
      description: doc.description + DESCRIPTION_SUFFIX,
      security: merchantSecurity,
      ...(doc.params ? { params: doc.params } : {}),
      ...(doc.querystring ? { querystring: doc.querystring } : {}),
      ...(doc.body ? { body: doc.body, consumes: BODY_MEDIA_TYPES } : {}),
      response: { ...merchantErrorResponses(), ...(doc.body ? bodyTooLarge : {}), ...doc.response },
    },
    ...documentationOnly,
    onRequest: requireToken(undefined, { userRequired: false }),
    preValidation: captureSignedParams,
    preHandler: verifySignedRequest,
  };
}

export function bodyOf(body: unknown): Record<string, unknown> {
  return body && typeof body === 'object' && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
}
