import { randomInt } from 'node:crypto';
import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { isLocale, isOutputCurrency, LOCALES, OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { addFieldMessage, msg, NotFoundError, ValidationError, type FieldMessages, type Message } from '../../domain/errors.js';
import { hashPassword, randomToken, sha256Hex, verifyPassword } from '../../security/crypto.js';
import { insertDefaultVariations } from '../widgets/variations.service.js';
import * as repo from './accounts.repository.js';
import type { UserRow } from './accounts.table.js';

export interface NewAccount {
  email: string;
  password: string;
  name: string;
  currency?: string;
  language?: string;
  /** Force the administrator role; the very first account is one anyway. */
  admin?: boolean;
}

export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const NAME = /^[\p{L}\p{N}][\p{L}\p{N} _.-]{0,30}[\p{L}\p{N}_]$/u;
const COMMON_PASSWORDS = new Set([
  'password', 'password1', 'password123', '12345678', '123456789', '1234567890', 'qwertyuiop', 'qwerty123',
  '11111111', '00000000', 'iloveyou', 'abc12345', 'letmein1', 'welcome1', 'admin123', 'passw0rd', 'baseball',
  'football', 'sunshine', 'princess', 'superman', 'starwars', 'trustno1', 'dragon12', 'monkey12', 'master12',
]);
// No 0/O/1/I: promocodes are read aloud on stream and typed by viewers.
const PROMO_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function passwordProblem(password: string, email?: string, name?: string): Message | null {
  if (password.length < 8) return msg('err.password.too_short', { min: 8 });
  if (password.length > 200) return msg('err.password.too_long', { max: 200 });
  if (new Set(password).size < 4 || COMMON_PASSWORDS.has(password.toLowerCase())) {
    return msg('err.password.guessable');
  }
  const lower = password.toLowerCase();
  if ((email && lower === normalizeEmail(email)) || (name && lower === name.toLowerCase())) {
    return msg('err.password.same_as_login');
  }
  return null;
}

/** A URL-safe code from a display name: lower-case letters, digits and underscores. */
export function codeFromName(name: string): string {
  const code = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 32);
  return code.length >= 2 ? code : `user_${code}`;
}

export function generatePromocode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += PROMO_ALPHABET[randomInt(PROMO_ALPHABET.length)];
  return code;
}

function validateNewAccount(input: NewAccount): FieldMessages {
  const errors: FieldMessages = {};
  const add = (field: string, message: Message) => addFieldMessage(errors, field, message);
  const email = normalizeEmail(input.email ?? '');
  if (!email) add('email', msg('err.field.required', { field: msg('err.label.email') }));
  else if (email.length > 254 || !EMAIL.test(email)) add('email', msg('err.account.email_invalid'));
  const name = (input.name ?? '').trim();
  if (!name) add('name', msg('err.field.required', { field: msg('err.label.name') }));
  else if (!NAME.test(name)) add('name', msg('err.account.name_rule'));
  const problem = passwordProblem(input.password ?? '', email, name);
  if (problem) add('password', problem);
  if (input.currency !== undefined && !isOutputCurrency(input.currency)) {
    add('currency', msg('err.currency.one_of', { list: OUTPUT_CURRENCIES.join(', ') }));
  }
  if (input.language !== undefined && !isLocale(input.language)) add('language', msg('err.field.one_of', { label: msg('err.label.language'), list: LOCALES.join(', ') }));
  return errors;
}

/**
 * Creates a streamer account with its default alert variations. The first account ever created is
 * the administrator. Either the whole account is written or nothing (one transaction; uniqueness
 * enforced by the database).
 */
export async function createAccount(db: Kysely<DB>, input: NewAccount): Promise<UserRow> {
  const errors = validateNewAccount(input);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const email = normalizeEmail(input.email);
  const name = input.name.trim();
  const nameKey = name.toLowerCase();
  if (await repo.findUserByEmail(db, email)) throw ValidationError.field('email', msg('err.field.taken', { field: msg('err.label.email') }));

  const baseCode = codeFromName(name);
  const passwordHash = await hashPassword(input.password);
  for (let attempt = 0; attempt < 20; attempt++) {
    const code = attempt === 0 ? baseCode : `${baseCode.slice(0, 28)}_${randomInt(1000, 9999)}`;
    const taken = await repo.codeOrNameTaken(db, code, nameKey);
    if (taken.name) throw ValidationError.field('name', msg('err.field.taken', { field: msg('err.label.name') }));
    if (taken.code) continue;
    const now = Date.now();
    try {
      return await db.transaction().execute(async (tx) => {
        const first = (await repo.countUsers(tx)) === 0;
        const user = await repo.insertUser(tx, {
          email,
          password_hash: passwordHash,
          code,
          name,
          name_key: nameKey,
          avatar: null,
          language: input.language ?? 'en_US',
          currency: input.currency ?? 'USD',
          is_active: 1,
          role: first || input.admin ? 'admin' : 'streamer',
          merchandise_promocode: generatePromocode(),
          created_at: now,
          updated_at: now,
        });
        // Alerts work out of the box: the widget shows donations and sales before any settings.
        await insertDefaultVariations(tx, user.id, user.language);
        return user;
      });
    } catch (err) {
      if (isUniqueViolation(err, 'email')) throw ValidationError.field('email', msg('err.field.taken', { field: msg('err.label.email') }));
      if (isUniqueViolation(err, 'name_key')) throw ValidationError.field('name', msg('err.field.taken', { field: msg('err.label.name') }));
      if (isUniqueViolation(err)) continue; // code or promocode collided with a concurrent sign-up: retry
      throw err;
    }
  }
  throw ValidationError.field('name', msg('err.account.no_free_code'));
}

