/**
 * Versions of rarely changing data that caches check instead of re-reading it (migration 0015).
 * Triggers bump them in the writing transaction; application code only reads them.
 */
export interface ChangeVersionsTable {
  /** `merchant_auth`: any write to `apps` or `merchants`. */
  name: string;
  version: number;
}

export interface ChangeVersionTables {
  change_versions: ChangeVersionsTable;
}
