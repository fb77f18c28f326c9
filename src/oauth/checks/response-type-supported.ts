import type { AuthorizeContext } from '../context.js';
import { InvalidRequestError, UnsupportedResponseTypeError } from '../errors.js';
import { stringParam } from '../params.js';
import type { Check } from './check.js';

/** `code` (spec 5.4) or `token` (the implicit grant the spec keeps for browser apps). */
export const responseTypeSupported: Check<AuthorizeContext> = {
  name: 'response-type-supported',
  run(ctx) {
    const value = stringParam(ctx.params, 'response_type');
    if (value === undefined) throw new InvalidRequestError('response_type');
    if (value !== 'code' && value !== 'token') throw new UnsupportedResponseTypeError();
    ctx.responseType = value;
  },
};
