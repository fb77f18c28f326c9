import type { Generated, Insertable, Selectable } from 'kysely';

/** Spec §2 "Merchandise sale alert"; one row per reported sale. */
export interface MerchandiseSalesTable {
  id: Generated<number>;
  merchant_id: number;
  merchandise_id: number;
  /** The streamer credited. */
  user_id: number;
  /** Unique per merchant (compatibility.md §3 idempotency); at most 32 characters. */
  external_id: string;
  /** Grand total, minor units of `currency`. */
  amount: number;
  currency: string;
  bought_amount: number;
  username: string | null;
  message: string | null;
  is_shown: number;
  created_at: number;
  shown_at: number | null;
}

export interface SaleTables {
  merchandise_sales: MerchandiseSalesTable;
}

export type SaleRow = Selectable<MerchandiseSalesTable>;
export type NewSaleRow = Insertable<MerchandiseSalesTable>;
