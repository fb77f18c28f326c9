import type { TokenContext } from '../context.js';
import { InvalidRequestError, UnsupportedGrantTypeError } from '../errors.js';
import { stringParam } from '../params.js';
import type { Check } from './check.js';

export const GRANT_TYPES = ['authorization_code', 'refresh_token', 'client_credentials'] as const;
export type GrantType = (typeof GRANT_TYPES)[number];

/** Before client authentication, as league/Passport do: an unknown grant is reported as such. */
export const grantTypeSupported: Check<TokenContext> = {
  name: 'grant-type-supported',
  run(ctx) {
    const value = stringParam(ctx.params, 'grant_type');
    if (value === undefined) throw new InvalidRequestError('grant_type');
    if (!(GRANT_TYPES as readonly string[]).includes(value)) throw new UnsupportedGrantTypeError(`The grant type \`${value.slice(0, 100)}\` is not supported; use one of ${GRANT_TYPES.join(', ')}`);
    ctx.grantType = value;
  },
};
