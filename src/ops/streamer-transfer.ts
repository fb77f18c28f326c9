import type { Kysely } from 'kysely';
import { BackupError } from '../db/backup-error.js';
import type { DB } from '../db/schema.js';
import { findUserByRef } from '../modules/accounts/accounts.service.js';
import { decryptSecret, encryptSecret, sha256Hex } from '../security/crypto.js';
import * as repo from './streamer-transfer.repository.js';
import type { Row } from './streamer-transfer.repository.js';

export const EXPORT_FORMAT = 'openalerts-streamer-export';
export const EXPORT_VERSION = 1;

/** An application with its secret in clear, and since when it is a public client (null: confidential). */
type AppExport = Omit<Row<'apps'>, 'secret_sealed'> & { client_secret: string; public_client_since: number | null };

/**
 * One streamer, moved between instances by `openalerts export` / `import`: the profile, the
 * applications they own (with their secrets, re-sealed on import under the receiving instance's
 * key), donations, goals, polls with their options, and widget settings (token and alert
 * variations, with the images and sounds they uploaded), moderation (the rules, and what the stream
 * was shown of each donation), payment settings (credentials in clear, re-sealed on import), the
 * provider payments already credited (so a notification the provider sends again after the move
 * still credits nothing twice) and the first-hour checklist. Every column of every row is carried
 * as stored; ids are the source's and are renumbered on import (the file keeps them only to link
 * rows). Not carried: sessions and OAuth grants (log in and authorize again), checkouts still
 * pending at a provider, webhook subscriptions (the application subscribes again), and history
 * shared with others (merchandise sales, custom alerts sent by other people's applications).
 */
export interface StreamerExport {
  format: typeof EXPORT_FORMAT;
  version: typeof EXPORT_VERSION;
  exported_at: string;
  user: Row<'users'>;
  apps: AppExport[];
  donations: Row<'donations'>[];
  goals: Row<'goals'>[];
  polls: Row<'polls'>[];
  poll_options: Row<'poll_options'>[];
  /** The widget token in clear (the OBS URLs keep working after the move), or null if never made. */
  widget_token: { token: string; created_at: number } | null;
  alert_variations: Row<'alert_variations'>[];
  /** Absent from exports made before moderation: no rules, donations shown as sent. */
  moderation_settings?: Row<'moderation_settings'> | null;
  donation_moderation?: Row<'donation_moderation'>[];
  /** Absent from exports made before these were carried (alert variations then fall back to the bundled defaults). */
  alert_media?: MediaExport[];
  payment_settings?: PaymentSettingExport[];
  provider_payments?: Row<'provider_payments'>[];
  onboarding_milestones?: Row<'onboarding_milestones'>[];
}

/** An uploaded file, its bytes in base64. */
type MediaExport = Omit<Row<'alert_media'>, 'data'> & { data_base64: string };
/** One provider's settings, credentials in clear (they are sealed under each instance's own key). */
type PaymentSettingExport = Omit<Row<'payment_settings'>, 'credentials_sealed'> & { credentials: string | null };

export async function exportStreamer(db: Kysely<DB>, key: Buffer, userRef: string): Promise<StreamerExport> {
  const user = await findUserByRef(db, userRef);
  const rows = (await repo.readStreamerRows(db, user.id))!;
  const publicSince = new Map(rows.publicClients.map((p) => [p.client_id, p.created_at]));
  return {
    format: EXPORT_FORMAT,
    version: EXPORT_VERSION,
    exported_at: new Date().toISOString(),
    user: rows.user,
    apps: rows.apps.map(({ secret_sealed, ...app }) => ({ ...app, client_secret: decryptSecret(key, secret_sealed), public_client_since: publicSince.get(app.id) ?? null })),
    donations: rows.donations,
    goals: rows.goals,
    polls: rows.polls,
    poll_options: rows.pollOptions,
    widget_token: rows.widgetToken ? { token: decryptSecret(key, rows.widgetToken.token_sealed), created_at: rows.widgetToken.created_at } : null,
    alert_variations: rows.variations,
    moderation_settings: rows.moderationSettings,
    donation_moderation: rows.donationModeration,
    alert_media: rows.media.map(({ data, ...media }) => ({ ...media, data_base64: Buffer.from(data).toString('base64') })),
    payment_settings: rows.paymentSettings.map(({ credentials_sealed, ...setting }) => ({ ...setting, credentials: credentials_sealed === null ? null : decryptSecret(key, credentials_sealed) })),
    provider_payments: rows.providerPayments,
    onboarding_milestones: rows.milestones,
  };
}

