import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { InsufficientScopeError, UnauthenticatedError } from '../domain/errors.js';
import type { AccessTokenInfo } from './token-store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified bearer token of an API request (set by `requireToken`). */
    auth: AccessTokenInfo | null;
  }
}

/** RFC 6750 §2.1: `Authorization: Bearer <token>`; the scheme is case-insensitive. */
export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+([^\s]+)\s*$/i.exec(header);
  return match ? match[1]! : null;
}

/**
 * preHandler for API routes: a valid token, and the scope when one is named. 401 for anything
 * wrong with the token itself (clients refresh and retry on 401 only), 403 for a missing scope.
 */
export function requireToken(scope?: string, options: { userRequired?: boolean } = { userRequired: true }): preHandlerAsyncHookHandler {
  return async function (this: unknown, request: FastifyRequest, _reply: FastifyReply) {
    const token = bearerToken(request);
    if (!token) throw new UnauthenticatedError(null);
    const info = await request.server.ctx.tokens.verify(token);
    if (!info) throw new UnauthenticatedError('invalid_token');
    if (options.userRequired !== false && info.userId === null) throw new InsufficientScopeError(scope ?? 'a user-bound token');
    if (scope && !info.scopes.includes(scope)) throw new InsufficientScopeError(scope);
    request.auth = info;
  };
}
