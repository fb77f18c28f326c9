/**
 * One class per RFC error code (DESIGN convention 5, after node-oidc-provider `errors.js`). The JSON
 * body is the league/Passport shape existing clients read (INTEROP §4):
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

/** RFC 6749 §5.2 / §4.1.2.1. */
export class InvalidRequestError extends OAuthError {
  readonly error = 'invalid_request';
  constructor(parameter: string, hint = `Check the \`${parameter}\` parameter`) {
    super('The request is missing a required parameter, includes an invalid parameter value, includes a parameter more than once, or is otherwise malformed.', hint);
  }
}

/**
 * RFC 6749 §5.2: 401; `WWW-Authenticate` naming the scheme the client tried when it used the
 * Authorization header.
 */
export class InvalidClientError extends OAuthError {
  readonly error = 'invalid_client';
  override readonly status = 401;
  constructor(
    hint: string,
    readonly usedBasic = false,
  ) {
    super('Client authentication failed', hint);
  }
}

export class InvalidGrantError extends OAuthError {
  readonly error = 'invalid_grant';
  constructor(hint: string) {
    super(
      'The provided authorization grant (e.g., authorization code, resource owner credentials) or refresh token is invalid, expired, revoked, does not match the redirection URI used in the authorization request, or was issued to another client.',
      hint,
    );
  }
}

export class UnauthorizedClientError extends OAuthError {
  readonly error = 'unauthorized_client';
  constructor(hint: string) {
    super('The authenticated client is not authorized to use this authorization grant type.', hint);
  }
}

export class UnsupportedGrantTypeError extends OAuthError {
  readonly error = 'unsupported_grant_type';
  constructor(hint = 'Check that all required parameters have been provided') {
    super('The authorization grant type is not supported by the authorization server.', hint);
  }
}

export class InvalidScopeError extends OAuthError {
  readonly error = 'invalid_scope';
  constructor(hint: string) {
    super('The requested scope is invalid, unknown, or malformed', hint);
  }
}

/** RFC 6749 §4.1.2.1: the user (or the server) refused; sent to the client by redirect. */
export class AccessDeniedError extends OAuthError {
  readonly error = 'access_denied';
  constructor(hint = 'The user denied the request') {
    super('The resource owner or authorization server denied the request.', hint);
  }
}

export class UnsupportedResponseTypeError extends OAuthError {
  readonly error = 'unsupported_response_type';
  constructor(hint = 'Use response_type=code or response_type=token') {
    super('The authorization server does not support obtaining an authorization code using this method.', hint);
  }
}

/** RFC 7009 §2.2.1. */
export class UnsupportedTokenTypeError extends OAuthError {
  readonly error = 'unsupported_token_type';
  constructor(hint: string) {
    super('The authorization server does not support the revocation of the presented token type.', hint);
  }
}

export class ServerError extends OAuthError {
  readonly error = 'server_error';
  override readonly status = 500;
  constructor() {
    super('The authorization server encountered an unexpected condition which prevented it from fulfilling the request.', 'Try again later');
  }
}

/**
 * An authorization request that must NOT be redirected (RFC 6749 §4.1.2.1, INTEROP §4): unknown
 * client, or a redirect_uri that is missing/ambiguous/unregistered. Shown to the user as a 400 page.
 */
export class AuthorizePageError extends Error {
  constructor(message: string) {
    super(message);
  }
}
