import { DomainError, msg } from '../domain/errors.js';

/** Raised instead of the driver's error when PostgreSQL cannot be reached or gives no connection in time. */
export class DatabaseUnavailableError extends DomainError {
  readonly status = 503;
  /** Seconds a client should wait before trying again (Retry-After). */
  readonly retryAfter = 2;
  constructor(cause: unknown) {
    super(msg('err.db.unavailable'), { cause });
  }
}
