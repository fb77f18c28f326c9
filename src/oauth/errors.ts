import { englishText, type Message } from '../i18n/messages.js';
/**
 * One class per RFC error code (architecture.md convention 4, after node-oidc-provider `errors.js`). The JSON
 * body is the league/Passport shape existing clients read (compatibility.md §4):
 * `{"error","error_description","hint","message"}`, `message` repeating `error_description`.
 * Descriptions are league/oauth2-server's wording; `hint` says what to fix.
 */
export abstract class OAuthError extends Error {
  abstract readonly error: string;
  /** HTTP status on the token and revocation endpoints (authorization errors redirect instead). */
  readonly status: number = 400;
  constructor(
    readonly description: string,
    readonly hint: string,
  ) {
    super(description);
  }

  toJSON(): { error: string; error_description: string; hint: string; message: string } {
    return { error: this.error, error_description: this.description, hint: this.hint, message: this.description };
  }
}

/**
 * The class for one RFC error code: its code, its fixed description and its status. Subclasses that
 * take something other than a required hint declare their own constructor.
 */
function rfcError<const E extends string>(error: E, description: string, status = 400) {
  return class extends OAuthError {
    readonly error = error;
    override readonly status = status;
    constructor(hint: string) {
      super(description, hint);
    }
  };
}

/** RFC 6749 §5.2 / §4.1.2.1. */
export class InvalidRequestError extends rfcError(
  'invalid_request',
  'The request is missing a required parameter, includes an invalid parameter value, includes a parameter more than once, or is otherwise malformed.',
) {
  constructor(parameter: string, hint = `Check the \`${parameter}\` parameter`) {
    super(hint);
  }
}

/**
 * RFC 6749 §5.2: 401; `WWW-Authenticate` naming the scheme the client tried when it used the
 * Authorization header.
 */
export class InvalidClientError extends rfcError('invalid_client', 'Client authentication failed', 401) {
  constructor(
    hint: string,
    readonly usedBasic = false,
  ) {
    super(hint);
  }
}

export class InvalidGrantError extends rfcError(
  'invalid_grant',
  'The provided authorization grant (e.g., authorization code, resource owner credentials) or refresh token is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
) {}

export class UnauthorizedClientError extends rfcError(
  'unauthorized_client',
  'The authenticated client is not authorized to use this authorization grant type.',
) {}

export class UnsupportedGrantTypeError extends rfcError(
  'unsupported_grant_type',
  'The authorization grant type is not supported by the authorization server.',
) {
  constructor(hint = 'Check that all required parameters have been provided') {
    super(hint);
  }
}

export class InvalidScopeError extends rfcError('invalid_scope', 'The requested scope is invalid, unknown, or malformed') {}

/** RFC 6749 §4.1.2.1: the user (or the server) refused; sent to the client by redirect. */
export class AccessDeniedError extends rfcError('access_denied', 'The resource owner or authorization server denied the request.') {
  constructor(hint = 'The user denied the request') {
    super(hint);
  }
}

export class UnsupportedResponseTypeError extends rfcError(
  'unsupported_response_type',
  'The authorization server does not support obtaining an authorization code using this method.',
) {
  constructor(hint = 'Use response_type=code or response_type=token') {
    super(hint);
  }
}

/** RFC 7009 §2.2.1. */
export class UnsupportedTokenTypeError extends rfcError(
  'unsupported_token_type',
  'The authorization server does not support the revocation of the presented token type.',
) {}

export class ServerError extends rfcError(
  'server_error',
  'The authorization server encountered an unexpected condition which prevented it from fulfilling the request.',
  500,
) {
  constructor() {
    super('Try again later');
  }
}

/**
 * An authorization request that must NOT be redirected (RFC 6749 §4.1.2.1, compatibility.md §4): unknown
 * client, or a redirect_uri that is missing/ambiguous/unregistered. Shown to the user as a 400 page.
 */
export class AuthorizePageError extends Error {
  /** `message` is the English text; the page shows `detail` in the user's language. */
  constructor(readonly detail: Message) {
    super(englishText(detail));
  }
}
