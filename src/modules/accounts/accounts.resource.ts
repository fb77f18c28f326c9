import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { formatDateTime } from '../../domain/datetime.js';
import { balanceOf } from '../balances/balances.service.js';
import type { UserRow } from './accounts.table.js';

/** Spec §2 "User profile" plus the compatibility.md §2 extras (`is_active`, `language`). */
export interface UserProfileResource {
  id: number;
  code: string;
  name: string;
  avatar: string;
  email: string;
  is_active: number;
  language: string;
  socket_connection_token: string;
}

export function avatarUrl(publicUrl: string, user: Pick<UserRow, 'id' | 'avatar'>): string {
  return user.avatar ?? `${publicUrl}/avatars/${user.id}.svg`;
}

export function toProfileResource(user: UserRow, publicUrl: string, socketConnectionToken: string): UserProfileResource {
  return {
    id: user.id,
    code: user.code,
    name: user.name,
    avatar: avatarUrl(publicUrl, user),
    email: user.email,
    is_active: user.is_active,
    language: user.language,
    socket_connection_token: socketConnectionToken,
  };
}

/** What `openalerts user create|show` prints. Later features add their figures (balance). */
export async function toUserSummary(db: Kysely<DB>, user: UserRow): Promise<Record<string, unknown>> {
  return {
    id: user.id,
    email: user.email,
    code: user.code,
    name: user.name,
    role: user.role,
    is_active: user.is_active,
    language: user.language,
    currency: user.currency,
    merchandise_promocode: user.merchandise_promocode,
    balance: await balanceOf(db, user.id),
    created_at: formatDateTime(user.created_at),
  };
}
