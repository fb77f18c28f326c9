/**
 * Typed domain errors. Services throw these; the HTTP error handler (src/http/error-handler.ts)
 * maps each to the INTEROP.md §1 shape, pages show them in forms, the CLI prints the message.
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;
}

/** 400 `{message, errors: {field: [...]}}`; `message` repeats the first field message (INTEROP §1). */
export class ValidationError extends DomainError {
  readonly status = 400;
  constructor(readonly errors: Record<string, string[]>) {
    super(Object.values(errors)[0]?.[0] ?? 'The given data was invalid.');
  }
  static field(field: string, message: string): ValidationError {
    return new ValidationError({ [field]: [message] });
  }
}

/** 401 — only for missing/invalid/expired/revoked credentials: clients refresh and retry on 401. */
export class UnauthenticatedError extends DomainError {
  readonly status = 401;
  constructor(readonly bearerError: 'invalid_token' | null = null, message = 'Unauthenticated.') {
    super(message);
  }
}

/** 403 with `WWW-Authenticate: Bearer error="insufficient_scope", scope="<needed>"` (RFC 6750 §3.1). */
export class InsufficientScopeError extends DomainError {
  readonly status = 403;
  constructor(readonly scope: string) {
    super(`This action needs the "${scope}" scope; ask the user to authorize it.`);
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
