import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { msg, ValidationError } from '../../domain/errors.js';
import { findUserByPromocode } from '../accounts/accounts.repository.js';
import { updatePromocode } from './promocodes.repository.js';

/** Promocodes are read aloud on stream and typed by viewers: letters and digits, upper-case. */
const PROMOCODE = /^[A-Z0-9]{4,16}$/;


export function normalizePromocode(promocode: string): string {
  return promocode.trim().toUpperCase();
}

/** 4.7: the streamer behind an advertising promocode (case-insensitive); unknown → 400. */
export async function userIdByPromocode(db: Kysely<DB>, promocode: string): Promise<number> {
  const user = await findUserByPromocode(db, promocode);
  if (!user || !user.is_active) throw ValidationError.field('promocode', msg('err.field.selected_invalid', { field: 'promocode' }));
  return user.id;
}

/**
 * Changes a streamer's merchandise promocode (dashboard). Stored upper-case; unique across the
 * service (the database constraint decides races). Returns the stored value.
 */
export async function changePromocode(db: Kysely<DB>, userId: number, promocode: string): Promise<string> {
  const code = normalizePromocode(typeof promocode === 'string' ? promocode : '');
  if (!PROMOCODE.test(code)) throw ValidationError.field('merchandise_promocode', msg('err.promocode.rule'));
  const holder = await findUserByPromocode(db, code);
  if (holder && holder.id !== userId) throw ValidationError.field('merchandise_promocode', msg('err.promocode.taken'));
  try {
    await updatePromocode(db, userId, code);
  } catch (err) {
    if (isUniqueViolation(err)) throw ValidationError.field('merchandise_promocode', msg('err.promocode.taken'));
    throw err;
  }
  return code;
}