export interface ImportResult {
  user_id: number;
  /** Source user id → id here. */
  previous_user_id: number;
  /** Source client_id → client_id here, for the applications' developers. */
  client_ids: Record<string, number>;
  counts: { apps: number; donations: number; goals: number; polls: number; poll_options: number; alert_variations: number };
}

const SECTIONS = ['apps', 'donations', 'goals', 'polls', 'poll_options', 'alert_variations'] as const;

/** Checks the file's shape before anything is written; the database's own constraints check the rows. */
function parseExport(doc: unknown): StreamerExport {
  const d = doc as Partial<StreamerExport> | null;
  if (!d || typeof d !== 'object' || d.format !== EXPORT_FORMAT) throw new BackupError('This is not an OpenAlerts streamer export (made by `openalerts export`).');
  if (d.version !== EXPORT_VERSION) throw new BackupError(`This export has format version ${String(d.version)}; this OpenAlerts reads version ${EXPORT_VERSION}.`);
  if (!d.user || typeof d.user !== 'object' || typeof d.user.id !== 'number' || typeof d.user.email !== 'string') throw new BackupError('The export has no valid "user".');
  for (const section of SECTIONS) {
    const list = d[section];
    if (!Array.isArray(list) || list.some((row) => !row || typeof row !== 'object' || typeof (row as { id?: unknown }).id !== 'number')) {
      throw new BackupError(`The export's "${section}" is not a list of rows with ids.`);
    }
  }
  if (d.widget_token !== null && (typeof d.widget_token !== 'object' || typeof d.widget_token?.token !== 'string')) throw new BackupError('The export\'s "widget_token" is invalid.');
  if (d.apps!.some((a) => typeof a.client_secret !== 'string')) throw new BackupError('An application in the export has no client_secret.');
  if (d.moderation_settings !== undefined && d.moderation_settings !== null && typeof d.moderation_settings !== 'object') throw new BackupError('The export\'s "moderation_settings" is invalid.');
  if (d.donation_moderation !== undefined && (!Array.isArray(d.donation_moderation) || d.donation_moderation.some((row) => !row || typeof row !== 'object' || typeof row.donation_id !== 'number'))) {
    throw new BackupError('The export\'s "donation_moderation" is not a list of rows with donation ids.');
  }
  optionalRows(d.alert_media, 'alert_media', (m) => typeof m.id === 'number' && typeof m.data_base64 === 'string' && typeof m.sha256 === 'string');
  optionalRows(d.payment_settings, 'payment_settings', (p) => typeof p.provider === 'string' && (p.credentials === null || typeof p.credentials === 'string'));
  optionalRows(d.provider_payments, 'provider_payments', (p) => typeof p.id === 'number' && typeof p.payment_id === 'string');
  optionalRows(d.onboarding_milestones, 'onboarding_milestones', (m) => typeof m.milestone === 'string');
  return d as StreamerExport;
}

/** A section added after version 1 was first written: absent is fine, present must be a list of such rows. */
function optionalRows<T>(list: T[] | undefined, section: string, valid: (row: T) => boolean): void {
  if (list !== undefined && (!Array.isArray(list) || list.some((row) => !row || typeof row !== 'object' || !valid(row)))) {
    throw new BackupError(`The export's "${section}" is not a list of valid rows.`);
  }
}

const withoutId = <T extends { id: number }>({ id: _id, ...rest }: T): Omit<T, 'id'> => rest;

