import { required, type TokenContext } from '../context.js';
import { InvalidGrantError } from '../errors.js';
import { findCode } from '../oauth.repository.js';
import { requiredParam } from '../params.js';
import type { Check } from './check.js';

/**
 * The code exists, belongs to this client, is unexpired and unused. A used code is a replay: the
 * grant it produced is revoked with every token issued from it (RFC 6749 §4.1.2, RFC 9700 §4.5).
 */
export const codeUsable: Check<TokenContext> = {
  name: 'code-usable',
  async run(ctx) {
    const client = required(ctx.client, 'client');
    const code = await findCode(ctx.db, requiredParam(ctx.params, 'code'));
    if (!code) throw new InvalidGrantError('Authorization code is invalid');
    if (code.client_id !== client.id) throw new InvalidGrantError('Authorization code was not issued to this client');
    if (code.used_at !== null) {
      if (code.grant_id !== null) await ctx.tokens.revokeGrantsNow([code.grant_id]);
      throw new InvalidGrantError('Authorization code has been revoked');
    }
    if (code.expires_at <= ctx.now) throw new InvalidGrantError('Authorization code has expired');
    ctx.code = code;
  },
};