/** Null when the e-mail is unknown, the password wrong or the account disabled (one message for all). */
export async function authenticate(db: Kysely<DB>, email: string, password: string): Promise<UserRow | null> {
  const user = await repo.findUserByEmail(db, email);
  if (!user) {
    // Spend the same time as a real check so response time does not reveal which e-mails exist.
    await verifyPassword(password, DUMMY_HASH);
    return null;
  }
  if (!(await verifyPassword(password, user.password_hash))) return null;
  return user.is_active ? user : null;
}

/**
 * Log-in backoff per account, whatever addresses the attempts come from (per-IP limits alone let a
 * botnet try passwords on one account at full speed). The first LOGIN_FREE_FAILURES failures in a
 * LOGIN_FAILURE_WINDOW_MS window cost nothing; after that the account takes one attempt per
 * `loginRetryDelayMs(failures)` — doubling from 1 s, never more than LOGIN_MAX_DELAY_MS — so an
 * attacker gets a few dozen guesses per window, and the owner, knowing the password, waits at most
 * that long. The count decays: the window ends LOGIN_FAILURE_WINDOW_MS after its first failure.
 */
export const LOGIN_FREE_FAILURES = 5;
export const LOGIN_FAILURE_WINDOW_MS = 15 * 60_000;
export const LOGIN_MAX_DELAY_MS = 30_000;

/** Milliseconds between attempts on an account with `failures` recent failed log-ins (0: no wait). */
export function loginRetryDelayMs(failures: number): number {
  if (failures < LOGIN_FREE_FAILURES) return 0;
  return Math.min(1000 * 2 ** Math.min(failures - LOGIN_FREE_FAILURES, 16), LOGIN_MAX_DELAY_MS);
}

const DUMMY_HASH = 'scrypt$32768$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

/** Starts a session; returns the cookie value (only its hash is stored). */
export async function startSession(db: Kysely<DB>, userId: number): Promise<string> {
  const token = randomToken();
  await repo.insertSession(db, sha256Hex(token), userId, SESSION_TTL_MS);
  return token;
}

export async function sessionUser(db: Kysely<DB>, token: string | undefined): Promise<UserRow | undefined> {
  if (!token) return undefined;
  return repo.findSessionUser(db, sha256Hex(token));
}

export async function endSession(db: Kysely<DB>, token: string | undefined): Promise<void> {
  if (token) await repo.deleteSession(db, sha256Hex(token));
}

/** architecture.md convention 8: wherever a command names a user, its id, email or code all work. */
export async function findUserByRef(db: Kysely<DB>, ref: string | number): Promise<UserRow> {
  const text = String(ref).trim();
  const user = /^\d+$/.test(text)
    ? await repo.findUserById(db, Number(text))
    : text.includes('@')
      ? await repo.findUserByEmail(db, text)
      : await repo.findUserByCode(db, text);
  if (!user) throw new NotFoundError(msg('err.account.no_user', { ref: text }));
  return user;
}

export async function userById(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  return repo.findUserById(db, id);
}

/** The account behind a donor-page code (`/r/<code>`), active or not. */
export async function userByCode(db: Kysely<DB>, code: string): Promise<UserRow | undefined> {
  return repo.findUserByCode(db, code);
}

/** One page (1-based) of the administrators' user list; `search` matches part of e-mail, name or code. */
export async function searchUsers(db: Kysely<DB>, search: string, page: number, perPage: number): Promise<{ users: repo.UserListRow[]; total: number }> {
  const { rows, total } = await repo.searchUserRows(db, { search: search || undefined, limit: perPage, offset: (page - 1) * perPage });
  return { users: rows, total };
}
