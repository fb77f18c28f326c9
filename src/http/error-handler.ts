import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, InsufficientScopeError, UnauthenticatedError, ValidationError } from '../domain/errors.js';
import { validationErrors } from './validation-messages.js';

/** Paths that always answer JSON, whatever the client accepts. */
function wantsJson(request: FastifyRequest): boolean {
  const url = request.url;
  if (url.startsWith('/api/') || url.startsWith('/oauth/token') || url.startsWith('/oauth/revoke') || url.startsWith('/internal/')) return true;
  return !(request.headers.accept ?? '').includes('text/html');
}

export function sendJsonError(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return reply.status(status).type('application/json').send(body);
}

/**
 * One place maps every error to the INTEROP.md §1 shapes. 5xx details are logged, never sent.
 * Pages render their own form errors; what reaches here from a page is shown as a short HTML page.
 */
export function registerErrorHandler(app: FastifyInstance, renderHtmlError: (status: number, message: string) => string): void {
  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    let status: number;
    let body: Record<string, unknown>;
    if (error instanceof ValidationError) {
      status = 400;
      body = { message: error.message, errors: error.errors };
    } else if (error instanceof UnauthenticatedError) {
      status = 401;
      const params = error.bearerError ? ` error="${error.bearerError}"` : '';
      reply.header('WWW-Authenticate', `Bearer realm="api"${params ? ',' + params : ''}`);
      body = { message: error.message };
    } else if (error instanceof InsufficientScopeError) {
      status = 403;
      reply.header('WWW-Authenticate', `Bearer realm="api", error="insufficient_scope", scope="${error.scope}"`);
      body = { message: error.message };
    } else if (error instanceof DomainError) {
      status = error.status;
      body = { message: error.message };
    } else if ((error as FastifyError).validation) {
      const errors = validationErrors(error as FastifyError);
      status = 400;
      body = { message: Object.values(errors)[0]?.[0] ?? 'The given data was invalid.', errors };
    } else {
      const fe = error as FastifyError;
      status = fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 600 ? fe.statusCode : 500;
      if (status === 413) body = { message: `The request body is too large; the limit is ${app.initialConfig.bodyLimit} bytes.` };
      else if (status === 415) body = { message: 'Unsupported Content-Type; send application/x-www-form-urlencoded, multipart/form-data or application/json.' };
      else if (status === 429) body = { message: 'Too Many Attempts.' };
      else if (status >= 500) {
        request.log.error({ err: error }, 'request failed');
        body = { message: 'Server Error.' };
      } else body = { message: fe.message || 'Bad request.' };
    }
    if (status >= 500 && !(error as FastifyError).statusCode) request.log.error({ err: error }, 'request failed');
    if (wantsJson(request)) return sendJsonError(reply, status, body);
    return reply.status(status).type('text/html; charset=utf-8').send(renderHtmlError(status, String(body.message)));
  });

  app.setNotFoundHandler((request, reply) => {
    const message = `No route for ${request.method} ${request.url.split('?')[0]}.`;
    if (wantsJson(request)) return sendJsonError(reply, 404, { message });
    return reply.status(404).type('text/html; charset=utf-8').send(renderHtmlError(404, 'This page does not exist.'));
  });
}
