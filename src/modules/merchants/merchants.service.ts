import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { formatDateTime } from '../../domain/datetime.js';
import { NotFoundError, ValidationError } from '../../domain/errors.js';
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
  const errors: Record<string, string[]> = {};
  if (!identifier) errors.identifier = ['The identifier field is required.'];
  else if (identifier.length > MERCHANT_LIMITS.identifier) errors.identifier = [`The identifier must not be greater than ${MERCHANT_LIMITS.identifier} characters.`];
  else if (!IDENTIFIER.test(identifier)) errors.identifier = ['The identifier may contain only letters, digits, dots, dashes and underscores, starting with a letter or digit.'];
  if (!name) errors.name = ['The name field is required.'];
  else if (name.length > MERCHANT_LIMITS.name) errors.name = [`The name must not be greater than ${MERCHANT_LIMITS.name} characters.`];
  if (Object.keys(errors).length) throw new ValidationError(errors);

  const app = await findApp(db, input.clientId);
  if (!app) throw new NotFoundError(`No application with client_id ${input.clientId}.`);
  if (await findMerchantByIdentifier(db, identifier)) throw ValidationError.field('identifier', 'The identifier has already been taken.');
  try {
    return toMerchantView(await insertMerchant(db, { app_id: app.id, identifier, name }));
  } catch (err) {
    if (isUniqueViolation(err, 'identifier')) throw ValidationError.field('identifier', 'The identifier has already been taken.');
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
