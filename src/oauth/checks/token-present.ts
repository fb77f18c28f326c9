import type { RevokeContext } from '../context.js';
import { requiredParam, stringParam } from '../params.js';
import type { Check } from './check.js';

/** RFC 7009 §2.1: `token` required; `token_type_hint` optional and only a hint (unknown values ignored). */
export const tokenPresent: Check<RevokeContext> = {
  name: 'token-present',
  run(ctx) {
    ctx.token = requiredParam(ctx.params, 'token');
    ctx.tokenTypeHint = stringParam(ctx.params, 'token_type_hint');
  },
};
