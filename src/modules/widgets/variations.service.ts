import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { ConflictError, msg, NotFoundError, ValidationError, type FieldMessages, type Message } from '../../domain/errors.js';
import { AmountError, amountMessage, toMajor, toMinor } from '../../domain/money.js';
import { httpUrlProblem, urlMessage } from '../custom-alerts/custom-alerts.service.js';
import { checkMedia, deleteUnusedMedia, isVideo, mediaInfo, mediaPath, storeMedia, type MediaKind } from '../media/media.service.js';
import { localeOr } from '../../i18n/locales.js';
import { translator } from '../../i18n/translator.js';
import { enqueueEvent } from '../outbox/outbox.repository.js';
import * as repo from './variations.repository.js';
import {
  ALERT_TYPES, ANIMATIONS, FONTS, LAYOUTS, MEDIA_SOURCES,
  type AlertAnimation, type AlertFont, type AlertLayout, type AlertType, type AlertVariationRow, type MediaSource,
} from './widgets.table.js';

export { ALERT_TYPES, ANIMATIONS, FONTS, LAYOUTS, MEDIA_SOURCES };
export const ALERT_TYPE_LABELS: Record<AlertType, string> = { donation: 'Donations', custom: 'Custom alerts', 'merchandise-sale': 'Merchandise sales' };
export const LAYOUT_LABELS: Record<AlertLayout, string> = { 'image-above-text': 'Image above text', 'image-left': 'Image left of text', 'text-only': 'Text only' };

export const VARIATION_LIMITS = {
  name: 64, template: 255, url: 255, minDurationMs: 1000, maxDurationMs: 60_000, perUser: 50,
  minFontSize: 12, maxFontSize: 120, minTtsRate: 50, maxTtsRate: 200, ttsVoice: 100,
} as const;

/** The bundled image and sound (src/web/static, ours under the project licence: ALERT-ASSETS.md). */
export const DEFAULT_IMAGE = '/static/alert-default.svg';
export const DEFAULT_SOUND = '/static/alert-default.wav';

/**
 * Placeholders a text template may use; the widget fills them in as plain text, in the streamer's
 * language: `{money}` is the amount with its currency (`1 234,50 ₽`), `{amount}` the number alone.
 * New variations start from the default template of the streamer's language (catalog
 * `widget.template.*`).
 */
export const TEMPLATE_PLACEHOLDERS = ['{username}', '{money}', '{amount}', '{currency}', '{message}', '{header}', '{bought_amount}'] as const;

/** A file in the request, as the upload reader kept it. */
export interface UploadedFile {
  data: Buffer;
}

/**
 * Raw form or JSON input; every field is checked here. Absent optional fields take their
 * defaults (a form without the newer fields keeps working); present ones must be valid.
 */
export interface VariationInput {
  type?: unknown;
  name?: unknown;
  /** Major units of the streamer's main currency; ignored (0) for custom alerts. */
  minAmount?: unknown;
  durationMs?: unknown;
  layout?: unknown;
  textTemplate?: unknown;
  /** none | default | url | upload; absent: `url` when a URL is given, else none. */
  imageSource?: unknown;
  soundSource?: unknown;
  /** '' or absent: none. */
  soundUrl?: unknown;
  imageUrl?: unknown;
  /** A new upload; with source `upload` it replaces the current file. */
  imageFile?: UploadedFile | null;
  soundFile?: UploadedFile | null;
  soundVolume?: unknown;
  enterAnimation?: unknown;
  exitAnimation?: unknown;
  fontFamily?: unknown;
  fontSize?: unknown;
  titleColor?: unknown;
  messageColor?: unknown;
  ttsEnabled?: unknown;
  ttsVoice?: unknown;
  ttsRate?: unknown;
  ttsVolume?: unknown;
  /** Major units, like minAmount. */
  ttsMinAmount?: unknown;
  enabled?: unknown;
}

/** How the widget shows an image: a picture or a muted looping video. */
export interface ResolvedImage {
  src: string;
  video: boolean;
}

/**
 * What pages and the widget read: the row without owner and timestamps, amounts in major units,
 * plus `image` and `sound` resolved to what the widget loads (null: none).
 */
export type VariationView = Omit<AlertVariationRow, 'user_id' | 'created_at' | 'updated_at'> & { image: ResolvedImage | null; sound: string | null };

type MediaMap = Map<number, { sha256: string; content_type: string }>;

