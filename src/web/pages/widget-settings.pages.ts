import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../domain/errors.js';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { formatBytes } from '../../modules/media/media.service.js';
import { recordMilestone } from '../../modules/onboarding/onboarding.service.js';
import { sendTestAlert, testAlertFor, type TestAlertTexts } from '../../modules/widgets/alerts.service.js';
import {
  ALERT_TYPES, ANIMATIONS, createVariation, DEFAULT_IMAGE, DEFAULT_SOUND, deleteVariation, FONTS, getVariation, LAYOUTS, listVariations,
  MEDIA_SOURCES, TEMPLATE_PLACEHOLDERS, updateVariation, VARIATION_LIMITS, type VariationInput, type VariationView,
} from '../../modules/widgets/variations.service.js';
import { regenerateWidgetToken, widgetTokenFor } from '../../modules/widgets/widget-tokens.service.js';
import type { AlertAnimation, AlertLayout, AlertType, MediaSource } from '../../modules/widgets/widgets.table.js';
import { localeOr } from '../../i18n/locales.js';
import { translator, type MessageKey, type Translator } from '../../i18n/translator.js';
import { html, type Html } from '../html.js';
import { FILE_FIELDS } from './page-routes.js';
import { fieldErrors, page } from '../layout.js';
import { PREVIEW_SCRIPTS, widgetDocument } from './widget.pages.js';
import { fieldErrorTexts } from '../error-text.js';

/**
 * Alerts-widget settings at /dashboard/widgets: the widget URLs (with the secret widget token)
 * and copy buttons, "regenerate token", and the alert variations (create, edit, delete, send a
 * test alert, preview). Variation forms are multipart: they may carry an image and a sound file
 * (`config.uploads`, at most MEDIA_MAX_BYTES each). Every form posts `_csrf`; scripts add copy
 * buttons, confirmations, the file-size check and the live preview, and nothing depends on them.
 */

const FIELDS = [
  'type', 'name', 'min_amount', 'duration_ms', 'layout', 'text_template', 'image_source', 'image_url', 'sound_source', 'sound_url',
  'sound_volume', 'enter_animation', 'exit_animation', 'font_family', 'font_size', 'title_color', 'message_color',
  'tts_enabled', 'tts_voice', 'tts_rate', 'tts_volume', 'tts_min_amount', 'enabled',
] as const;
type FormValues = Record<(typeof FIELDS)[number], string> & { has_image_file?: boolean; has_sound_file?: boolean };
const CHECKBOXES = new Set(['enabled', 'tts_enabled']);

/** Outcomes of a redirect after POST; only these fixed messages are ever shown. */
const NOTICES: Record<string, MessageKey> = {
  token: 'widgets.notice.token',
  created: 'widgets.notice.created',
  saved: 'widgets.notice.saved',
  deleted: 'widgets.notice.deleted',
  test: 'widgets.notice.test',
};

const TYPE_KEY: Record<AlertType, 'donation' | 'custom' | 'merchandise_sale'> = { donation: 'donation', custom: 'custom', 'merchandise-sale': 'merchandise_sale' };
const typeLabel = (t: Translator, type: AlertType) => t.t(`widgets.type.${TYPE_KEY[type]}`);
const layoutLabel = (t: Translator, layout: AlertLayout) => t.t(`widgets.layout.${layout === 'image-above-text' ? 'image_above' : layout === 'image-left' ? 'image_left' : 'text_only'}`);

