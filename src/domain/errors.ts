import { englishText, msg, type Message } from '../i18n/messages.js';

export { englishText, msg, type Message };

/**
 * Typed domain errors. Services throw these; the HTTP error handler (src/http/error-handler.ts)
 * maps each to the compatibility.md §1 shape, pages show them in forms, the CLI prints the message.
 *
 * Each carries a message code of the catalogs (`err.*`) with its arguments: `message` is the
 * English rendering, which the API answers; pages render the same code in the page's language
 * (src/web/error-text.ts).
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  constructor(readonly detail: Message, options?: ErrorOptions) {
    super(englishText(detail), options);
  }
}

/** A field's messages as codes, for pages; the API answers their English texts (`errors`). */
export type FieldMessages = Record<string, Message[]>;

/** 400 `{message, errors: {field: [...]}}`; `message` repeats the first field message (compatibility.md §1). */
export class ValidationError extends DomainError {
  readonly status = 400;
  /** English texts by field, the API's `errors`. */
  readonly errors: Record<string, string[]>;
  constructor(readonly fields: FieldMessages) {
    super(Object.values(fields)[0]?.[0] ?? msg('err.invalid'));
    this.errors = Object.fromEntries(Object.entries(fields).map(([field, list]) => [field, list.map(englishText)]));
  }
  static field(field: string, message: Message): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

/** Adds a message to a field of a set being collected (one message per text, as Laravel). */
export function addFieldMessage(fields: FieldMessages, field: string, message: Message): void {
  (fields[field] ??= []).push(message);
}

/** The messages without repeats (the same code with the same arguments), in order. */
export function uniqueMessages(list: readonly Message[]): Message[] {
  const seen = new Set<string>();
  return list.filter((m) => {
    const id = englishText(m);
    return !seen.has(id) && !!seen.add(id);
  });
}

/** 401 — only for missing/invalid/expired/revoked credentials: clients refresh and retry on 401. */
export class UnauthenticatedError extends DomainError {
  readonly status = 401;
  constructor(readonly bearerError: 'invalid_token' | null = null, message: Message = msg('err.unauthenticated')) {
    super(message);
  }
}

/** 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>"` (RFC 6750 §3.1). */
export class InsufficientScopeError extends DomainError {
  readonly status = 403;
  constructor(readonly scope: string) {
    super(msg('err.scope.insufficient', { scope }));
  }
}

export class ForbiddenError extends DomainError {
  readonly status = 403;
}

export class NotFoundError extends DomainError {
  readonly status = 404;
}

/** 409: the request conflicts with the current state (the dashboard and the CLI, which write goals, polls and variations). */
export class ConflictError extends DomainError {
  readonly status = 409;
}
