import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { isLocale, isOutputCurrency, LOCALES, OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { addFieldMessage, ForbiddenError, msg, NotFoundError, ValidationError, type FieldMessages, type Message } from '../../domain/errors.js';
import { hashPassword, sha256Hex, verifyPassword } from '../../security/crypto.js';
import type { Revocations } from '../../security/revocations.js';
import * as repo from './accounts.repository.js';
import { passwordProblem } from './accounts.service.js';
import type { UserRow } from './accounts.table.js';

/**
 * Account changes made from the dashboard: a streamer's own profile and password, and an
 * administrator switching accounts on and off. Every failure is a ValidationError keyed by the
 * form field, so pages show it beside the input.
 */

export interface ProfileInput {
  name?: unknown;
  /** http(s) URL; '' or null puts back the generated default avatar. */
  avatar?: unknown;
  language?: unknown;
  currency?: unknown;
}

export interface PasswordChange {
  currentPassword?: unknown;
  newPassword?: unknown;
  /** The new password typed again. */
  confirmation?: unknown;
}

export const AVATAR_MAX = 255;
// The sign-up rule (accounts.service): 2–32 letters, digits, spaces, dots, dashes, underscores.
const NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.-]{0,30}[\p{L}\p{N}_]$/u;

type Errors = FieldMessages;
const add = (errors: Errors, f: string, message: Message) => addFieldMessage(errors, f, message);
const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

function avatarField(errors: Errors, value: unknown): string | null {
  const avatar = text(value);
  if (!avatar) return null;
  if (avatar.length > AVATAR_MAX) add(errors, 'avatar', msg('err.field.max_chars_short', { label: msg('err.label.avatar'), max: AVATAR_MAX }));
  else {
    let url: URL | null = null;
    try {
      url = new URL(avatar);
    } catch {
      // reported below
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || !url.hostname) add(errors, 'avatar', msg('err.account.avatar_url'));
  }
  return avatar;
}

/**
 * Saves name, avatar, language and main currency together (all or nothing). The name stays unique
 * ignoring case; the user `code` (donor-page links) is kept. Changing the main currency affects
 * donations from now on; earlier ones keep the currency they were converted into.
 */
export async function updateProfile(db: Kysely<DB>, userId: number, input: ProfileInput): Promise<UserRow> {
  const errors: Errors = {};
  const name = text(input.name);
  if (!name) add(errors, 'name', msg('err.field.required', { field: msg('err.label.name') }));
  else if (!NAME.test(name)) add(errors, 'name', msg('err.account.name_rule'));
  const avatar = avatarField(errors, input.avatar);
  const language = text(input.language);
  if (!isLocale(language)) add(errors, 'language', msg('err.field.one_of', { label: msg('err.label.language'), list: LOCALES.join(', ') }));
  const currency = text(input.currency).toUpperCase();
  if (!isOutputCurrency(currency)) add(errors, 'currency', msg('err.currency.one_of', { list: OUTPUT_CURRENCIES.join(', ') }));
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const nameKey = name.toLowerCase();
  if (await repo.nameKeyTaken(db, nameKey, userId)) throw ValidationError.field('name', msg('err.field.taken', { field: msg('err.label.name') }));
  try {
    const row = await repo.updateUser(db, userId, { name, name_key: nameKey, avatar, language, currency });
    if (!row) throw new NotFoundError(msg('err.account.not_found'));
    return row;
  } catch (err) {
    // A concurrent rename to the same name: the unique index decides.
    if (isUniqueViolation(err, 'name_key')) throw ValidationError.field('name', msg('err.field.taken', { field: msg('err.label.name') }));
    throw err;
  }
}

/**
 * Changes the password after checking the current one. Every other session of the account ends
 * (the one given in `keepSessionToken`, the caller's, stays logged in).
 */
export async function changePassword(db: Kysely<DB>, userId: number, input: PasswordChange, keepSessionToken?: string): Promise<void> {
  const user = await repo.findUserById(db, userId);
  if (!user) throw new NotFoundError(msg('err.account.not_found'));
  const current = typeof input.currentPassword === 'string' ? input.currentPassword : '';
  const next = typeof input.newPassword === 'string' ? input.newPassword : '';
  const errors: Errors = {};
  if (!current) add(errors, 'current_password', msg('err.password.current_required'));
  else if (!(await verifyPassword(current, user.password_hash))) add(errors, 'current_password', msg('err.password.current_wrong'));
  const problem = passwordProblem(next, user.email, user.name);
  if (problem) add(errors, 'password', problem);
  else if (next === current) add(errors, 'password', msg('err.password.unchanged'));
  if (input.confirmation !== undefined && input.confirmation !== next) add(errors, 'password_confirmation', msg('err.password.mismatch'));
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const hash = await hashPassword(next);
  await db.transaction().execute(async (tx) => {
    await repo.updateUser(tx, userId, { password_hash: hash });
    await repo.deleteSessionsOfUser(tx, userId, keepSessionToken ? sha256Hex(keepSessionToken) : undefined);
  });
}

/**
 * An administrator turns an account off or on. Off: the account can no longer log in, its
 * sessions end, its OAuth and real-time tokens are refused and its open sockets are closed on
 * every node (announced once committed), and it accepts no donations. On: it works again, tokens
 * included.
 */
export async function setAccountActive(db: Kysely<DB>, revocations: Revocations, actorId: number, userId: number, active: boolean): Promise<UserRow> {
  if (actorId === userId && !active) throw new ForbiddenError(msg('err.account.self_deactivate'));
  const row = await db.transaction().execute(async (tx) => {
    const updated = await repo.updateUser(tx, userId, { is_active: active ? 1 : 0 });
    if (!updated) throw new NotFoundError(msg('err.account.no_such_user'));
    if (!active) await repo.deleteSessionsOfUser(tx, userId);
    return updated;
  });
  if (!active) revocations.announce({ kind: 'user', userId });
  return row;
}
