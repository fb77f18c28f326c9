import type { ClientAuthContext } from '../context.js';
import { InvalidRequestError } from '../errors.js';
import type { Check } from './check.js';

/** A JSON body must be an object of parameters (not an array, string or null). */
export const paramsAreAnObject: Check<ClientAuthContext> = {
  name: 'params-are-an-object',
  run(ctx) {
    if (ctx.params === null || typeof ctx.params !== 'object' || Array.isArray(ctx.params)) {
      throw new InvalidRequestError('body', 'Send the parameters as application/x-www-form-urlencoded, multipart/form-data or a JSON object');
    }
  },
};