/** Creates the streamer of an export here, in one transaction: all of it or nothing. */
export async function importStreamer(db: Kysely<DB>, key: Buffer, doc: unknown): Promise<ImportResult> {
  const data = parseExport(doc);
  const taken = await repo.takenIdentity(db, data.user);
  if (taken.length) throw new BackupError(`This instance already has a user with the ${taken.join(', ')}; nothing was imported.`);
  if (data.widget_token && (await repo.widgetTokenHashTaken(db, sha256Hex(data.widget_token.token)))) {
    throw new BackupError('The widget token of this export is already in use here; nothing was imported.');
  }
  try {
    return await db.transaction().execute(async (tx) => {
      const userId = await repo.insertUser(tx, withoutId(data.user));
      const appIds = new Map<number, number>();
      for (const { client_secret, public_client_since, ...app } of data.apps) {
        const id = await repo.insertApp(tx, { ...withoutId(app), owner_id: userId, secret_sealed: encryptSecret(key, client_secret) });
        appIds.set(app.id, id);
        if (public_client_since !== null && public_client_since !== undefined) await repo.insertPublicClient(tx, { client_id: id, created_at: public_client_since });
      }
      const pollIds = new Map<number, number>();
      for (const poll of data.polls) pollIds.set(poll.id, await repo.insertPoll(tx, { ...withoutId(poll), user_id: userId }));
      const optionIds = new Map<number, number>();
      for (const option of data.poll_options) {
        const pollId = pollIds.get(option.poll_id);
        if (pollId === undefined) throw new BackupError(`Poll option ${option.id} belongs to poll ${option.poll_id}, which is not in the export.`);
        optionIds.set(option.id, await repo.insertPollOption(tx, { ...withoutId(option), poll_id: pollId }));
      }
      for (const goal of data.goals) await repo.insertGoal(tx, { ...withoutId(goal), user_id: userId });
      const donationIds = new Map<number, number>();
      for (const donation of data.donations) {
        const optionId = donation.poll_option_id === null ? null : optionIds.get(donation.poll_option_id);
        if (optionId === undefined) throw new BackupError(`Donation ${donation.id} voted for poll option ${donation.poll_option_id}, which is not in the export.`);
        donationIds.set(donation.id, await repo.insertDonation(tx, { ...withoutId(donation), user_id: userId, poll_option_id: optionId }));
      }
      if (data.moderation_settings) await repo.insertModerationSettings(tx, { ...data.moderation_settings, user_id: userId });
      for (const m of data.donation_moderation ?? []) {
        const donationId = donationIds.get(m.donation_id);
        if (donationId === undefined) throw new BackupError(`Moderation of donation ${m.donation_id}, which is not in the export.`);
        await repo.insertDonationModeration(tx, { ...m, donation_id: donationId, user_id: userId });
      }
      if (data.widget_token) {
        const token = data.widget_token.token;
        await repo.insertWidgetToken(tx, { user_id: userId, token_hash: sha256Hex(token), token_sealed: encryptSecret(key, token), created_at: data.widget_token.created_at });
      }
      const mediaIds = new Map<number, number>();
      for (const { data_base64, ...media } of data.alert_media ?? []) {
        mediaIds.set(media.id, await repo.insertMedia(tx, { ...withoutId(media), user_id: userId, data: Buffer.from(data_base64, 'base64') }));
      }
      for (const variation of data.alert_variations) await repo.insertVariation(tx, { ...withoutId(variation), user_id: userId, ...uploadsHere(variation, mediaIds) });
      for (const { credentials, ...setting } of data.payment_settings ?? []) {
        await repo.insertPaymentSetting(tx, { ...setting, user_id: userId, credentials_sealed: credentials === null ? null : encryptSecret(key, credentials) });
      }
      for (const payment of data.provider_payments ?? []) {
        const donationId = payment.donation_id === null ? null : donationIds.get(payment.donation_id);
        if (donationId === undefined) throw new BackupError(`Provider payment ${payment.id} credited donation ${payment.donation_id}, which is not in the export.`);
        // The checkout it came from stays behind (pending checkouts are not carried).
        await repo.insertProviderPayment(tx, { ...withoutId(payment), user_id: userId, donation_id: donationId, pending_id: null });
      }
      for (const milestone of data.onboarding_milestones ?? []) await repo.insertMilestone(tx, { ...milestone, user_id: userId });
      return {
        user_id: userId,
        previous_user_id: data.user.id,
        client_ids: Object.fromEntries([...appIds].map(([from, to]) => [String(from), to])),
        counts: {
          apps: data.apps.length,
          donations: data.donations.length,
          goals: data.goals.length,
          polls: data.polls.length,
          poll_options: data.poll_options.length,
          alert_variations: data.alert_variations.length,
        },
      };
    });
  } catch (err) {
    if (err instanceof BackupError) throw err;
    throw new BackupError(`The export does not fit this database (${(err as Error).message}); nothing was imported.`);
  }
}

/**
 * Points a variation at its uploaded files here. An export made before uploads were carried has no
 * files: such a variation falls back to the bundled defaults rather than to a file that is not here.
 */
function uploadsHere(v: Row<'alert_variations'>, mediaIds: ReadonlyMap<number, number>): Partial<Row<'alert_variations'>> {
  const image = v.image_media_id === null ? null : (mediaIds.get(v.image_media_id) ?? null);
  const sound = v.sound_media_id === null ? null : (mediaIds.get(v.sound_media_id) ?? null);
  return {
    image_media_id: image,
    sound_media_id: sound,
    ...(v.image_source === 'upload' && image === null ? { image_source: 'default' as const } : {}),
    ...(v.sound_source === 'upload' && sound === null ? { sound_source: 'default' as const } : {}),
  };
}
