import { required, type TokenContext } from '../context.js';
import { InvalidGrantError, InvalidRequestError } from '../errors.js';
import { stringParam } from '../params.js';
import type { Check } from './check.js';

/** RFC 6749 §4.1.3: if the authorization request had redirect_uri, the token request repeats it exactly. */
export const redirectUriMatchesCode: Check<TokenContext> = {
  name: 'redirect-uri-matches-code',
  run(ctx) {
    const code = required(ctx.code, 'code');
    const given = stringParam(ctx.params, 'redirect_uri');
    if (given === undefined) {
      if (code.redirect_uri_given) throw new InvalidRequestError('redirect_uri');
      return;
    }
    if (given !== code.redirect_uri) throw new InvalidGrantError('Invalid redirect URI');
  },
};
