import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { DatabaseUnavailableError } from '../db/unavailable.js';
import { DomainError, InsufficientScopeError, UnauthenticatedError, ValidationError, type Message } from '../domain/errors.js';
import { englishText } from '../i18n/messages.js';
import { validationMessages } from './validation-messages.js';

export function sendJsonError(reply: FastifyReply, status: number, body: Record<string, unknown>): FastifyReply {
  return reply.status(status).type('application/json').send(body);
}

/** How a surface answers errors: the compatibility.md §1 JSON shapes, or a short HTML page. */
export type ErrorFormat = (request: FastifyRequest) => 'json' | 'html';

/** The public API: JSON whatever the client accepts (compatibility.md §1). */
export const alwaysJson: ErrorFormat = () => 'json';

/** Pages: HTML, unless a script asked for JSON (`Accept: application/json` without text/html). */
export const htmlUnlessJsonAsked: ErrorFormat = (request) => {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html') ? 'json' : 'html';
};

/** Where callers are both (widgets, unknown paths): a browser navigating asks for text/html. */
export const jsonUnlessHtmlAsked: ErrorFormat = (request) => ((request.headers.accept ?? '').includes('text/html') ? 'html' : 'json');

/**
 * Renders an HTML error page (in the request's language: the page knows how to find it).
 * `detail`: the message code behind `message` (its English text), when a service said it, so the
 * page can say it in its own language.
 */
export type HtmlErrorPage = (status: number, message: string, request: FastifyRequest, detail?: Message) => Promise<string>;

interface Described {
  status: number;
  body: Record<string, unknown>;
  detail?: Message;
}

/** Maps any error to a status and the compatibility.md §1 body; 5xx details are logged, never sent. */
function describe(error: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply): Described {
  if (error instanceof ValidationError) return { status: 400, body: { message: error.message, errors: error.errors }, detail: error.detail };
  if (error instanceof UnauthenticatedError) {
    const params = error.bearerError ? ` error="${error.bearerError}"` : '';
    reply.header('WWW-Authenticate', `Bearer realm="api"${params ? ',' + params : ''}`);
    return { status: 401, body: { message: error.message } };
  }
  if (error instanceof InsufficientScopeError) {
    reply.header('WWW-Authenticate', `Bearer realm="api", error="insufficient_scope", scope="${error.scope}"`);
    return { status: 403, body: { message: error.message } };
  }
  if (error instanceof DatabaseUnavailableError) {
    // Logged like any 5xx; the client is told to come back rather than shown a bare 500.
    request.log.error({ err: error }, 'database unavailable');
    reply.header('Retry-After', String(error.retryAfter));
  }
  if (error instanceof DomainError) return { status: error.status, body: { message: error.message }, detail: error.status < 500 ? error.detail : undefined };
  if (error.validation) {
    const fields = validationMessages(error);
    const errors = Object.fromEntries(Object.entries(fields).map(([field, list]) => [field, list.map(englishText)]));
    const first = Object.values(fields)[0]?.[0];
    return { status: 400, body: { message: first ? englishText(first) : 'The given data was invalid.', errors }, detail: first };
  }
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
  if (status >= 500) {
    request.log.error({ err: error }, 'request failed');
    return { status, body: { message: 'Server Error.' } };
  }
  if (status === 413) return { status, body: { message: `The request body is too large; the limit is ${request.server.initialConfig.bodyLimit} bytes.` } };
  if (status === 415) return { status, body: { message: 'Unsupported Content-Type; send application/x-www-form-urlencoded, multipart/form-data or application/json.' } };
  if (status === 429) return { status, body: { message: 'Too Many Attempts.' } };
  return { status, body: { message: error.message || 'Bad request.' } };
}

/**
 * JSON is sent at once; an HTML page is rendered in the request's language, which may first load
 * that language's catalog: the handler then gives Fastify the page to send (a promise of it).
 */
function send(reply: FastifyReply, format: 'json' | 'html', status: number, body: Record<string, unknown>, page: HtmlErrorPage | undefined, detail?: Message): FastifyReply | Promise<string> {
  if (format === 'json' || !page) return sendJsonError(reply, status, body);
  reply.status(status).type('text/html; charset=utf-8');
  return page(status, String(body.message), reply.request, detail);
}

/**
 * An error handler for one surface (`app.setErrorHandler` in the plugin that owns the routes).
 * Pages render their own form errors; what reaches here from a page is a short HTML page.
 */
export function errorHandler(format: ErrorFormat, page?: HtmlErrorPage) {
  return (error: FastifyError | DomainError, request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<string> => {
    const { status, body, detail } = describe(error, request, reply);
    return send(reply, format(request), status, body, page, detail);
  };
}

/** A not-found handler (`app.setNotFoundHandler` in a plugin with a prefix, or the root). */
export function notFoundHandler(format: ErrorFormat, page?: HtmlErrorPage) {
  return (request: FastifyRequest, reply: FastifyReply): FastifyReply | Promise<string> => {
    const as = format(request);
    if (as === 'html' && page) return send(reply, as, 404, { message: 'This page does not exist.' }, page);
    return sendJsonError(reply, 404, { message: `No route for ${request.method} ${request.url.split('?')[0]}.` });
  };
}
