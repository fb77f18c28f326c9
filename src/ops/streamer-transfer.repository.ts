import type { Insertable, Kysely, Selectable } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * The rows that make up one streamer, read and written whole for `openalerts export` / `import`.
 * Rows are plain column maps: the transfer carries every column as stored.
 */
export type Row<T extends keyof DB> = Selectable<DB[T]>;

export interface StreamerRows {
  user: Row<'users'>;
  apps: Row<'apps'>[];
  publicClients: Row<'oauth_public_clients'>[];
  donations: Row<'donations'>[];
  goals: Row<'goals'>[];
  polls: Row<'polls'>[];
  pollOptions: Row<'poll_options'>[];
  widgetToken: Row<'widget_tokens'> | null;
  variations: Row<'alert_variations'>[];
  moderationSettings: Row<'moderation_settings'> | null;
  donationModeration: Row<'donation_moderation'>[];
  media: Row<'alert_media'>[];
  paymentSettings: Row<'payment_settings'>[];
  providerPayments: Row<'provider_payments'>[];
  milestones: Row<'onboarding_milestones'>[];
}

export async function readStreamerRows(db: Kysely<DB>, userId: number): Promise<StreamerRows | null> {
  const user = await db.selectFrom('users').selectAll().where('id', '=', userId).executeTakeFirst();
  if (!user) return null;
  const apps = await db.selectFrom('apps').selectAll().where('owner_id', '=', userId).orderBy('id').execute();
  const appIds = apps.map((a) => a.id);
  const polls = await db.selectFrom('polls').selectAll().where('user_id', '=', userId).orderBy('id').execute();
  const pollIds = polls.map((p) => p.id);
  return {
    user,
    apps,
    publicClients: appIds.length ? await db.selectFrom('oauth_public_clients').selectAll().where('client_id', 'in', appIds).orderBy('client_id').execute() : [],
    donations: await db.selectFrom('donations').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    goals: await db.selectFrom('goals').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    polls,
    pollOptions: pollIds.length ? await db.selectFrom('poll_options').selectAll().where('poll_id', 'in', pollIds).orderBy('id').execute() : [],
    widgetToken: (await db.selectFrom('widget_tokens').selectAll().where('user_id', '=', userId).executeTakeFirst()) ?? null,
    variations: await db.selectFrom('alert_variations').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    moderationSettings: (await db.selectFrom('moderation_settings').selectAll().where('user_id', '=', userId).executeTakeFirst()) ?? null,
    donationModeration: await db.selectFrom('donation_moderation').selectAll().where('user_id', '=', userId).orderBy('donation_id').execute(),
    media: await db.selectFrom('alert_media').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    paymentSettings: await db.selectFrom('payment_settings').selectAll().where('user_id', '=', userId).orderBy('provider').execute(),
    providerPayments: await db.selectFrom('provider_payments').selectAll().where('user_id', '=', userId).orderBy('id').execute(),
    milestones: await db.selectFrom('onboarding_milestones').selectAll().where('user_id', '=', userId).orderBy('milestone').execute(),
  };
}

/** Which of the streamer's unique identifiers are already taken on this instance. */
export async function takenIdentity(db: Kysely<DB>, user: { email: string; code: string; name_key: string; merchandise_promocode: string }): Promise<string[]> {
  const taken: string[] = [];
  const match = await db
    .selectFrom('users')
    .select(['email', 'code', 'name_key', 'merchandise_promocode'])
    .where((eb) => eb.or([eb('email', '=', user.email), eb('code', '=', user.code), eb('name_key', '=', user.name_key), eb('merchandise_promocode', '=', user.merchandise_promocode)]))
    .execute();
  for (const row of match) {
    if (row.email === user.email) taken.push(`e-mail ${user.email}`);
    if (row.code === user.code) taken.push(`code ${user.code}`);
    if (row.name_key === user.name_key) taken.push(`name ${user.name_key}`);
    if (row.merchandise_promocode === user.merchandise_promocode) taken.push(`promocode ${user.merchandise_promocode}`);
  }
  return [...new Set(taken)];
}

export async function widgetTokenHashTaken(db: Kysely<DB>, hash: string): Promise<boolean> {
  return (await db.selectFrom('widget_tokens').select('user_id').where('token_hash', '=', hash).executeTakeFirst()) !== undefined;
}

type NoId<T extends keyof DB> = Omit<Insertable<DB[T]>, 'id'>;

export async function insertUser(tx: Kysely<DB>, row: NoId<'users'>): Promise<number> {
  return (await tx.insertInto('users').values(row).returning('id').executeTakeFirstOrThrow()).id;
}
export async function insertApp(tx: Kysely<DB>, row: NoId<'apps'>): Promise<number> {
  return (await tx.insertInto('apps').values(row).returning('id').executeTakeFirstOrThrow()).id;
}
export async function insertPublicClient(tx: Kysely<DB>, row: Insertable<DB['oauth_public_clients']>): Promise<void> {
  await tx.insertInto('oauth_public_clients').values(row).execute();
}
export async function insertPoll(tx: Kysely<DB>, row: NoId<'polls'>): Promise<number> {
  return (await tx.insertInto('polls').values(row).returning('id').executeTakeFirstOrThrow()).id;
}
export async function insertPollOption(tx: Kysely<DB>, row: NoId<'poll_options'>): Promise<number> {
  return (await tx.insertInto('poll_options').values(row).returning('id').executeTakeFirstOrThrow()).id;
}
export async function insertGoal(tx: Kysely<DB>, row: NoId<'goals'>): Promise<void> {
  await tx.insertInto('goals').values(row).execute();
}
export async function insertDonation(tx: Kysely<DB>, row: NoId<'donations'>): Promise<number> {
  const { id } = await tx.insertInto('donations').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}
export async function insertModerationSettings(tx: Kysely<DB>, row: Insertable<DB['moderation_settings']>): Promise<void> {
  await tx.insertInto('moderation_settings').values(row).execute();
}
export async function insertDonationModeration(tx: Kysely<DB>, row: Insertable<DB['donation_moderation']>): Promise<void> {
  await tx.insertInto('donation_moderation').values(row).execute();
}
export async function insertWidgetToken(tx: Kysely<DB>, row: Insertable<DB['widget_tokens']>): Promise<void> {
  await tx.insertInto('widget_tokens').values(row).execute();
}
export async function insertVariation(tx: Kysely<DB>, row: NoId<'alert_variations'>): Promise<void> {
  await tx.insertInto('alert_variations').values(row).execute();
}
export async function insertMedia(tx: Kysely<DB>, row: NoId<'alert_media'>): Promise<number> {
  return (await tx.insertInto('alert_media').values(row).returning('id').executeTakeFirstOrThrow()).id;
}
export async function insertPaymentSetting(tx: Kysely<DB>, row: Insertable<DB['payment_settings']>): Promise<void> {
  await tx.insertInto('payment_settings').values(row).execute();
}
export async function insertProviderPayment(tx: Kysely<DB>, row: NoId<'provider_payments'>): Promise<void> {
  await tx.insertInto('provider_payments').values(row).execute();
}
export async function insertMilestone(tx: Kysely<DB>, row: Insertable<DB['onboarding_milestones']>): Promise<void> {
  await tx.insertInto('onboarding_milestones').values(row).execute();
}
