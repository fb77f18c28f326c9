import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { msg, NotFoundError, ValidationError, type FieldMessages, type Message } from '../../domain/errors.js';
import { decryptSecret, encryptSecret, randomToken } from '../../security/crypto.js';
import type { Revocations } from '../../security/revocations.js';
import * as repo from './apps.repository.js';
import type { AppRow } from './apps.table.js';

export interface NewApp {
  ownerId: number;
  name: string;
  redirectUris: string[];
}

export interface AppView {
  client_id: number;
  name: string;
  owner_id: number;
  redirect_uris: string[];
  merchandise_access: number;
  created_at: number;
}

const MAX_REDIRECT_URIS = 10;

/**
 * RFC 6749 §3.1.2: absolute, no fragment. RFC 9700 §2.1 (exact matching) is enforced at
 * authorization time; here we refuse what can never be safe to redirect to.
 */
export function redirectUriProblem(uri: string): Message | null {
  let parsed: URL;
  try {
    parsed = new URL(uri);
  } catch {
    return msg('err.app.uri_not_absolute', { uri });
  }
  if (parsed.hash || uri.includes('#')) return msg('err.app.uri_fragment', { uri });
  if (['javascript:', 'data:', 'vbscript:', 'file:'].includes(parsed.protocol)) return msg('err.app.uri_scheme', { uri });
  if (uri.length > 2000) return msg('err.app.uri_too_long', { max: 2000 });
  return null;
}

function validate(name: string, redirectUris: string[]): FieldMessages {
  const errors: FieldMessages = {};
  const trimmed = name.trim();
  if (!trimmed) errors.name = [msg('err.field.required', { field: msg('err.label.title_name') })];
  else if (trimmed.length > 100) errors.name = [msg('err.field.max_chars_short', { label: msg('err.label.title_name'), max: 100 })];
  const uris = redirectUris.map((u) => u.trim()).filter(Boolean);
  if (uris.length === 0) errors.redirect_uris = [msg('err.app.uri_required')];
  else if (uris.length > MAX_REDIRECT_URIS) errors.redirect_uris = [msg('err.app.too_many_uris', { max: MAX_REDIRECT_URIS })];
  else {
    const problems = uris.map(redirectUriProblem).filter((p): p is Message => p !== null);
    if (problems.length) errors.redirect_uris = problems;
  }
  return errors;
}

/** The stored form of redirect URIs: a JSON array, trimmed, blanks and repeats dropped. */
function redirectUrisColumn(redirectUris: string[]): string {
  return JSON.stringify([...new Set(redirectUris.map((u) => u.trim()).filter(Boolean))]);
}

export function toAppView(row: AppRow): AppView {
  return {
    client_id: row.id,
    name: row.name,
    owner_id: row.owner_id,
    redirect_uris: JSON.parse(row.redirect_uris) as string[],
    merchandise_access: row.merchandise_access,
    created_at: row.created_at,
  };
}

/** The plaintext secret is returned once, here; afterwards only its sealed form exists. */
export async function createApp(db: Kysely<DB>, key: Buffer, input: NewApp): Promise<{ app: AppView; clientSecret: string }> {
  const errors = validate(input.name, input.redirectUris);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const clientSecret = randomToken(30);
  const now = Date.now();
  const row = await repo.insertApp(db, {
    owner_id: input.ownerId,
    name: input.name.trim(),
    secret_sealed: encryptSecret(key, clientSecret),
    redirect_uris: redirectUrisColumn(input.redirectUris),
    merchandise_access: 0,
    created_at: now,
    updated_at: now,
  });
  return { app: toAppView(row), clientSecret };
}

export async function findApp(db: Kysely<DB>, clientId: number): Promise<AppRow | undefined> {
  if (!Number.isSafeInteger(clientId) || clientId <= 0) return undefined;
  return repo.findAppById(db, clientId);
}

export async function listOwnApps(db: Kysely<DB>, ownerId: number): Promise<AppView[]> {
  const rows = await repo.listAppsOfOwner(db, ownerId);
  return rows.map(toAppView);
}

async function ownedApp(db: Kysely<DB>, ownerId: number, clientId: number): Promise<AppRow> {
  const app = await findApp(db, clientId);
  if (!app || app.owner_id !== ownerId) throw new NotFoundError(msg('err.app.not_yours'));
  return app;
}

export async function rotateSecret(db: Kysely<DB>, key: Buffer, ownerId: number, clientId: number): Promise<string> {
  await ownedApp(db, ownerId, clientId);
  const clientSecret = randomToken(30);
  await repo.updateApp(db, clientId, { secret_sealed: encryptSecret(key, clientSecret) });
  return clientSecret;
}

export async function updateRedirectUris(db: Kysely<DB>, ownerId: number, clientId: number, name: string, redirectUris: string[]): Promise<void> {
  await ownedApp(db, ownerId, clientId);
  const errors = validate(name, redirectUris);
  if (Object.keys(errors).length) throw new ValidationError(errors);
  await repo.updateApp(db, clientId, { name: name.trim(), redirect_uris: redirectUrisColumn(redirectUris) });
}

/**
 * Deleting an app cascades to everything issued to it (tokens, grants) through foreign keys; once
 * deleted, every node forgets its cached token checks and closes the sockets of its real-time tokens.
 */
export async function deleteApp(db: Kysely<DB>, revocations: Revocations, ownerId: number, clientId: number): Promise<void> {
  await ownedApp(db, ownerId, clientId);
  await repo.deleteAppRow(db, clientId);
  revocations.announce({ kind: 'client', clientId });
}

export function appSecret(key: Buffer, app: AppRow): string {
  return decryptSecret(key, app.secret_sealed);
}

export async function setMerchandiseAccess(db: Kysely<DB>, clientId: number, granted: boolean): Promise<void> {
  if (!(await repo.updateApp(db, clientId, { merchandise_access: granted ? 1 : 0 }))) throw new NotFoundError(msg('err.app.not_found', { id: clientId }));
}
