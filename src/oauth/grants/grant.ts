import type { Check } from '../checks/check.js';
import type { GrantType } from '../checks/grant-type-supported.js';
import type { TokenContext } from '../context.js';
import type { IssuedTokens } from '../token-store.js';

/** One grant type of the token endpoint: its own checks, then issuing (one transaction). */
export interface Grant {
  readonly type: GrantType;
  readonly checks: readonly Check<TokenContext>[];
  issue(ctx: TokenContext): Promise<IssuedTokens>;
}
