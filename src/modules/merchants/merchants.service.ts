import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { formatDateTime } from '../../domain/datetime.js';
import { msg, NotFoundError, ValidationError, type FieldMessages } from '../../domain/errors.js';
import { findApp } from '../apps/apps.service.js';
import { findMerchantByIdentifier, insertMerchant, listAppsMerchandiseAccess, listMerchants } from './merchants.repository.js';
import type { MerchantRow } from './merchants.table.js';

/** What the CLI prints and the admin page lists. */
export interface MerchantView {
  id: number;
  client_id: number;
  identifier: string;
  name: string;
  created_at: string;
}

export const MERCHANT_LIMITS = { identifier: 32, name: 100 } as const;
// Sent in every merchandise request (form fields, paths of 4.6): keep it URL- and form-safe.
const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

export function toMerchantView(row: MerchantRow): MerchantView {
  return { id: row.id, client_id: row.app_id, identifier: row.identifier, name: row.name, created_at: formatDateTime(row.created_at) };
}

/**
 * Creates a merchant of an application (administrators: CLI, /admin/merchants). The application
 * still needs Merchandise API access (`setMerchandiseAccess`) before its calls are accepted.
 */
export async function createMerchant(db: Kysely<DB>, input: { clientId: number; identifier: string; name: string }): Promise<MerchantView> {
  const identifier = (input.identifier ?? '').trim();
  const name = (input.name ?? '').trim();
  const errors: FieldMessages = {};
  if (!identifier) errors.identifier = [msg('err.field.required', { field: msg('err.label.identifier') })];
  else if (identifier.length > MERCHANT_LIMITS.identifier) errors.identifier = [msg('err.field.max_chars_short', { label: msg('err.label.identifier'), max: MERCHANT_LIMITS.identifier })];
  else if (!IDENTIFIER.test(identifier)) errors.identifier = [msg('err.merchant.identifier_rule')];
  if (!name) errors.name = [msg('err.field.required', { field: msg('err.label.title_name') })];
  else if (name.length > MERCHANT_LIMITS.name) errors.name = [msg('err.field.max_chars_short', { label: msg('err.label.title_name'), max: MERCHANT_LIMITS.name })];
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const app = await findApp(db, input.clientId);
  if (!app) throw new NotFoundError(msg('err.app.not_found', { id: input.clientId }));
  if (await findMerchantByIdentifier(db, identifier)) throw ValidationError.field('identifier', msg('err.field.taken', { field: msg('err.label.identifier') }));
  try {
    return toMerchantView(await insertMerchant(db, { app_id: app.id, identifier, name }));
  } catch (err) {
    if (isUniqueViolation(err, 'identifier')) throw ValidationError.field('identifier', msg('err.field.taken', { field: msg('err.label.identifier') }));
    throw err;
  }
}

export async function listMerchantViews(db: Kysely<DB>, clientId?: number): Promise<MerchantView[]> {
  return (await listMerchants(db, clientId)).map(toMerchantView);
}

/** Every application with its Merchandise API access flag (administrators' page). */
export async function listAppsWithAccess(db: Kysely<DB>): Promise<Array<{ client_id: number; name: string; owner_id: number; merchandise_access: number }>> {
  const rows = await listAppsMerchandiseAccess(db);
  return rows.map((r) => ({ client_id: r.id, name: r.name, owner_id: r.owner_id, merchandise_access: r.merchandise_access }));
}
