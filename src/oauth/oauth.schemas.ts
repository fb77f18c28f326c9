import { Type, type TSchema } from 'typebox';
import { htmlPage, noBody, stringEnum } from '../api/schemas.js';
import { GRANT_TYPES } from './checks/grant-type-supported.js';
import { PARAMETERS, type ParameterName } from './params.js';
import { ALL_SCOPES } from './scopes.js';

/**
 * Schemas of the authorization server's endpoints for the OpenAPI document, built from the
 * parameter schemas `stringParam` validates with (params.ts), so a documented limit is the limit
 * enforced. Fastify's validator stays off (`documentationOnly`): the ordered OAuth checks read the
 * parameters and answer in RFC 6749 / league-Passport shapes (compatibility.md §4), which a generic 400
 * would not.
 */

/** A documented parameter: its schema from params.ts plus what the document says about it. */
const param = (name: ParameterName, extra: Record<string, unknown> = {}) => Type.Unsafe<string>({ ...PARAMETERS[name], ...extra });

const ClientId = Type.Union([Type.Integer({ minimum: 1 }), param('client_id', { pattern: '^[1-9][0-9]*$' })], {
  description: 'The application’s id; a number or its decimal text.',
});
const SCOPE_DESCRIPTION = `Scopes, space-, \`+\`- or \`%20\`-delimited (repeated keys and \`scope[0]=…\` also work): ${ALL_SCOPES.map((s) => `\`${s}\``).join(', ')}.`;
const Scope = param('scope', { description: SCOPE_DESCRIPTION });

const authorizationRequest = {
  response_type: param('response_type', { enum: ['code', 'token'], description: '`code` (authorization code grant) or `token` (implicit grant).' }),
  client_id: ClientId,
  redirect_uri: Type.Optional(param('redirect_uri', { description: 'A registered redirect URI; may be left out when the application registered exactly one (RFC 6749 §3.1.2.3).' })),
  scope: Type.Optional(Scope),
  state: Type.Optional(param('state', { description: 'Passed back unchanged with the code, token or error.' })),
  code_challenge: Type.Optional(param('code_challenge', { minLength: 43, description: 'PKCE (RFC 7636); required for public clients.' })),
  code_challenge_method: Type.Optional(param('code_challenge_method', { enum: ['S256', 'plain'], description: 'PKCE method. `S256`; `plain` (also what an absent method means, RFC 7636 §4.3) is refused unless the operator sets PKCE_ALLOW_PLAIN (RFC 9700 §2.1.1).' })),
};

/** GET /oauth/authorize (RFC 6749 §4.1.1, §4.2.1). */
export const AuthorizeQuery = Type.Object(authorizationRequest);

/** POST /oauth/authorize: the consent page's form, the request as validated on GET plus the decision. */
export const ConsentForm = Type.Object({
  ...authorizationRequest,
  decision: param('decision', { enum: ['allow', 'deny'], description: 'Anything but `allow` denies (`error=access_denied`).' }),
  _csrf: Type.String({ description: 'The consent page’s CSRF token (with its cookie).' }),
});

const Location = { Location: Type.String({ description: 'Where the user agent goes next.' }) };

export const AuthorizeResponses: Record<number, TSchema> = {
  200: htmlPage('The consent page, when the user is signed in and has not yet granted these scopes.'),
  302: noBody(
    'To the redirect URI with `code` and `state` (code grant) or `#access_token=…&token_type=Bearer&expires_in=…&state=…` (implicit grant); with `error`, `error_description`, `hint` and `state` on a bad request or a deactivated account (RFC 6749 §4.1.2.1, in the fragment for the implicit grant); or to `/login` when not signed in.',
    Location,
  ),
  400: htmlPage('Unknown client, or a missing, ambiguous or unregistered `redirect_uri`: an error page, never a redirect (RFC 6749 §4.1.2.1).'),
  500: htmlPage('Server error page.'),
};

export const ConsentResponses: Record<number, TSchema> = {
  303: noBody('To the redirect URI with the code or token (`decision=allow`), or with `error=access_denied`; to `/login` when the session has ended.', Location),
  400: htmlPage('Unknown client or bad `redirect_uri`: an error page, never a redirect.'),
  403: htmlPage('Missing or invalid CSRF token.'),
  500: htmlPage('Server error page.'),
};

