import type { Kysely } from 'kysely';
import { isUniqueViolation } from '../../db/dialect.js';
import type { DB } from '../../db/schema.js';
import { ForbiddenError, msg, NotFoundError, ValidationError, type FieldMessages } from '../../domain/errors.js';
import { callerMerchant } from '../merchants/merchant-auth.js';
import { findMerchantById } from '../merchants/merchants.repository.js';
import type { MerchantRow } from '../merchants/merchants.table.js';
import { HUNDRED_PERCENT, type MerchandiseInput } from './merchandise.input.js';
import { findMerchandiseById, findMerchandiseByIdentifier, insertMerchandise, updateMerchandiseRow } from './merchandise.repository.js';
import { toMerchandiseResource, type MerchandiseResource } from './merchandise.resource.js';
import type { MerchandiseRow, MerchandiseUpdate } from './merchandise.table.js';

const TAKEN = () => ValidationError.field('merchandise_identifier', msg('err.field.taken', { field: 'merchandise_identifier' }));

/** Percentages cannot exceed 100 — checked on the resulting record, since 4.5 may change only the flag. */
function checkPercentages(row: Pick<MerchandiseRow, 'is_percentage' | 'price_user' | 'price_service'>): void {
  if (!row.is_percentage) return;
  const errors: FieldMessages = {};
  for (const field of ['price_user', 'price_service'] as const) {
    if (row[field] > HUNDRED_PERCENT) errors[field] = [msg('err.merchandise.percent_over_100', { field })];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
}

function changesFrom(input: MerchandiseInput): MerchandiseUpdate {
  const changes: MerchandiseUpdate = {};
  if (input.identifier !== undefined) changes.identifier = input.identifier;
  if (input.title !== undefined) changes.title = JSON.stringify(input.title);
  if (input.isActive !== undefined) changes.is_active = input.isActive;
  if (input.isPercentage !== undefined) changes.is_percentage = input.isPercentage;
  if (input.currency !== undefined) changes.currency = input.currency;
  if (input.priceUser !== undefined) changes.price_user = input.priceUser;
  if (input.priceService !== undefined) changes.price_service = input.priceService;
  if (input.url !== undefined) changes.url = input.url;
  if (input.imgUrl !== undefined) changes.img_url = input.imgUrl;
  if (input.endAt !== undefined) changes.end_at = input.endAt;
  return changes;
}

async function insertNew(db: Kysely<DB>, merchant: MerchantRow, identifier: string, input: MerchandiseInput): Promise<MerchandiseRow> {
  const now = Date.now();
  const row = {
    merchant_id: merchant.id,
    identifier,
    title: JSON.stringify(input.title),
    is_active: input.isActive ?? 0, // spec §3: default 0 at creation
    is_percentage: input.isPercentage ?? 0,
    currency: input.currency!,
    price_user: input.priceUser!,
    price_service: input.priceService!,
    url: input.url ?? null,
    img_url: input.imgUrl ?? null,
    end_at: input.endAt ?? null,
    created_at: now,
    updated_at: now,
  };
  checkPercentages(row);
  return insertMerchandise(db, row);
}

/** 4.4: creates merchandise for one of the caller's merchants. */
export async function createMerchandise(db: Kysely<DB>, clientId: number, input: MerchandiseInput): Promise<MerchandiseResource> {
  const merchant = await callerMerchant(db, clientId, input.merchantIdentifier!);
  if (await findMerchandiseByIdentifier(db, merchant.id, input.identifier!)) throw TAKEN();
  try {
    return toMerchandiseResource(await insertNew(db, merchant, input.identifier!, input), merchant);
  } catch (err) {
    if (isUniqueViolation(err)) throw TAKEN();
    throw err;
  }
}

/** 4.5: partial update by the service's id; may move it to another of the caller's merchants. */
export async function updateMerchandise(db: Kysely<DB>, clientId: number, id: number, input: MerchandiseInput): Promise<MerchandiseResource> {
  const row = Number.isSafeInteger(id) && id > 0 ? await findMerchandiseById(db, id) : undefined;
  if (!row) throw new NotFoundError(msg('err.merchandise.not_found', { id }));
  const owner = await findMerchantById(db, row.merchant_id);
  if (!owner || owner.app_id !== clientId) throw new ForbiddenError(msg('err.merchandise.not_yours'));
  const merchant = input.merchantIdentifier !== undefined ? await callerMerchant(db, clientId, input.merchantIdentifier) : owner;
  const changes = changesFrom(input);
  if (merchant.id !== owner.id) changes.merchant_id = merchant.id;
  checkPercentages({ ...row, ...changes } as MerchandiseRow);
  const identifier = changes.identifier ?? row.identifier;
  if (merchant.id !== row.merchant_id || identifier !== row.identifier) {
    const clash = await findMerchandiseByIdentifier(db, merchant.id, identifier as string);
    if (clash && clash.id !== row.id) throw TAKEN();
  }
  try {
    const updated = await updateMerchandiseRow(db, row.id, { ...changes, updated_at: Date.now() });
    return toMerchandiseResource(updated, merchant);
  } catch (err) {
    if (isUniqueViolation(err)) throw TAKEN();
    throw err;
  }
}

/**
 * 4.6: updates the merchant's merchandise with this identifier, or creates it (compatibility.md §3: `created`
 * tells the route to answer 201 rather than 200). A concurrent create of the same identifier meets
 * the unique constraint and is retried as an update.
 */
export async function upsertMerchandise(
  db: Kysely<DB>,
  clientId: number,
  merchantIdentifier: string,
  identifier: string,
  input: MerchandiseInput,
): Promise<{ resource: MerchandiseResource; created: boolean }> {
  const merchant = await callerMerchant(db, clientId, merchantIdentifier);
  for (let attempt = 0; ; attempt++) {
    try {
      return await db.transaction().execute(async (tx) => {
        const existing = await findMerchandiseByIdentifier(tx, merchant.id, identifier);
        if (!existing) return { resource: toMerchandiseResource(await insertNew(tx, merchant, identifier, input), merchant), created: true };
        const changes = changesFrom(input);
        checkPercentages({ ...existing, ...changes } as MerchandiseRow);
        const updated = await updateMerchandiseRow(tx, existing.id, { ...changes, updated_at: Date.now() });
        return { resource: toMerchandiseResource(updated, merchant), created: false };
      });
    } catch (err) {
      if (attempt === 0 && isUniqueViolation(err)) continue;
      throw err;
    }
  }
}