/** The default template of the streamer's language, its placeholders kept for the widget to fill. */
function defaultTemplate(t: Translator, type: AlertType): string {
  return t.t(`widget.template.${TYPE_KEY[type]}`, { username: '{username}', money: '{money}', header: '{header}', bought_amount: '{bought_amount}' });
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');

function formValues(body: unknown): FormValues {
  const b = (body ?? {}) as Record<string, unknown>;
  const f = {} as FormValues;
  for (const field of FIELDS) f[field] = CHECKBOXES.has(field) ? (b[field] === undefined ? '' : '1') : str(b[field]);
  return f;
}

function toInput(f: FormValues, files: Record<string, Buffer> = {}): VariationInput {
  return {
    type: f.type, name: f.name, minAmount: f.min_amount, durationMs: f.duration_ms, layout: f.layout, textTemplate: f.text_template,
    imageSource: f.image_source, imageUrl: f.image_url, soundSource: f.sound_source, soundUrl: f.sound_url,
    imageFile: files.image_file ? { data: files.image_file } : null, soundFile: files.sound_file ? { data: files.sound_file } : null,
    soundVolume: f.sound_volume, enterAnimation: f.enter_animation, exitAnimation: f.exit_animation, fontFamily: f.font_family,
    fontSize: f.font_size, titleColor: f.title_color, messageColor: f.message_color, ttsEnabled: f.tts_enabled, ttsVoice: f.tts_voice,
    ttsRate: f.tts_rate, ttsVolume: f.tts_volume, ttsMinAmount: f.tts_min_amount, enabled: f.enabled,
  };
}

function valuesOf(v: VariationView): FormValues {
  return {
    type: v.type, name: v.name, min_amount: String(v.min_amount), duration_ms: String(v.duration_ms), layout: v.layout,
    text_template: v.text_template, image_source: v.image_source, image_url: v.image_url ?? '', sound_source: v.sound_source, sound_url: v.sound_url ?? '',
    sound_volume: String(v.sound_volume), enter_animation: v.enter_animation, exit_animation: v.exit_animation, font_family: v.font_family,
    font_size: String(v.font_size), title_color: v.title_color, message_color: v.message_color, tts_enabled: v.tts_enabled ? '1' : '',
    tts_voice: v.tts_voice, tts_rate: String(v.tts_rate), tts_volume: String(v.tts_volume), tts_min_amount: String(v.tts_min_amount),
    enabled: v.enabled ? '1' : '', has_image_file: v.image_media_id !== null, has_sound_file: v.sound_media_id !== null,
  };
}

function defaults(t: Translator, type: AlertType): FormValues {
  return {
    type, name: typeLabel(t, type), min_amount: '0', duration_ms: '8000', layout: 'image-above-text', text_template: defaultTemplate(t, type),
    image_source: 'default', image_url: '', sound_source: 'default', sound_url: '', sound_volume: '80', enter_animation: 'fade', exit_animation: 'fade',
    font_family: 'system', font_size: '28', title_color: '#ffd54a', message_color: '#ffffff', tts_enabled: '', tts_voice: '', tts_rate: '100',
    tts_volume: '100', tts_min_amount: '0', enabled: '1',
  };
}

/** What the preview shows for a form that is not saved yet: the defaults of its type. */
function unsavedView(f: FormValues): VariationView {
  const num = (v: string, d: number) => (Number.isFinite(Number(v)) && v !== '' ? Number(v) : d);
  return {
    id: 0, type: f.type as AlertType, name: f.name, min_amount: num(f.min_amount, 0), duration_ms: num(f.duration_ms, 8000), layout: f.layout as AlertLayout,
    text_template: f.text_template, image_source: f.image_source as MediaSource, image_url: f.image_url || null, image_media_id: null,
    sound_source: f.sound_source as MediaSource, sound_url: f.sound_url || null, sound_media_id: null, sound_volume: num(f.sound_volume, 80),
    enter_animation: f.enter_animation as AlertAnimation, exit_animation: f.exit_animation as AlertAnimation, font_family: f.font_family as VariationView['font_family'],
    font_size: num(f.font_size, 28), title_color: f.title_color, message_color: f.message_color, tts_enabled: f.tts_enabled ? 1 : 0, tts_voice: f.tts_voice,
    tts_rate: num(f.tts_rate, 100), tts_volume: num(f.tts_volume, 100), tts_min_amount: num(f.tts_min_amount, 0), enabled: f.enabled ? 1 : 0,
    image: f.image_source === 'default' ? { src: DEFAULT_IMAGE, video: false } : null, sound: f.sound_source === 'default' ? DEFAULT_SOUND : null,
  };
}

const idOf = (raw: unknown): number => (typeof raw === 'string' && /^[1-9]\d{0,14}$/.test(raw) ? Number(raw) : 0);

function send(t: Translator, reply: FastifyReply, user: UserRow, csrf: string, title: string, body: Html, status = 200): FastifyReply {
  return reply
    .status(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page({ t, title, user, csrf, body, head: html`<link rel="stylesheet" href="/static/widget-pages.css"><script src="/static/widget-settings.js" defer></script>` }));
}

const ANIMATION_KEY: Record<AlertAnimation, MessageKey> = {
  fade: 'widgets.animation.fade', 'slide-down': 'widgets.animation.slide_down', 'slide-up': 'widgets.animation.slide_up',
  zoom: 'widgets.animation.zoom', bounce: 'widgets.animation.bounce', none: 'widgets.animation.none',
};

function options<T extends string>(values: readonly T[], selected: string, label: (v: T) => string): Html[] {
  return values.map((v) => html`<option value="${v}" ${v === selected ? 'selected' : ''}>${label(v)}</option>`);
}

/** Radio buttons for where the image or sound comes from, then the URL and the file inputs. */
function mediaFields(t: Translator, kind: 'image' | 'sound', f: FormValues, maxBytes: number, errors?: Record<string, string[]>): Html {
  const source = kind === 'image' ? f.image_source : f.sound_source;
  const sourceLabel = (s: MediaSource) => t.t(s === 'default' ? `widgets.source.default_${kind}` : `widgets.source.${s}`);
  const accept = kind === 'image' ? 'image/png,image/jpeg,image/gif,image/webp,video/webm' : 'audio/mpeg,audio/ogg,audio/wav,.mp3,.ogg,.wav';
  const hasFile = kind === 'image' ? f.has_image_file : f.has_sound_file;
  return html`<fieldset class="media-source" data-kind="${kind}">
  <legend>${t.t(`widgets.form.${kind}`)}</legend>
  <div class="choices">${MEDIA_SOURCES.map((s) => html`<label class="choice"><input type="radio" name="${kind}_source" value="${s}" ${s === source ? 'checked' : ''}> ${sourceLabel(s)}</label>`)}</div>
  ${fieldErrors(errors, `${kind}_source`)}
  <label>${t.t(`widgets.form.${kind}_url`)} <small>${t.t('widgets.form.url_hint')}</small> <input name="${kind}_url" type="url" maxlength="${VARIATION_LIMITS.url}" value="${kind === 'image' ? f.image_url : f.sound_url}"></label>
  ${fieldErrors(errors, `${kind}_url`)}
  <label>${t.t(`widgets.form.${kind}_file`)} <small>${t.t(`widgets.form.${kind}_file_hint`, { size: formatBytes(maxBytes) })}</small>
    <input name="${kind}_file" type="file" accept="${accept}" data-max-bytes="${maxBytes}" data-too-large="${t.t('widgets.form.too_large', { size: formatBytes(maxBytes) })}"></label>
  ${hasFile ? html`<small class="hint">${t.t('widgets.form.current_file')}</small>` : ''}
  ${fieldErrors(errors, `${kind}_file`)}
  ${kind === 'sound' ? html`<label>${t.t('widgets.form.sound_volume')} <small>${t.t('widgets.form.percent_hint')}</small> <input name="sound_volume" type="number" min="0" max="100" step="1" value="${f.sound_volume}"></label>${fieldErrors(errors, 'sound_volume')}` : ''}
</fieldset>`;
}

function variationForm(t: Translator, action: string, csrf: string, currency: string, maxBytes: number, f: FormValues, errors?: Record<string, string[]>): Html {
  const err = (...names: string[]) => names.map((n) => fieldErrors(errors, n));
  return html`<form method="post" action="${action}" class="variation-form" enctype="multipart/form-data" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <div class="row">
    <label>${t.t('widgets.form.type')} <select name="type">${options(ALERT_TYPES, f.type, (ty) => typeLabel(t, ty))}</select></label>
    <label>${t.t('widgets.form.name')} <small>${t.t('widgets.form.name_hint', { max: VARIATION_LIMITS.name })}</small> <input name="name" required maxlength="${VARIATION_LIMITS.name}" value="${f.name}"></label>
  </div>
  ${err('type', 'name')}
  <div class="row">
    <label>${t.t('widgets.form.min_amount')} <small>${t.t('widgets.form.min_amount_hint', { currency })}</small> <input name="min_amount" inputmode="decimal" value="${f.min_amount}"></label>
    <label>${t.t('widgets.form.duration')} <small>${t.t('widgets.form.duration_hint', { min: VARIATION_LIMITS.minDurationMs, max: VARIATION_LIMITS.maxDurationMs })}</small> <input name="duration_ms" inputmode="numeric" value="${f.duration_ms}"></label>
    <label>${t.t('widgets.form.layout')} <select name="layout">${options(LAYOUTS, f.layout, (l) => layoutLabel(t, l))}</select></label>
  </div>
  ${err('min_amount', 'duration_ms', 'layout')}
  <label>${t.t('widgets.form.template')} <small>${t.t('widgets.form.template_hint', { list: TEMPLATE_PLACEHOLDERS.join(' ') })}</small> <input name="text_template" maxlength="${VARIATION_LIMITS.template}" value="${f.text_template}"></label>
  ${err('text_template')}
  ${mediaFields(t, 'image', f, maxBytes, errors)}
  ${mediaFields(t, 'sound', f, maxBytes, errors)}
  <fieldset>
    <legend>${t.t('widgets.form.look')}</legend>
    <div class="row">
      <label>${t.t('widgets.form.enter_animation')} <select name="enter_animation">${options(ANIMATIONS, f.enter_animation, (a) => t.t(ANIMATION_KEY[a]))}</select></label>
      <label>${t.t('widgets.form.exit_animation')} <select name="exit_animation">${options(ANIMATIONS, f.exit_animation, (a) => t.t(ANIMATION_KEY[a]))}</select></label>
    </div>
    <small class="hint">${t.t('widgets.form.motion_hint')}</small>
    ${err('enter_animation', 'exit_animation')}
    <div class="row">
      <label>${t.t('widgets.form.font')} <select name="font_family">${options(FONTS, f.font_family, (font) => t.t(`widgets.font.${font}`))}</select></label>
      <label>${t.t('widgets.form.font_size')} <small>${t.t('widgets.form.font_size_hint', { min: VARIATION_LIMITS.minFontSize, max: VARIATION_LIMITS.maxFontSize })}</small> <input name="font_size" type="number" min="${VARIATION_LIMITS.minFontSize}" max="${VARIATION_LIMITS.maxFontSize}" value="${f.font_size}"></label>
      <label>${t.t('widgets.form.title_color')} <input name="title_color" type="color" value="${f.title_color}"></label>
      <label>${t.t('widgets.form.message_color')} <input name="message_color" type="color" value="${f.message_color}"></label>
    </div>
    ${err('font_family', 'font_size', 'title_color', 'message_color')}
  </fieldset>
  <fieldset>
    <legend>${t.t('widgets.form.tts')}</legend>
    <label class="check"><input type="checkbox" name="tts_enabled" value="1" ${f.tts_enabled ? 'checked' : ''}> ${t.t('widgets.form.tts_enabled')}</label>
    <div class="row">
      <label>${t.t('widgets.form.tts_voice')} <small>${t.t('widgets.form.tts_voice_hint')}</small> <input name="tts_voice" list="tts-voices" maxlength="${VARIATION_LIMITS.ttsVoice}" value="${f.tts_voice}"><datalist id="tts-voices"></datalist></label>
      <label>${t.t('widgets.form.tts_rate')} <small>${t.t('widgets.form.tts_rate_hint', { min: VARIATION_LIMITS.minTtsRate, max: VARIATION_LIMITS.maxTtsRate })}</small> <input name="tts_rate" type="number" min="${VARIATION_LIMITS.minTtsRate}" max="${VARIATION_LIMITS.maxTtsRate}" value="${f.tts_rate}"></label>
      <label>${t.t('widgets.form.tts_volume')} <small>${t.t('widgets.form.percent_hint')}</small> <input name="tts_volume" type="number" min="0" max="100" value="${f.tts_volume}"></label>
      <label>${t.t('widgets.form.tts_min_amount')} <small>${t.t('widgets.form.tts_min_amount_hint', { currency })}</small> <input name="tts_min_amount" inputmode="decimal" value="${f.tts_min_amount}"></label>
    </div>
    ${err('tts_enabled', 'tts_voice', 'tts_rate', 'tts_volume', 'tts_min_amount')}
  </fieldset>
  <label class="check"><input type="checkbox" name="enabled" value="1" ${f.enabled ? 'checked' : ''}> ${t.t('widgets.form.enabled')}</label>
  <button type="submit">${t.t('widgets.form.save')}</button> <a href="/dashboard/widgets">${t.t('widgets.form.cancel')}</a>
</form>`;
}

/** The live preview beside a form: the widget itself in a frame, following the form's values. */
function previewFrame(t: Translator, src: string, name: string): Html {
  return html`<section class="card preview-card"><h2>${t.t('widgets.preview')}</h2>
<iframe class="variation-preview" id="variation-preview" src="${src}" title="${t.t('widgets.preview_title', { name })}"></iframe>
<p class="hint">${t.t('widgets.preview_hint')}</p></section>`;
}

function urlRow(t: Translator, id: string, label: string, url: string, hint?: string): Html {
  return html`<div class="widget-url">
  <label for="${id}">${label}</label>
  <div class="copy-row"><input id="${id}" class="mono" readonly value="${url}" dir="ltr"><button type="button" class="secondary" data-copy="${id}" data-copied="${t.t('widgets.copied')}">${t.t('widgets.copy')}</button></div>
  ${hint ? html`<small class="hint">${hint}</small>` : ''}
</div>`;
}

function variationRows(t: Translator, list: VariationView[], csrf: string, currency: string): Html {
  if (list.length === 0) return html`<p class="muted">${t.t('widgets.none')}</p>`;
  const col = {
    name: t.t('widgets.col.name'), min: t.t('widgets.col.minimum'), duration: t.t('widgets.col.duration'), layout: t.t('widgets.col.layout'),
    template: t.t('widgets.col.template'), state: t.t('widgets.col.state'),
  };
  return html`<table class="list">
<thead><tr><th>${col.name}</th><th>${col.min}</th><th>${col.duration}</th><th>${col.layout}</th><th>${col.template}</th><th>${col.state}</th><th></th></tr></thead>
<tbody>${list.map(
    (v) => html`<tr>
  <td data-label="${col.name}"><a href="/dashboard/widgets/variations/${v.id}">${v.name}</a></td>
  <td data-label="${col.min}">${v.type === 'custom' ? '—' : t.moneyMajor(v.min_amount, currency)}</td>
  <td data-label="${col.duration}">${t.t('widgets.seconds', { seconds: v.duration_ms / 1000 })}</td>
  <td data-label="${col.layout}">${layoutLabel(t, v.layout)}</td>
  <td data-label="${col.template}" class="template"><code>${v.text_template}</code></td>
  <td data-label="${col.state}">${v.enabled ? t.t('widgets.enabled') : t.t('widgets.disabled')}</td>
  <td class="actions">
    <form method="post" action="/dashboard/widgets/variations/${v.id}/test" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="secondary">${t.t('widgets.send_test')}</button></form>
    <form method="post" action="/dashboard/widgets/variations/${v.id}/delete" class="inline" data-confirm="${t.t('widgets.confirm_delete', { name: v.name })}"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="danger">${t.t('widgets.delete')}</button></form>
  </td>
</tr>`,
  )}</tbody></table>
<div class="previews">${list.map(
    (v) => html`<figure class="preview"><iframe class="variation-preview" loading="lazy" src="/dashboard/widgets/preview?variation=${v.id}" title="${t.t('widgets.preview_title', { name: v.name })}"></iframe><figcaption>${t.t('widgets.preview_title', { name: v.name })}</figcaption></figure>`,
  )}</div>`;
}

export async function widgetSettingsPages(app: FastifyInstance): Promise<void> {
  const { db } = app.ctx;
  const key = app.ctx.secrets.encryptionKey;
  const base = app.ctx.config.publicUrl;
  const maxBytes = app.ctx.config.mediaMaxBytes;
  const testTexts = (t: Translator): TestAlertTexts => ({ donor: t.t('widgets.test.donor'), customer: t.t('widgets.test.customer'), header: t.t('widgets.test.header'), message: t.t('widgets.test.message') });
  const formPage = (t: Translator, title: string, action: string, csrf: string, user: UserRow, f: FormValues, preview: string, errors?: Record<string, string[]>) =>
    html`<div class="variation-edit"><section class="card"><h1>${title}</h1>${variationForm(t, action, csrf, user.currency, maxBytes, f, errors)}</section>${previewFrame(t, preview, f.name)}</div>`;

  app.get('/dashboard/widgets', async (request, reply) => {
    const user = request.sessionUser!;
    const t = request.i18n!;
    const csrf = reply.generateCsrf();
    const [token, variations] = await Promise.all([widgetTokenFor(db, key, user.id), listVariations(db, user.id)]);
    const q = encodeURIComponent(token);
    const done = NOTICES[str((request.query as Record<string, unknown>).done)];
    const hasCustom = variations.some((v) => v.type === 'custom' && v.enabled);
    const body = html`<section class="card">
<h1>${t.t('widgets.title')}</h1>
${done ? html`<div class="notice" role="status">${t.t(done)}</div>` : ''}
<p>${t.rich('widgets.intro', { b: (chunks) => html`<strong>${chunks}</strong>` })}</p>
${urlRow(t, 'url-alerts', t.t('widget.title.alerts'), `${base}/widget/alerts?token=${q}`, t.t('widgets.hint.alerts'))}
${urlRow(t, 'url-goal', t.t('widget.title.goal'), `${base}/widget/goal?token=${q}`, t.t('widgets.hint.goal'))}
${urlRow(t, 'url-poll', t.t('widget.title.poll'), `${base}/widget/poll?token=${q}`, t.t('widgets.hint.poll'))}
<form method="post" action="/dashboard/widgets/token" data-confirm="${t.t('widgets.confirm_regenerate')}">
  <input type="hidden" name="_csrf" value="${csrf}">
  <button type="submit" class="danger">${t.t('widgets.regenerate')}</button>
</form>
</section>
${ALERT_TYPES.map(
  (type) => html`<section class="card">
<h2>${typeLabel(t, type)}</h2>
${type === 'custom' && !hasCustom ? html`<p class="warning">${t.t('widgets.custom_warning')}</p>` : ''}
${variationRows(t, variations.filter((v) => v.type === type), csrf, user.currency)}
<p><a class="button" href="/dashboard/widgets/variations/new?type=${type}">${t.t(`widgets.add.${TYPE_KEY[type]}`)}</a></p>
</section>`,
)}
<section class="card"><h2>${t.t('widgets.how_title')}</h2>
<p>${t.t('widgets.how', { currency: user.currency })}</p></section>`;
    return send(t, reply, user, csrf, t.t('widgets.title'), body);
  });

  app.post('/dashboard/widgets/token', async (request, reply) => {
    await regenerateWidgetToken(db, key, app.ctx.revocations, request.sessionUser!.id);
    return reply.redirect('/dashboard/widgets?done=token', 303);
  });

  app.get('/dashboard/widgets/variations/new', async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const requested = str((request.query as Record<string, unknown>).type) as AlertType;
    const t = request.i18n!;
    const type = ALERT_TYPES.includes(requested) ? requested : 'donation';
    const f = defaults(t, type);
    const body = formPage(t, t.t('widgets.new_title'), '/dashboard/widgets/variations', csrf, user, f, `/dashboard/widgets/preview?type=${type}`);
    return send(t, reply, user, csrf, t.t('widgets.new_title'), body);
  });

  app.post('/dashboard/widgets/variations', async (request, reply) => {
    const user = request.sessionUser!;
    const f = formValues(request.body);
    try {
      await createVariation(db, user.id, toInput(f, request.uploadedFiles), maxBytes);
      return reply.redirect('/dashboard/widgets?done=created', 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const csrf = reply.generateCsrf();
      const t = request.i18n!;
      const type = ALERT_TYPES.includes(f.type as AlertType) ? f.type : 'donation';
      const body = formPage(t, t.t('widgets.new_title'), '/dashboard/widgets/variations', csrf, user, f, `/dashboard/widgets/preview?type=${type}`, fieldErrorTexts(t, err));
      return send(t, reply, user, csrf, t.t('widgets.new_title'), body, 400);
    }
  });

  app.get<{ Params: { id: string } }>('/dashboard/widgets/variations/:id', async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const v = await getVariation(db, user.id, idOf(request.params.id));
    const t = request.i18n!;
    const body = formPage(t, t.t('widgets.edit_title'), `/dashboard/widgets/variations/${v.id}`, csrf, user, valuesOf(v), `/dashboard/widgets/preview?variation=${v.id}`);
    return send(t, reply, user, csrf, t.t('widgets.edit_title'), body);
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id', async (request, reply) => {
    const user = request.sessionUser!;
    const id = idOf(request.params.id);
    const f = formValues(request.body);
    try {
      await updateVariation(db, user.id, id, toInput(f, request.uploadedFiles), maxBytes);
      return reply.redirect('/dashboard/widgets?done=saved', 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const current = await getVariation(db, user.id, id);
      const csrf = reply.generateCsrf();
      const t = request.i18n!;
      const values = { ...f, has_image_file: current.image_media_id !== null, has_sound_file: current.sound_media_id !== null };
      const body = formPage(t, t.t('widgets.edit_title'), `/dashboard/widgets/variations/${id}`, csrf, user, values, `/dashboard/widgets/preview?variation=${id}`, fieldErrorTexts(t, err));
      return send(t, reply, user, csrf, t.t('widgets.edit_title'), body, 400);
    }
  });

  /**
   * The preview in the settings pages: the alerts widget's own page and script, without a
   * connection, showing a test alert of the variation again and again (silent: no sound or
   * speech on the dashboard). Framed by our own pages only; `blob:` lets it show a file chosen in
   * the form before it is uploaded.
   */
  app.get('/dashboard/widgets/preview', async (request, reply) => {
    const user = request.sessionUser!;
    const query = request.query as Record<string, unknown>;
    const streamerT = await translator(localeOr(user.language));
    let variation: VariationView;
    if (query.variation !== undefined) variation = await getVariation(db, user.id, idOf(query.variation));
    else {
      const type = ALERT_TYPES.includes(str(query.type) as AlertType) ? (str(query.type) as AlertType) : 'donation';
      variation = unsavedView(defaults(streamerT, type));
    }
    const config = { preview: true, userCurrency: user.currency, toUserCurrency: {}, variations: [variation], sample: testAlertFor(user, variation, testTexts(streamerT)) };
    return reply.header('cache-control', 'no-store').type('text/html; charset=utf-8').send(widgetDocument(streamerT, 'alerts', config, PREVIEW_SCRIPTS));
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id/delete', async (request, reply) => {
    await deleteVariation(db, request.sessionUser!.id, idOf(request.params.id));
    return reply.redirect('/dashboard/widgets?done=deleted', 303);
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id/test', async (request, reply) => {
    const user = request.sessionUser!;
    const variation = await getVariation(db, user.id, idOf(request.params.id));
    const t = request.i18n!;
    await sendTestAlert(db, user, variation, testTexts(t));
    await recordMilestone(db, user.id, 'test_alert_sent');
    return reply.redirect('/dashboard/widgets?done=test', 303);
  });
}

