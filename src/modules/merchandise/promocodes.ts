import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { ValidationError } from '../../domain/errors.js';
import { findUserByPromocode } from '../accounts/accounts.repository.js';
import { updatePromocode } from './promocodes.repository.js';

/** Promocodes are read aloud on stream and typed by viewers: letters and digits, upper-case. */
const PROMOCODE = /^[A-Z0-9]{4,16}$/;
export const PROMOCODE_RULE = 'The promocode must be 4–16 letters (A–Z) or digits.';

export function normalizePromocode(promocode: string): string {
  return promocode.trim().toUpperCase();
}

/** 4.7: the streamer behind an advertising promocode (case-insensitive); unknown → 400. */
export async function userIdByPromocode(db: Kysely<DB>, promocode: string): Promise<number> {
  const user = await findUserByPromocode(db, promocode);
  if (!user || !user.is_active) throw ValidationError.field('promocode', 'The selected promocode is invalid.');
  return user.id;
}

/**
 * Changes a streamer's merchandise promocode (dashboard). Stored upper-case; unique across the
 * service (the database constraint decides races). Returns the stored value.
 */
export async function changePromocode(db: Kysely<DB>, userId: number, promocode: string): Promise<string> {
  const code = normalizePromocode(typeof promocode === 'string' ? promocode : '');
  if (!PROMOCODE.test(code)) throw ValidationError.field('merchandise_promocode', PROMOCODE_RULE);
  const holder = await findUserByPromocode(db, code);
  if (holder && holder.id !== userId) throw ValidationError.field('merchandise_promocode', 'This promocode has already been taken.');
  try {
    await updatePromocode(db, userId, code);
  } catch (err) {
    if (isUniqueViolation(err)) throw ValidationError.field('merchandise_promocode', 'This promocode has already been taken.');
    throw err;
  }
  return code;
}
