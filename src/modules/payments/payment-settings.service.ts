import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { msg, ValidationError, type FieldMessages } from '../../domain/errors.js';
import type { StreamerProviderId } from '../../domain/payment-providers.js';
import { decryptSecret, encryptSecret } from '../../security/crypto.js';
import { generateWebhookSecret } from '../../security/standard-webhooks.js';
import * as repo from './payments.repository.js';

/**
 * A streamer's own settings of one provider. Credentials per provider:
 * - yoomoney: `wallet` (the YooMoney wallet number money goes to), `notification_secret` (from
 *   YooMoney's HTTP-notification settings; checks each notification's sha1_hash);
 * - kofi: `verification_token` (Ko-fi → Webhooks → Advanced), `page_url` (shown to donors);
 * - signed: `secret` (whsec_…, generated here; signs requests to the signed intake);
 * - stripe: none (the instance's Stripe account takes the money; Stripe Connect is not supported).
 */
export interface ProviderSetting {
  enabled: boolean;
  credentials: Readonly<Record<string, string>>;
}

export type StreamerSettings = ReadonlyMap<StreamerProviderId, ProviderSetting>;

function unseal(key: Buffer, sealed: string | null): Record<string, string> {
  if (!sealed) return {};
  return JSON.parse(decryptSecret(key, sealed)) as Record<string, string>;
}

export async function streamerPaymentSettings(db: Kysely<DB>, key: Buffer, userId: number): Promise<StreamerSettings> {
  const rows = await repo.settingsOf(db, userId);
  return new Map(rows.map((row) => [row.provider, { enabled: row.enabled === 1, credentials: unseal(key, row.credentials_sealed) }]));
}

export async function streamerPaymentSetting(db: Kysely<DB>, key: Buffer, userId: number, provider: StreamerProviderId): Promise<ProviderSetting | null> {
  const row = await repo.settingOf(db, userId, provider);
  return row ? { enabled: row.enabled === 1, credentials: unseal(key, row.credentials_sealed) } : null;
}

const YOOMONEY_WALLET = /^41\d{9,18}$/;

/** The credentials a provider needs before it can be turned on, checked; errors name the field. */
function checkedCredentials(provider: StreamerProviderId, enabled: boolean, input: Record<string, string>, current: Readonly<Record<string, string>>): Record<string, string> {
  const errors: FieldMessages = {};
  const value = (name: string) => (input[name] ?? '').trim();
  let credentials: Record<string, string> = {};
  if (provider === 'yoomoney') {
    const wallet = value('wallet').replace(/\s+/g, '');
    // A blank secret field keeps the stored one: the page never shows a secret back.
    const secret = value('notification_secret') || current.notification_secret || '';
    if (wallet && !YOOMONEY_WALLET.test(wallet)) errors.wallet = [msg('err.payments.yoomoney_wallet_format')];
    if (secret.length > 200) errors.notification_secret = [msg('err.payments.yoomoney_secret_long')];
    if (enabled && !wallet) errors.wallet = [msg('err.payments.yoomoney_wallet_required')];
    if (enabled && !secret) errors.notification_secret = [msg('err.payments.yoomoney_secret_required')];
    credentials = { wallet, notification_secret: secret };
  } else if (provider === 'kofi') {
    const token = value('verification_token') || current.verification_token || '';
    const pageUrl = value('page_url');
    if (token.length > 200) errors.verification_token = [msg('err.payments.kofi_token_long')];
    if (pageUrl && !/^https:\/\/ko-fi\.com\/[A-Za-z0-9_]{1,64}\/?$/.test(pageUrl)) errors.page_url = [msg('err.payments.kofi_page_url')];
    if (enabled && !token) errors.verification_token = [msg('err.payments.kofi_token_required')];
    credentials = { verification_token: token, page_url: pageUrl };
  } else if (provider === 'signed') {
    credentials = { secret: current.secret || generateWebhookSecret() };
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return credentials;
}

/** Saves whether the provider is on and the streamer's credentials for it (sealed at rest). */
export async function savePaymentSetting(
  db: Kysely<DB>, key: Buffer, userId: number, provider: StreamerProviderId, input: { enabled: boolean; credentials: Record<string, string> },
): Promise<ProviderSetting> {
  const current = (await streamerPaymentSetting(db, key, userId, provider))?.credentials ?? {};
  const credentials = checkedCredentials(provider, input.enabled, input.credentials, current);
  const sealed = Object.keys(credentials).length ? encryptSecret(key, JSON.stringify(credentials)) : null;
  await repo.saveSetting(db, { user_id: userId, provider, enabled: input.enabled ? 1 : 0, credentials_sealed: sealed, updated_at: Date.now() });
  return { enabled: input.enabled, credentials };
}

/** A new signing secret for the signed intake; the old one stops working at once. */
export async function rotateSigningSecret(db: Kysely<DB>, key: Buffer, userId: number): Promise<string> {
  const current = await streamerPaymentSetting(db, key, userId, 'signed');
  const secret = generateWebhookSecret();
  await repo.saveSetting(db, {
    user_id: userId, provider: 'signed', enabled: current?.enabled ? 1 : 0, credentials_sealed: encryptSecret(key, JSON.stringify({ secret })), updated_at: Date.now(),
  });
  return secret;
}
