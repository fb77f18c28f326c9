import { Type, type TSchema } from 'typebox';

/**
 * Error bodies of compatibility.md §1, as TypeBox schemas: they document every error response in the
 * OpenAPI document and serialize the error handler's bodies (a route's response schema applies to
 * its error replies too, so every field the handler sends must be listed here).
 */
export const MessageBody = Type.Object({ message: Type.String() });

export const ValidationErrorBody = Type.Object(
  {
    message: Type.String({ description: 'The first field message, repeated.' }),
    errors: Type.Optional(Type.Record(Type.String(), Type.Array(Type.String()), { description: 'Messages per field.' })),
  },
);

const described = (schema: TSchema, description: string) => ({ ...schema, description });

/** Responses every authenticated API route can give (compatibility.md §1). */
export function apiErrorResponses(scope: string): Record<number, TSchema> {
  return {
    400: described(ValidationErrorBody, 'Validation failed: `{message, errors: {field: [...]}}`.'),
    401: described(MessageBody, 'Missing, invalid, expired or revoked token: `{"message":"Unauthenticated."}` with `WWW-Authenticate: Bearer`.'),
    403: described(MessageBody, `The token lacks the \`${scope}\` scope; \`WWW-Authenticate: Bearer error="insufficient_scope", scope="${scope}"\`.`),
    429: described(MessageBody, '`{"message":"Too Many Attempts."}` with `Retry-After` (seconds) and `X-RateLimit-Reset` (unix time).'),
    500: described(MessageBody, '`{"message":"Server Error."}`.'),
  };
}

/** OpenAPI security requirement: the OAuth 2.0 scope a route needs (spec 5.2). */
export const needsScope = (scope: string) => [{ oauth2: [scope] }];

/**
 * Route options that keep Fastify's validator off a route: nothing is validated, coerced or
 * stripped before the route runs its schemas itself — the Merchandise API after checking the
 * signature over what was received (compatibility.md §3, merchants/signed-input.ts), the OAuth endpoints
 * parameter by parameter in their ordered checks (oauth/params.ts, RFC 6749 error shapes) — and
 * replies are serialized exactly as without a response schema (Fastify's default is
 * `JSON.stringify`), so no field is dropped.
 */
export const documentationOnly = {
  validatorCompiler: () => () => true,
  serializerCompiler: () => (data: unknown) => JSON.stringify(data),
} as const;

/** A status with no body (a redirect), with the headers it carries. */
export function noBody(description: string, headers: Record<string, TSchema> = {}): TSchema {
  return { type: 'null', description, headers } as unknown as TSchema;
}

/** A non-JSON response (an HTML page). */
export function htmlPage(description: string): TSchema {
  return { description, content: { 'text/html': { schema: { type: 'string' } } } } as unknown as TSchema;
}

/** OpenAPI security requirement of the Merchandise API: the merchant application's token (any grant, no scope) and the signature (compatibility.md §3). */
export const merchantSecurity = [{ oauth2: [], merchantSignature: [] }];

/** Responses every Merchandise API route can give (compatibility.md §1, §3). */
export function merchantErrorResponses(): Record<number, TSchema> {
  return {
    400: described(ValidationErrorBody, 'Validation failed, including a missing `signature` or an unknown `merchant_identifier`: `{message, errors: {field: [...]}}`.'),
    401: described(MessageBody, 'Missing, invalid, expired or revoked token: `{"message":"Unauthenticated."}` with `WWW-Authenticate: Bearer`.'),
    403: described(
      MessageBody,
      'Wrong signature (`{"message":"Invalid signature."}`), an application without Merchandise API access, or a merchant of another application.',
    ),
    429: described(MessageBody, '`{"message":"Too Many Attempts."}` with `Retry-After` (seconds) and `X-RateLimit-Reset` (unix time).'),
    500: described(MessageBody, '`{"message":"Server Error."}`.'),
  };
}

/** The body-size error of a route that reads a request body (bodies are parsed by content, so there is no 415). */
export const bodyTooLarge = { 413: described(MessageBody, 'The body is over the size limit.') };

/** Media types every API body is accepted in (compatibility.md §1). */
export const BODY_MEDIA_TYPES = ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'];

/** A string from a fixed list, as one `enum` (a union of literals would be documented as `anyOf`). */
export function stringEnum<const T extends readonly string[]>(values: T, options: { description?: string; default?: T[number] } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}
