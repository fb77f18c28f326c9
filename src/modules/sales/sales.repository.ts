import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { MerchandiseRow } from '../merchandise/merchandise.table.js';
import type { NewSaleRow, SaleRow } from './sales.table.js';

/** What a sale depends on, as one look-up found it; null where nothing matched. */
export interface SaleContext {
  merchant: { id: number; appId: number };
  merchandise: Pick<MerchandiseRow, 'id' | 'is_active' | 'end_at' | 'is_percentage' | 'price_user' | 'price_service' | 'currency'> | null;
  user: { id: number; currency: string; is_active: number } | null;
  /** An earlier sale of this merchant with the same external_id (INTEROP §3 idempotency). */
  earlier: SaleRow | null;
}

/**
 * Merchant (by identifier), its merchandise, the streamer and an earlier sale with this external_id
 * in one round trip — the hot path of bench/sales.ts. Undefined when the merchant does not exist.
 */
export async function findSaleContext(
  db: Kysely<DB>,
  keys: { merchantIdentifier: string; merchandiseIdentifier: string; userId: number; externalId: string },
): Promise<SaleContext | undefined> {
  const found = await db
    .selectFrom('merchants')
    .leftJoin('merchandise', (join) => join.onRef('merchandise.merchant_id', '=', 'merchants.id').on('merchandise.identifier', '=', keys.merchandiseIdentifier))
    .leftJoin('users', (join) => join.on('users.id', '=', keys.userId))
    .leftJoin('merchandise_sales', (join) => join.onRef('merchandise_sales.merchant_id', '=', 'merchants.id').on('merchandise_sales.external_id', '=', keys.externalId))
    .select(['merchants.id as merchantId', 'merchants.app_id as appId', 'users.id as userId', 'users.currency as userCurrency', 'users.is_active as userActive'])
    .select(['merchandise.id', 'merchandise.is_active', 'merchandise.end_at', 'merchandise.is_percentage', 'merchandise.price_user', 'merchandise.price_service', 'merchandise.currency'])
    .select([
      'merchandise_sales.id as saleId',
      'merchandise_sales.merchandise_id as saleMerchandiseId',
      'merchandise_sales.user_id as saleUserId',
      'merchandise_sales.amount as saleAmount',
      'merchandise_sales.currency as saleCurrency',
      'merchandise_sales.bought_amount as saleBoughtAmount',
      'merchandise_sales.username as saleUsername',
      'merchandise_sales.message as saleMessage',
      'merchandise_sales.is_shown as saleIsShown',
      'merchandise_sales.created_at as saleCreatedAt',
      'merchandise_sales.shown_at as saleShownAt',
    ])
    .where('merchants.identifier', '=', keys.merchantIdentifier)
    .executeTakeFirst();
  if (!found) return undefined;
  return {
    merchant: { id: found.merchantId, appId: found.appId },
    merchandise:
      found.id === null
        ? null
        : { id: found.id, is_active: found.is_active!, end_at: found.end_at, is_percentage: found.is_percentage!, price_user: found.price_user!, price_service: found.price_service!, currency: found.currency! },
    user: found.userId === null ? null : { id: found.userId, currency: found.userCurrency!, is_active: found.userActive! },
    earlier:
      found.saleId === null
        ? null
        : {
            id: found.saleId,
            merchant_id: found.merchantId,
            merchandise_id: found.saleMerchandiseId!,
            user_id: found.saleUserId!,
            external_id: keys.externalId,
            amount: found.saleAmount!,
            currency: found.saleCurrency!,
            bought_amount: found.saleBoughtAmount!,
            username: found.saleUsername,
            message: found.saleMessage,
            is_shown: found.saleIsShown!,
            created_at: found.saleCreatedAt!,
            shown_at: found.saleShownAt,
          },
  };
}

export async function insertSale(db: Kysely<DB>, row: NewSaleRow): Promise<SaleRow> {
  return db.insertInto('merchandise_sales').values(row).returningAll().executeTakeFirstOrThrow();
}