export function toVariationView(row: AlertVariationRow, media: MediaMap = new Map()): VariationView {
  const { user_id: _u, created_at: _c, updated_at: _up, ...rest } = row;
  const uploaded = (id: number | null) => (id === null ? undefined : media.get(id));
  let image: ResolvedImage | null = null;
  if (row.image_source === 'default') image = { src: DEFAULT_IMAGE, video: false };
  else if (row.image_source === 'url' && row.image_url) image = { src: row.image_url, video: false };
  else if (row.image_source === 'upload') {
    const file = uploaded(row.image_media_id);
    if (file) image = { src: mediaPath(file.sha256, file.content_type), video: isVideo(file.content_type) };
  }
  let sound: string | null = null;
  if (row.sound_source === 'default') sound = DEFAULT_SOUND;
  else if (row.sound_source === 'url' && row.sound_url) sound = row.sound_url;
  else if (row.sound_source === 'upload') {
    const file = uploaded(row.sound_media_id);
    if (file) sound = mediaPath(file.sha256, file.content_type);
  }
  return { ...rest, min_amount: toMajor(row.min_amount), tts_min_amount: toMajor(row.tts_min_amount), image, sound };
}

async function viewsOf(db: Kysely<DB>, rows: AlertVariationRow[]): Promise<VariationView[]> {
  const ids = rows.flatMap((r) => [r.image_media_id, r.sound_media_id]).filter((id): id is number => id !== null);
  const media = await mediaInfo(db, [...new Set(ids)]);
  return rows.map((r) => toVariationView(r, media));
}

const text = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');
const flag = (v: unknown): 0 | 1 => (v === undefined || v === null || v === '' || v === '0' || v === 0 || v === false || v === 'false' ? 0 : 1);

/** Checked fields, plus the files to store (the media ids are filled in by the caller's transaction). */
interface Checked {
  fields: Omit<repo.VariationFields, 'image_media_id' | 'sound_media_id'>;
  files: Partial<Record<MediaKind, { data: Buffer; contentType: string }>>;
}

/** How messages name the form's fields ("The sound volume (%) must be …"), in the reader's language. */
const LABELS = {
  min_amount: msg('err.label.min_amount'),
  tts_min_amount: msg('err.label.tts_min_amount'),
  duration_ms: msg('err.label.duration_ms'),
  sound_volume: msg('err.label.sound_volume'),
  font_size: msg('err.label.font_size'),
  tts_rate: msg('err.label.tts_rate'),
  tts_volume: msg('err.label.tts_volume'),
  layout: msg('err.label.layout'),
  image_source: msg('err.label.image_source'),
  sound_source: msg('err.label.sound_source'),
  enter_animation: msg('err.label.enter_animation'),
  exit_animation: msg('err.label.exit_animation'),
  font_family: msg('err.label.font_family'),
  image_url: msg('err.label.image_url'),
  sound_url: msg('err.label.sound_url'),
  title_color: msg('err.label.title_color'),
  message_color: msg('err.label.message_color'),
} satisfies Record<string, Message>;
type LabelledField = keyof typeof LABELS;

