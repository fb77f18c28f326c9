import type { FastifyInstance, preHandlerAsyncHookHandler, RouteShorthandOptions } from 'fastify';
import type { TObject, TSchema } from 'typebox';
import { BODY_MEDIA_TYPES, bodyTooLarge, documentationOnly, merchantErrorResponses, merchantSecurity } from '../../api/schemas.js';
import { requireToken } from '../../oauth/bearer.js';
import { captureSignedParams, verifySignedRequest, verifySignedRequestCached } from './merchant-auth.js';
import { checkAll, paramsCheck } from './signed-input.js';

const DESCRIPTION_SUFFIX =
  ' Merchandise API (server to server): a bearer token of an application granted Merchandise API access (client credentials will do) and the `signature` parameter — lowercase hex SHA-256 of the values of every other parameter sorted (JS code-unit or PHP `sort()` order), concatenated, followed by the client secret. Missing signature → 400; wrong → 403 `{"message":"Invalid signature."}`; a merchant of another application → 403.';

/** What the OpenAPI document says about a Merchandise API route. */
export interface SignedRouteDoc {
  summary: string;
  description: string;
  params?: TObject;
  querystring?: TObject;
  body?: TObject;
  /** Success replies, and errors beyond those every signed route gives. */
  response: Record<number, TSchema>;
  /**
   * The handler checks the credentials' version itself (`verifySignedRequestCached`): it compares
   * `request.merchantAuthVersion` with the version its own statement reads.
   */
  handlerChecksCredentials?: boolean;
}

/**
 * Hooks of every Merchandise API route, in order: the token (onRequest, before the body is read),
 * the snapshot of the signed parameters (preValidation, before anything can coerce them), then the
 * application's access and the signature, then the parameters against the very schemas the
 * OpenAPI document shows (preHandler, signed-input.ts): path, query and body are replaced by their
 * validated copies, or one 400 lists every problem. Fastify's own validator stays off
 * (`documentationOnly`): it would run before the signature check and coerce in place.
 */
export function signedRoute(app: FastifyInstance, doc: SignedRouteDoc): RouteShorthandOptions {
  if (!app.hasRequestDecorator('signedParams')) app.decorateRequest('signedParams', null);
  if (!app.hasRequestDecorator('merchantClientId')) app.decorateRequest('merchantClientId', null);
  if (!app.hasRequestDecorator('merchantAuthVersion')) app.decorateRequest('merchantAuthVersion', null);
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
    preHandler: [doc.handlerChecksCredentials ? verifySignedRequestCached : verifySignedRequest, validateSignedInput(doc)],
  };
}

function validateSignedInput(doc: SignedRouteDoc): preHandlerAsyncHookHandler {
  const params = doc.params && paramsCheck(doc.params);
  const query = doc.querystring && paramsCheck(doc.querystring);
  const body = doc.body && paramsCheck(doc.body);
  return async (request) => {
    await checkAll([
      [params, request.params, (value) => (request.params = value)],
      [query, request.query, (value) => (request.query = value)],
      [body, request.body, (value) => (request.body = value)],
    ]);
  };
}
