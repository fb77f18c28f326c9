import type { AuthorizeContext } from '../context.js';
import { stringParam } from '../params.js';
import type { Check } from './check.js';

/** Read before the other redirectable checks so their error redirects carry `state` back (RFC 6749 §4.1.2.1). */
export const stateWellFormed: Check<AuthorizeContext> = {
  name: 'state-well-formed',
  run(ctx) {
    ctx.state = stringParam(ctx.params, 'state');
  },
};
