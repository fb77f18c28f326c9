import type { Kysely } from 'kysely';

/**
 * - oauth_public_clients: applications that cannot keep a secret (browser or mobile apps). They
 *   authenticate with client_id alone and must use PKCE for the code grant (RFC 7636, RFC 9700
 *   §2.1.1). Every application is confidential unless listed here.
 * - oauth_codes.redirect_uri_given: whether the authorization request carried redirect_uri; if it
 *   did, the token request must repeat it exactly (RFC 6749 §4.1.3).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('oauth_public_clients')
    .addColumn('client_id', 'bigint', (c) => c.primaryKey().references('apps.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.alterTable('oauth_codes').addColumn('redirect_uri_given', 'integer', (c) => c.notNull().defaultTo(1)).execute();
  await db.schema.createIndex('oauth_codes_expires').on('oauth_codes').column('expires_at').execute();
  await db.schema.createIndex('oauth_codes_user_client').on('oauth_codes').columns(['user_id', 'client_id']).execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('oauth_codes_user_client').execute();
  await db.schema.dropIndex('oauth_codes_expires').execute();
  await db.schema.alterTable('oauth_codes').dropColumn('redirect_uri_given').execute();
  await db.schema.dropTable('oauth_public_clients').execute();
}
