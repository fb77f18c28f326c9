import { formatDateTime, formatNullableDateTime } from '../../domain/datetime.js';
import { toMajor } from '../../domain/money.js';
import type { SaleRow } from './sales.table.js';

/** Spec §2 "Merchandise sale alert". */
export interface SaleAlertResource {
  id: number;
  name: 'merchandise-sale';
  external_id: string;
  username: string | null;
  message: string | null;
  amount: number;
  currency: string;
  bought_amount: number;
  is_shown: number;
  created_at: string;
  shown_at: string | null;
}

export function toSaleAlertResource(row: SaleRow): SaleAlertResource {
  return {
    id: row.id,
    name: 'merchandise-sale',
    external_id: row.external_id,
    username: row.username,
    message: row.message,
    amount: toMajor(row.amount),
    currency: row.currency,
    bought_amount: row.bought_amount,
    is_shown: row.is_shown,
    created_at: formatDateTime(row.created_at),
    shown_at: formatNullableDateTime(row.shown_at),
  };
}
