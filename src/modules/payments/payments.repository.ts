import type { Insertable, Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type {
  PaymentSettingsRow, PendingDonationRow, PendingDonationsTable, ProviderId, ProviderPaymentRow, StreamerProviderId,
} from './payments.table.js';

export async function settingsOf(db: Kysely<DB>, userId: number): Promise<PaymentSettingsRow[]> {
  return db.selectFrom('payment_settings').selectAll().where('user_id', '=', userId).execute();
}

export async function settingOf(db: Kysely<DB>, userId: number, provider: StreamerProviderId): Promise<PaymentSettingsRow | undefined> {
  return db.selectFrom('payment_settings').selectAll().where('user_id', '=', userId).where('provider', '=', provider).executeTakeFirst();
}

export async function saveSetting(db: Kysely<DB>, row: PaymentSettingsRow): Promise<void> {
  await db
    .insertInto('payment_settings')
    .values(row)
    .onConflict((oc) => oc.columns(['user_id', 'provider']).doUpdateSet({ enabled: row.enabled, credentials_sealed: row.credentials_sealed, updated_at: row.updated_at }))
    .execute();
}

export async function insertPending(db: Kysely<DB>, row: Insertable<PendingDonationsTable>): Promise<PendingDonationRow> {
  return db.insertInto('pending_donations').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function setCheckoutId(db: Kysely<DB>, id: number, checkoutId: string): Promise<void> {
  await db.updateTable('pending_donations').set({ checkout_id: checkoutId }).where('id', '=', id).execute();
}

export async function pendingByRef(db: Kysely<DB>, ref: string): Promise<PendingDonationRow | undefined> {
  return db.selectFrom('pending_donations').selectAll().where('ref', '=', ref).executeTakeFirst();
}

/** Deletes pending donations created before `before` that no payment recorded; returns how many. */
export async function deleteUnpaidPendingBefore(db: Kysely<DB>, before: number): Promise<number> {
  const result = await db.deleteFrom('pending_donations').where('donation_id', 'is', null).where('created_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Marks the pending donation paid by its first recorded donation; later payments leave it as it is. */
export async function markPendingRecorded(db: Kysely<DB>, id: number, donationId: number): Promise<void> {
  await db.updateTable('pending_donations').set({ donation_id: donationId }).where('id', '=', id).where('donation_id', 'is', null).execute();
}

/**
 * Claims a provider payment id: inserts its row, or does nothing when it is already there. True
 * when this call claimed it. Two concurrent claims of one id meet at the unique constraint
 * (migration 0017): the second waits for the first transaction and then claims nothing.
 */
export async function claimPayment(
  db: Kysely<DB>, row: { provider: ProviderId; payment_id: string; user_id: number; pending_id: number | null; fingerprint: string | null; created_at: number },
): Promise<boolean> {
  const inserted = await db
    .insertInto('provider_payments')
    .values(row)
    .onConflict((oc) => oc.columns(['provider', 'payment_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

export async function setPaymentDonation(db: Kysely<DB>, provider: ProviderId, paymentId: string, donationId: number): Promise<void> {
  await db.updateTable('provider_payments').set({ donation_id: donationId }).where('provider', '=', provider).where('payment_id', '=', paymentId).execute();
}

export async function paymentOf(db: Kysely<DB>, provider: ProviderId, paymentId: string): Promise<ProviderPaymentRow | undefined> {
  return db.selectFrom('provider_payments').selectAll().where('provider', '=', provider).where('payment_id', '=', paymentId).executeTakeFirst();
}