/** POST /oauth/token (RFC 6749 §3.2); the parameters each grant reads. */
export const TokenBody = Type.Object({
  grant_type: param('grant_type', { enum: [...GRANT_TYPES] }),
  client_id: Type.Optional({ ...ClientId, description: 'With `client_secret`, or in HTTP Basic; alone for public clients.' }),
  client_secret: Type.Optional(param('client_secret', { description: 'Or in HTTP Basic (`client_secret_basic`), never both with different values.' })),
  code: Type.Optional(param('code', { description: '`authorization_code`: the code from the redirect; single use.' })),
  redirect_uri: Type.Optional(param('redirect_uri', { description: '`authorization_code`: the same value as in the authorization request, if one was sent there.' })),
  code_verifier: Type.Optional(param('code_verifier', { minLength: 43, description: '`authorization_code`: the PKCE verifier, when a challenge was sent.' })),
  refresh_token: Type.Optional(param('refresh_token', { description: '`refresh_token`: the refresh token; reusing a rotated one revokes the grant.' })),
  scope: Type.Optional({ ...Scope, description: `${SCOPE_DESCRIPTION} \`refresh_token\`: optional, at most the original scopes; \`client_credentials\`: optional.` }),
});

/** compatibility.md §4 success shape. */
export const TokenReply = Type.Object({
  token_type: stringEnum(['Bearer']),
  expires_in: Type.Integer({ description: 'Seconds until the access token expires.' }),
  access_token: Type.String(),
  refresh_token: Type.Optional(Type.String({ description: 'Always for the code grant; on refresh when rotated (the old one then stops working).' })),
});

/** compatibility.md §4: the league/Passport error body; `message` repeats `error_description`. */
export const OAuthErrorBody = Type.Object({
  error: Type.String({
    description:
      'RFC 6749 §5.2 / RFC 7009 §2.2.1 code: `invalid_request`, `invalid_client`, `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope`, `unsupported_token_type`, `server_error`.',
  }),
  error_description: Type.String(),
  hint: Type.String({ description: 'What to fix.' }),
  message: Type.String({ description: 'Repeats `error_description`.' }),
});

const oauthError = (description: string): TSchema => ({ ...OAuthErrorBody, description });

/** Errors of the token and revocation endpoints, all in the league/Passport shape, with `Cache-Control: no-store`. */
export const OAuthJsonErrors: Record<number, TSchema> = {
  400: oauthError('`invalid_request`, `invalid_grant`, `unauthorized_client`, `unsupported_grant_type`, `invalid_scope` or `unsupported_token_type`.'),
  401: oauthError('`invalid_client`: client authentication failed; `WWW-Authenticate: Basic realm="OAuth"` when HTTP Basic was used.'),
  413: oauthError('`invalid_request`: the body is over the size limit.'),
  500: oauthError('`server_error`.'),
};

/** POST /oauth/revoke (RFC 7009 §2.1). */
export const RevokeBody = Type.Object({
  token: param('token', { description: 'An access or refresh token of this client. Revoking a refresh token also revokes the access tokens of its grant.' }),
  token_type_hint: Type.Optional(param('token_type_hint', { enum: ['access_token', 'refresh_token'], description: 'Which kind is looked up first.' })),
  client_id: Type.Optional(ClientId),
  client_secret: Type.Optional(param('client_secret', { description: 'Or in HTTP Basic.' })),
});

export const RevokeReply = Type.Object({}, { description: 'Revoked — or unknown, or another client’s token: the answer is the same (RFC 7009 §2.2).' });

/** GET /.well-known/oauth-authorization-server (RFC 8414 §2). */
export const MetadataReply = Type.Object(
  {
    issuer: Type.String(),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    scopes_supported: Type.Array(Type.String()),
    response_types_supported: Type.Array(Type.String()),
    response_modes_supported: Type.Array(Type.String()),
    grant_types_supported: Type.Array(Type.String()),
    token_endpoint_auth_methods_supported: Type.Array(Type.String()),
    revocation_endpoint_auth_methods_supported: Type.Array(Type.String()),
    code_challenge_methods_supported: Type.Array(Type.String()),
    service_documentation: Type.String(),
  },
  { description: 'Absolute URLs under the service’s public URL.' },
);

/** Client authentication at the token and revocation endpoints: HTTP Basic, or `client_id` / `client_secret` in the body (or `client_id` alone for public clients). */
export const clientAuthentication: Array<Record<string, string[]>> = [{ clientSecretBasic: [] }, {}];
