import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Times are epoch milliseconds (bigint) in both dialects; formatted only at the edge. */
export interface UsersTable {
  id: Generated<number>;
  /** Lower-cased; unique. */
  email: string;
  password_hash: string;
  /** Unique, URL-safe, lower-case; may change when the user renames. */
  code: string;
  /** Unique displayed name. */
  name: string;
  /** lower(name), so uniqueness ignores case on both dialects. */
  name_key: string;
  /** Null means the generated default avatar. */
  avatar: string | null;
  language: string;
  /** Main currency (spec output currencies). */
  currency: string;
  is_active: number;
  role: 'admin' | 'streamer';
  /** Unique advertising promocode for merchandise (upper-case). */
  merchandise_promocode: string;
  created_at: number;
  updated_at: number;
}

export interface SessionsTable {
  /** SHA-256 of the cookie value. */
  id_hash: string;
  user_id: number;
  created_at: number;
  expires_at: number;
}

export interface AccountTables {
  users: UsersTable;
  sessions: SessionsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUserRow = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