async function check(input: VariationInput, maxBytes: number): Promise<Checked> {
  const errors: FieldMessages = {};
  const type = text(input.type) as AlertType;
  if (!ALERT_TYPES.includes(type)) errors.type = [msg('err.field.one_of', { label: msg('err.label.type'), list: ALERT_TYPES.join(', ') })];

  const name = text(input.name);
  if (!name) errors.name = [msg('err.field.required', { field: msg('err.label.title_name') })];
  else if ([...name].length > VARIATION_LIMITS.name) errors.name = [msg('err.field.max_chars_short', { label: msg('err.label.title_name'), max: VARIATION_LIMITS.name })];

  const amount = (field: 'min_amount' | 'tts_min_amount', value: unknown): number => {
    const raw = text(value);
    if (type === 'custom' || raw === '') return 0;
    try {
      return toMinor(raw);
    } catch (err) {
      if (!(err instanceof AmountError)) throw err;
      errors[field] = [amountMessage(LABELS[field], err.problem)];
      return 0;
    }
  };
  const minAmount = amount('min_amount', input.minAmount);

  /** A whole number in [min, max]; absent takes `fallback`. */
  const whole = (field: LabelledField, value: unknown, min: number, max: number, fallback?: number): number => {
    const raw = text(value);
    if (raw === '' && fallback !== undefined) return fallback;
    const n = Number(raw);
    if (!/^-?\d{1,9}$/.test(raw) || n < min || n > max) errors[field] = [msg('err.field.whole_between', { label: LABELS[field], min, max })];
    return n;
  };
  const durationMs = whole('duration_ms', input.durationMs, VARIATION_LIMITS.minDurationMs, VARIATION_LIMITS.maxDurationMs);

  const oneOf = <T extends string>(field: LabelledField, value: unknown, allowed: readonly T[], fallback?: T): T => {
    const raw = text(value);
    if (raw === '' && fallback !== undefined) return fallback;
    if (!allowed.includes(raw as T)) errors[field] = [msg('err.field.one_of', { label: LABELS[field], list: allowed.join(', ') })];
    return raw as T;
  };
  const layout = oneOf<AlertLayout>('layout', input.layout, LAYOUTS);

  const template = text(input.textTemplate);
  if (!template) errors.text_template = [msg('err.variation.template_required')];
  else if ([...template].length > VARIATION_LIMITS.template) errors.text_template = [msg('err.variation.template_too_long', { max: VARIATION_LIMITS.template })];

  const url = (field: 'sound_url' | 'image_url', value: unknown, required: boolean): string | null => {
    const v = text(value);
    if (!v) {
      if (required) errors[field] = [msg('err.variation.url_required', { label: LABELS[field] })];
      return null;
    }
    if ([...v].length > VARIATION_LIMITS.url) errors[field] = [msg('err.field.max_chars_short', { label: LABELS[field], max: VARIATION_LIMITS.url })];
    else {
      const problem = httpUrlProblem(v);
      if (problem) errors[field] = [urlMessage(LABELS[field], problem)];
    }
    return v;
  };
  const imageSource = oneOf<MediaSource>('image_source', input.imageSource, MEDIA_SOURCES, text(input.imageUrl) ? 'url' : 'none');
  const soundSource = oneOf<MediaSource>('sound_source', input.soundSource, MEDIA_SOURCES, text(input.soundUrl) ? 'url' : 'none');
  const imageUrl = url('image_url', input.imageUrl, imageSource === 'url');
  const soundUrl = url('sound_url', input.soundUrl, soundSource === 'url');

  const files: Checked['files'] = {};
  for (const [kind, file, field] of [['image', input.imageFile, 'image_file'], ['sound', input.soundFile, 'sound_file']] as const) {
    if (!file) continue;
    try {
      files[kind] = { data: file.data, ...(await checkMedia(kind, field, file.data, maxBytes)) };
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(errors, err.fields);
    }
  }

  const color = (field: 'title_color' | 'message_color', value: unknown, fallback: string): string => {
    const raw = text(value);
    if (raw === '') return fallback;
    if (!/^#[0-9a-fA-F]{6}$/.test(raw)) errors[field] = [msg('err.variation.colour', { label: LABELS[field] })];
    return raw.toLowerCase();
  };
  const ttsVoice = text(input.ttsVoice);
  if ([...ttsVoice].length > VARIATION_LIMITS.ttsVoice) errors.tts_voice = [msg('err.field.max_chars_short', { label: msg('err.label.tts_voice'), max: VARIATION_LIMITS.ttsVoice })];

  const fields = {
    type, name, min_amount: minAmount, duration_ms: durationMs, layout, text_template: template,
    image_source: imageSource, image_url: imageUrl, sound_source: soundSource, sound_url: soundUrl,
    sound_volume: whole('sound_volume', input.soundVolume, 0, 100, 80),
    enter_animation: oneOf<AlertAnimation>('enter_animation', input.enterAnimation, ANIMATIONS, 'fade'),
    exit_animation: oneOf<AlertAnimation>('exit_animation', input.exitAnimation, ANIMATIONS, 'fade'),
    font_family: oneOf<AlertFont>('font_family', input.fontFamily, FONTS, 'system'),
    font_size: whole('font_size', input.fontSize, VARIATION_LIMITS.minFontSize, VARIATION_LIMITS.maxFontSize, 28),
    title_color: color('title_color', input.titleColor, '#ffd54a'),
    message_color: color('message_color', input.messageColor, '#ffffff'),
    tts_enabled: flag(input.ttsEnabled),
    tts_voice: ttsVoice,
    tts_rate: whole('tts_rate', input.ttsRate, VARIATION_LIMITS.minTtsRate, VARIATION_LIMITS.maxTtsRate, 100),
    tts_volume: whole('tts_volume', input.ttsVolume, 0, 100, 100),
    tts_min_amount: amount('tts_min_amount', input.ttsMinAmount),
    enabled: flag(input.enabled),
  };
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return { fields, files };
}

/** The media ids a checked input ends with: a new upload, the current file, or none. */
async function mediaIds(tx: Kysely<DB>, userId: number, checked: Checked, current?: AlertVariationRow): Promise<Pick<repo.VariationFields, 'image_media_id' | 'sound_media_id'>> {
  const ids = { image_media_id: null as number | null, sound_media_id: null as number | null };
  const errors: FieldMessages = {};
  for (const kind of ['image', 'sound'] as const) {
    const source = kind === 'image' ? checked.fields.image_source : checked.fields.sound_source;
    const key = kind === 'image' ? 'image_media_id' : 'sound_media_id';
    if (source !== 'upload') continue;
    const file = checked.files[kind];
    if (file) ids[key] = await storeMedia(tx, userId, file.data, file.contentType);
    else if (current?.[key]) ids[key] = current[key];
    else errors[`${kind}_file`] = [msg('err.variation.choose_file', { kind })];
  }
  if (Object.keys(errors).length) throw new ValidationError(errors);
  return ids;
}

/** Tells open widgets the streamer's variations changed, in the writing transaction (they switch at once). */
async function announceChange(tx: Kysely<DB>, userId: number): Promise<void> {
  await enqueueEvent(tx, { type: 'widget.settings_changed', userId, payload: { event: 'settings_changed', variations: await listVariations(tx, userId) } });
}

export async function listVariations(db: Kysely<DB>, userId: number): Promise<VariationView[]> {
  return viewsOf(db, await repo.listVariationRows(db, userId));
}

/** One of the streamer's variations, else 404 — never another streamer's. */
export async function getVariation(db: Kysely<DB>, userId: number, id: number): Promise<VariationView> {
  const row = await repo.findVariation(db, userId, id);
  if (!row) throw new NotFoundError(msg('err.variation.not_found'));
  return (await viewsOf(db, [row]))[0]!;
}

/** `maxBytes`: the largest upload (config.mediaMaxBytes). */
export async function createVariation(db: Kysely<DB>, userId: number, input: VariationInput, maxBytes = Infinity): Promise<VariationView> {
  const checked = await check(input, maxBytes);
  const row = await db.transaction().execute(async (tx) => {
    if ((await repo.countVariations(tx, userId)) >= VARIATION_LIMITS.perUser) throw new ConflictError(msg('err.variation.too_many', { max: VARIATION_LIMITS.perUser }));
    const inserted = await repo.insertVariation(tx, userId, { ...checked.fields, ...(await mediaIds(tx, userId, checked)) });
    await announceChange(tx, userId);
    return inserted;
  });
  return (await viewsOf(db, [row]))[0]!;
}

export async function updateVariation(db: Kysely<DB>, userId: number, id: number, input: VariationInput, maxBytes = Infinity): Promise<VariationView> {
  const checked = await check(input, maxBytes);
  const row = await db.transaction().execute(async (tx) => {
    const current = await repo.findVariation(tx, userId, id);
    if (!current) throw new NotFoundError(msg('err.variation.not_found'));
    const updated = await repo.updateVariationRow(tx, userId, id, { ...checked.fields, ...(await mediaIds(tx, userId, checked, current)) });
    await deleteUnusedMedia(tx, userId);
    await announceChange(tx, userId);
    return updated!;
  });
  return (await viewsOf(db, [row]))[0]!;
}

export async function deleteVariation(db: Kysely<DB>, userId: number, id: number): Promise<void> {
  await db.transaction().execute(async (tx) => {
    if (!(await repo.deleteVariationRow(tx, userId, id))) throw new NotFoundError(msg('err.variation.not_found'));
    await deleteUnusedMedia(tx, userId);
    await announceChange(tx, userId);
  });
}

/**
 * What a new account starts with (issue 15): enabled donation and merchandise-sale variations with
 * the bundled image and sound, so the widget shows alerts before the streamer opens its settings.
 * No custom-alerts variation: spec §1 shows custom alerts only once the streamer adds one.
 * Names and templates are the catalog's, in the streamer's language.
 */
export async function insertDefaultVariations(tx: Kysely<DB>, userId: number, language: string): Promise<void> {
  const t = await translator(localeOr(language));
  const keep = { username: '{username}', money: '{money}', header: '{header}', bought_amount: '{bought_amount}' };
  const texts = {
    donation: { name: t.t('widgets.type.donation'), template: t.t('widget.template.donation', keep) },
    'merchandise-sale': { name: t.t('widgets.type.merchandise_sale'), template: t.t('widget.template.merchandise_sale', keep) },
  };
  for (const type of ['donation', 'merchandise-sale'] as const) {
    await repo.insertVariation(tx, userId, {
      type, name: texts[type].name, min_amount: 0, duration_ms: 8000, layout: 'image-above-text', text_template: texts[type].template,
      image_source: 'default', image_url: null, image_media_id: null, sound_source: 'default', sound_url: null, sound_media_id: null, enabled: 1,
    });
  }
}
