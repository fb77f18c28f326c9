import type { Generated, Selectable } from 'kysely';

/** An OAuth client. Its id is the public integer client_id (spec 5.3). */
export interface AppsTable {
  id: Generated<number>;
  owner_id: number;
  name: string;
  /** client_secret sealed with the service key (AES-256-GCM): merchandise signatures need it back. */
  secret_sealed: string;
  /** JSON array of exact redirect URIs. */
  redirect_uris: string;
  /** Granted by an administrator; lets the app call the Merchandise API. */
  merchandise_access: number;
  created_at: number;
  updated_at: number;
}

export interface AppTables {
  apps: AppsTable;
}

export type AppRow = Selectable<AppsTable>;
