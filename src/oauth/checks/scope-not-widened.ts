import { required, type TokenContext } from '../context.js';
import { InvalidScopeError } from '../errors.js';
import type { Check } from './check.js';

/** RFC 6749 §6: a refresh may narrow the scope, never widen it beyond what the user granted. */
export const scopeNotWidened: Check<TokenContext> = {
  name: 'scope-not-widened',
  run(ctx) {
    const granted = required(ctx.refresh, 'refresh').grantScopes;
    const extra = (ctx.requestedScopes ?? []).find((s) => !granted.includes(s));
    if (extra !== undefined) throw new InvalidScopeError(`Check the \`${extra}\` scope: it was not granted originally`);
  },
};
