import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { formatDateTime } from '../../domain/datetime.js';
import { msg, NotFoundError, ValidationError, type FieldMessages } from '../../domain/errors.js';
import { toCustomAlertResource } from '../custom-alerts/custom-alerts.resource.js';
import { toDonationResource } from '../donations/donations.resource.js';
import { alertableDonations } from '../moderation/moderation.service.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import { toSaleAlertResource } from '../sales/sales.resource.js';
import { SALE_REASON } from '../sales/sales.service.js';
import { markAlertShown, unshownAlertRows } from './alerts.repository.js';
import { ALERT_TYPES, type VariationView } from './variations.service.js';
import type { AlertType } from './widgets.table.js';

/**
 * What the alerts widget reads, in the shape of the `$widget:alerts_<user_id>` payloads: the
 * resource plus `name` (the alert type) and `reason`. Reasons: `default` (donation), `custom`,
 * `merchandise-sale`, and `test` for the dashboard's "Send test alert" (never stored).
 */
export type WidgetAlert = Record<string, unknown> & { id: number | string; name: AlertType; reason: string };

export function isAlertType(value: unknown): value is AlertType {
  return typeof value === 'string' && (ALERT_TYPES as readonly string[]).includes(value);
}

/**
 * Marks one of the streamer's alerts as displayed (spec §3: is_shown 1, shown_at set). Idempotent:
 * the first call sets `shown_at`, later ones keep it. Someone else's alert, or an unknown one, is
 * a 404 — it never tells whether the id exists for another streamer.
 */
export async function markShown(db: Kysely<DB>, userId: number, type: unknown, id: unknown): Promise<{ type: AlertType; id: number; is_shown: 1; shown_at: string }> {
  const errors: FieldMessages = {};
  if (!isAlertType(type)) errors.type = [msg('err.field.one_of', { label: 'type', list: ALERT_TYPES.join(', ') })];
  const alertId = typeof id === 'string' && /^\d{1,15}$/.test(id) ? Number(id) : id;
  if (!(typeof alertId === 'number' && Number.isSafeInteger(alertId) && alertId > 0)) errors.id = [msg('err.alert.id')];
  if (Object.keys(errors).length) throw new ValidationError(errors);
  const now = Date.now();
  return db.transaction().execute(async (tx) => {
    const row = await markAlertShown(tx, type as AlertType, userId, alertId as number, now);
    if (!row) throw new NotFoundError(msg('err.alert.not_found'));
    // A custom alert created with is_shown=1 has its creation time as shown_at.
    const shown = { type: type as AlertType, id: alertId as number, is_shown: 1 as const, shown_at: formatDateTime(row.shown_at ?? now) };
    // Only the call that marked it records `alert.shown` (webhooks); repeats change nothing, even
    // within the same millisecond (comparing shown_at with this call's clock once let one through).
    if (row.marked) await enqueueEvent(tx, { type: 'alert.shown', userId, payload: shown });
    return shown;
  });
}

/** How far back the widget catches up on alerts it has not shown (it was closed meanwhile). */
export const UNSHOWN_WINDOW_MS = 24 * 3600_000;
const UNSHOWN_LIMIT = 50;

/** Alerts of the last `windowMs` not yet shown, oldest first, as the widget channel carries them. */
export async function unshownAlerts(db: Kysely<DB>, user: { id: number; name: string }, windowMs = UNSHOWN_WINDOW_MS, now = Date.now()): Promise<WidgetAlert[]> {
  const rows = await unshownAlertRows(db, user.id, now - windowMs, UNSHOWN_LIMIT);
  const { customs, sales } = rows;
  // Held, rejected and still delayed alerts stay off the widget; the others show moderated text.
  const donations = await alertableDonations(db, user.id, rows.donations, now);
  const all: { at: number; alert: WidgetAlert }[] = [
    ...donations.map((r) => ({ at: r.created_at, alert: { ...toDonationResource(r, user.name), reason: 'default' } as WidgetAlert })),
    ...customs.map((r) => ({ at: r.created_at, alert: { ...toCustomAlertResource(r), name: 'custom', reason: 'custom' } as WidgetAlert })),
    ...sales.map((r) => ({ at: r.created_at, alert: { ...toSaleAlertResource(r), reason: SALE_REASON } as WidgetAlert })),
  ];
  all.sort((a, b) => a.at - b.at);
  return all.slice(-UNSHOWN_LIMIT).map((a) => a.alert);
}

/**
 * "Send test alert": queues an alert for the streamer's widget through the outbox, like a real
 * one, but stores nothing else — no donation, no balance, goal or poll change. It carries
 * `is_test: 1`, a `test-…` id and the variation to show (`variation_id`); the widget never marks
 * it shown.
 */
/** What a test alert says, in the streamer's language (the dashboard passes its own). */
export interface TestAlertTexts {
  donor: string;
  customer: string;
  header: string;
  message: string;
}

const ENGLISH_TEST_TEXTS: TestAlertTexts = { donor: 'Test donor', customer: 'Test customer', header: 'Test custom alert', message: 'This is a test alert from your dashboard.' };

export async function sendTestAlert(db: Kysely<DB>, user: { id: number; name: string; currency: string }, variation: VariationView, texts: TestAlertTexts = ENGLISH_TEST_TEXTS): Promise<WidgetAlert> {
  const alert = testAlertFor(user, variation, texts);
  await db.transaction().execute((tx) => enqueueEvent(tx, { type: 'widget.test_alert', userId: user.id, payload: alert }));
  return alert;
}

/** A test alert of the variation's type and amount (also what the settings page's preview shows). */
export function testAlertFor(user: { name: string; currency: string }, variation: Pick<VariationView, 'id' | 'type' | 'min_amount'>, texts: TestAlertTexts = ENGLISH_TEST_TEXTS): WidgetAlert {
  const now = Date.now();
  const amount = Math.max(variation.min_amount, 1);
  const common = { id: `test-${randomUUID()}`, is_test: 1, variation_id: variation.id, is_shown: 0, created_at: formatDateTime(now), shown_at: null, reason: 'test' };
  let alert: WidgetAlert;
  if (variation.type === 'donation') {
    alert = {
      ...common, name: 'donation', username: texts.donor, recipient_name: user.name, message_type: 'text',
      message: texts.message, payin_system: null, amount, currency: user.currency, amount_in_user_currency: amount,
    };
  } else if (variation.type === 'custom') {
    alert = { ...common, name: 'custom', external_id: null, header: texts.header, message: texts.message, image_url: null, sound_url: null };
  } else {
    alert = { ...common, name: 'merchandise-sale', external_id: 'test', username: texts.customer, message: texts.message, amount, currency: user.currency, bought_amount: 1 };
  }
  return alert;
}
