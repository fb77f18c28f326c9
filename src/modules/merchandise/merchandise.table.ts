import type { Generated, Insertable, Selectable, Updateable } from 'kysely';

/** Spec §2 "Merchandise". */
export interface MerchandiseTable {
  id: Generated<number>;
  merchant_id: number;
  /** The merchant's own id (`merchandise_identifier`); unique per merchant, at most 16 characters. */
  identifier: string;
  /** JSON object: locale → title (en_US always present). */
  title: string;
  /** As set by the merchant; the effective value is 0 once `end_at` has passed. */
  is_active: number;
  is_percentage: number;
  currency: string;
  /** Minor units of `currency` per item, or hundredths of a percent when is_percentage = 1. */
  price_user: number;
  price_service: number;
  /** Kept exactly as sent, `{user_id}` / `{user_merchandise_promocode}` patterns included. */
  url: string | null;
  img_url: string | null;
  /** Epoch ms; null when unset. */
  end_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface MerchandiseTables {
  merchandise: MerchandiseTable;
}

export type MerchandiseRow = Selectable<MerchandiseTable>;
export type NewMerchandiseRow = Insertable<MerchandiseTable>;
export type MerchandiseUpdate = Updateable<MerchandiseTable>;
