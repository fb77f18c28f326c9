import { Type, type TSchema } from 'typebox';

/**
 * Error bodies of INTEROP §1, as TypeBox schemas: they document every error response in the
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

/** Responses every authenticated API route can give (INTEROP §1). */
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
