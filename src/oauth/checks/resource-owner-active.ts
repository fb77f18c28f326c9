import type { TokenContext } from '../context.js';
import { InvalidGrantError } from '../errors.js';
import { isUserActive } from '../oauth.repository.js';
import type { Check } from './check.js';

/** A deactivated streamer's earlier authorizations yield no new tokens. */
export const resourceOwnerActive: Check<TokenContext> = {
  name: 'resource-owner-active',
  async run(ctx) {
    const userId = ctx.code?.user_id ?? ctx.refresh?.userId ?? null;
    if (userId !== null && !(await isUserActive(ctx.db, userId))) throw new InvalidGrantError('The user who authorized this application is no longer active');
  },
};
