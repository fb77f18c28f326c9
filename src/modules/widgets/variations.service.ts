import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ConflictError, NotFoundError, ValidationError } from '../../domain/errors.js';
import { AmountError, toMajor, toMinor } from '../../domain/money.js';
import { httpUrlProblem } from '../custom-alerts/custom-alerts.service.js';
import * as repo from './variations.repository.js';
import { ALERT_TYPES, LAYOUTS, type AlertLayout, type AlertType, type AlertVariationRow } from './widgets.table.js';

export { ALERT_TYPES, LAYOUTS };
export const ALERT_TYPE_LABELS: Record<AlertType, string> = { donation: 'Donations', custom: 'Custom alerts', 'merchandise-sale': 'Merchandise sales' };
export const LAYOUT_LABELS: Record<AlertLayout, string> = { 'image-above-text': 'Image above text', 'image-left': 'Image left of text', 'text-only': 'Text only' };

export const VARIATION_LIMITS = { name: 64, template: 255, url: 255, minDurationMs: 1000, maxDurationMs: 60_000, perUser: 50 } as const;

/**
 * Placeholders a text template may use; the widget fills them in as plain text, in the streamer's
 * language: `{money}` is the amount with its currency (`1 234,50 ₽`), `{amount}` the number alone.
 * New variations start from the default template of the streamer's language (catalog
 * `widget.template.*`).
 */
export const TEMPLATE_PLACEHOLDERS = ['{username}', '{money}', '{amount}', '{currency}', '{message}', '{header}', '{bought_amount}'] as const;

/** Raw form or JSON input; every field is checked here. */
export interface VariationInput {
  type?: unknown;
  name?: unknown;
  /** Major units of the streamer's main currency; ignored (0) for custom alerts. */
  minAmount?: unknown;
  durationMs?: unknown;
  layout?: unknown;
  textTemplate?: unknown;
  /** '' or absent: none. */
  soundUrl?: unknown;
  imageUrl?: unknown;
  enabled?: unknown;
}

/** What pages and the widget read: the row without owner and timestamps, `min_amount` in major units. */
export type VariationView = Omit<AlertVariationRow, 'user_id' | 'created_at' | 'updated_at'>;

export function toVariationView(row: AlertVariationRow): VariationView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    min_amount: toMajor(row.min_amount),
    duration_ms: row.duration_ms,
    layout: row.layout,
    text_template: row.text_template,
    sound_url: row.sound_url,
    image_url: row.image_url,
    enabled: row.enabled,
  };
}

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

function check(input: VariationInput): repo.VariationFields {
  const errors: Record<string, string[]> = {};
  const type = text(input.type) as AlertType;
  if (!ALERT_TYPES.includes(type)) errors.type = [`The type must be one of ${ALERT_TYPES.join(', ')}.`];

  const name = text(input.name);
  if (!name) errors.name = ['The name field is required.'];
  else if ([...name].length > VARIATION_LIMITS.name) errors.name = [`The name must not be greater than ${VARIATION_LIMITS.name} characters.`];

  let minAmount = 0;
  const rawMin = text(input.minAmount);
  if (type !== 'custom' && rawMin !== '') {
    try {
      minAmount = toMinor(rawMin);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      errors.min_amount = [`The minimum amount ${err.message}`];
    }
  }

  const durationText = text(input.durationMs);
  const durationMs = Number(durationText);
  if (!/^\d{1,6}$/.test(durationText) || durationMs < VARIATION_LIMITS.minDurationMs || durationMs > VARIATION_LIMITS.maxDurationMs) {
    errors.duration_ms = [`The duration must be a whole number of milliseconds from ${VARIATION_LIMITS.minDurationMs} to ${VARIATION_LIMITS.maxDurationMs}.`];
  }

  const layout = text(input.layout) as AlertLayout;
  if (!LAYOUTS.includes(layout)) errors.layout = [`The layout must be one of ${LAYOUTS.join(', ')}.`];

  const template = text(input.textTemplate);
  if (!template) errors.text_template = ['The text template field is required.'];
  else if ([...template].length > VARIATION_LIMITS.template) errors.text_template = [`The text template must not be greater than ${VARIATION_LIMITS.template} characters.`];

  const url = (field: 'sound_url' | 'image_url', value: unknown): string | null => {
    const v = text(value);
    if (!v) return null;
    if ([...v].length > VARIATION_LIMITS.url) errors[field] = [`The ${field.replace('_', ' ')} must not be greater than ${VARIATION_LIMITS.url} characters.`];
    else {
      const problem = httpUrlProblem(v);
      if (problem) errors[field] = [`The ${field.replace('_', ' ')} ${problem}.`];
    }
    return v;
  };
  const soundUrl = url('sound_url', input.soundUrl);
  const imageUrl = url('image_url', input.imageUrl);

  const e = input.enabled;
  const enabled = e === undefined || e === null || e === '' || e === '0' || e === 0 || e === false || e === 'false' ? 0 : 1;

  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { type, name, min_amount: minAmount, duration_ms: durationMs, layout, text_template: template, sound_url: soundUrl, image_url: imageUrl, enabled };
}

export async function listVariations(db: Kysely<DB>, userId: number): Promise<VariationView[]> {
  return (await repo.listVariationRows(db, userId)).map(toVariationView);
}

/** One of the streamer's variations, else 404 — never another streamer's. */
export async function getVariation(db: Kysely<DB>, userId: number, id: number): Promise<VariationView> {
  const row = await repo.findVariation(db, userId, id);
  if (!row) throw new NotFoundError('This alert variation does not exist.');
  return toVariationView(row);
}

export async function createVariation(db: Kysely<DB>, userId: number, input: VariationInput): Promise<VariationView> {
  const fields = check(input);
  return db.transaction().execute(async (tx) => {
    if ((await repo.countVariations(tx, userId)) >= VARIATION_LIMITS.perUser) throw new ConflictError(`You already have ${VARIATION_LIMITS.perUser} variations; delete one first.`);
    return toVariationView(await repo.insertVariation(tx, userId, fields));
  });
}

export async function updateVariation(db: Kysely<DB>, userId: number, id: number, input: VariationInput): Promise<VariationView> {
  const fields = check(input);
  const row = await repo.updateVariationRow(db, userId, id, fields);
  if (!row) throw new NotFoundError('This alert variation does not exist.');
  return toVariationView(row);
}

export async function deleteVariation(db: Kysely<DB>, userId: number, id: number): Promise<void> {
  if (!(await repo.deleteVariationRow(db, userId, id))) throw new NotFoundError('This alert variation does not exist.');
}
