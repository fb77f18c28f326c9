import type { Generated, Selectable } from 'kysely';

/** A merchant of the Merchandise API; belongs to exactly one application (compatibility.md §3). */
export interface MerchantsTable {
  id: Generated<number>;
  /** The owning OAuth client (apps.id). */
  app_id: number;
  /** `merchant_identifier` in requests; unique across the service. */
  identifier: string;
  name: string;
  created_at: number;
  updated_at: number;
}

export interface MerchantTables {
  merchants: MerchantsTable;
}

export type MerchantRow = Selectable<MerchantsTable>;
