import { formatNullableDateTime } from '../../domain/datetime.js';
import { toMajor } from '../../domain/money.js';
import type { MerchantRow } from '../merchants/merchants.table.js';
import type { MerchandiseRow } from './merchandise.table.js';

/**
 * Spec §2 "Merchandise": the row as the API shows it — the merchant inlined, `title` parsed, prices in
 * major units, `end_at` formatted; `is_active` the effective value.
 */
export type MerchandiseResource = Omit<MerchandiseRow, 'merchant_id' | 'title' | 'end_at' | 'created_at' | 'updated_at'> & {
  merchant: Pick<MerchantRow, 'identifier' | 'name'>;
  title: Record<string, string>;
  end_at: string | null;
};

/** Spec §3: `end_at` marks when merchandise becomes inactive — from then on it is inactive everywhere. */
export function isMerchandiseActive(row: Pick<MerchandiseRow, 'is_active' | 'end_at'>, now = Date.now()): boolean {
  return row.is_active === 1 && (row.end_at === null || row.end_at > now);
}

export function toMerchandiseResource(row: MerchandiseRow, merchant: Pick<MerchantRow, 'identifier' | 'name'>, now = Date.now()): MerchandiseResource {
  return {
    id: row.id,
    merchant: { identifier: merchant.identifier, name: merchant.name },
    identifier: row.identifier,
    title: JSON.parse(row.title) as Record<string, string>,
    is_active: isMerchandiseActive(row, now) ? 1 : 0,
    is_percentage: row.is_percentage,
    currency: row.currency,
    price_user: toMajor(row.price_user),
    price_service: toMajor(row.price_service),
    url: row.url,
    img_url: row.img_url,
    end_at: formatNullableDateTime(row.end_at),
  };
}
