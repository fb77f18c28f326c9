import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../domain/errors.js';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { sendTestAlert } from '../../modules/widgets/alerts.service.js';
import {
  ALERT_TYPES, createVariation, deleteVariation, getVariation, LAYOUTS, listVariations,
  TEMPLATE_PLACEHOLDERS, updateVariation, VARIATION_LIMITS, type VariationInput, type VariationView,
} from '../../modules/widgets/variations.service.js';
import { regenerateWidgetToken, widgetTokenFor } from '../../modules/widgets/widget-tokens.service.js';
import type { AlertLayout, AlertType } from '../../modules/widgets/widgets.table.js';
import type { MessageKey, Translator } from '../../i18n/translator.js';
import { html, type Html } from '../html.js';
import { fieldErrors, page } from '../layout.js';
import { requireUser } from '../session.js';

/**
 * Alerts-widget settings at /dashboard/widgets: the widget URLs (with the secret widget token)
 * and copy buttons, "regenerate token", and the alert variations (create, edit, delete, send a
 * test alert). Every form posts `_csrf`; scripts only add copy buttons and confirmations.
 */

type FormValues = Record<'type' | 'name' | 'min_amount' | 'duration_ms' | 'layout' | 'text_template' | 'sound_url' | 'image_url' | 'enabled', string>;

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
  return {
    type: str(b.type), name: str(b.name), min_amount: str(b.min_amount), duration_ms: str(b.duration_ms), layout: str(b.layout),
    text_template: str(b.text_template), sound_url: str(b.sound_url), image_url: str(b.image_url), enabled: b.enabled === undefined ? '' : '1',
  };
}

function toInput(f: FormValues): VariationInput {
  return { type: f.type, name: f.name, minAmount: f.min_amount, durationMs: f.duration_ms, layout: f.layout, textTemplate: f.text_template, soundUrl: f.sound_url, imageUrl: f.image_url, enabled: f.enabled };
}

function valuesOf(v: VariationView): FormValues {
  return {
    type: v.type, name: v.name, min_amount: String(v.min_amount), duration_ms: String(v.duration_ms), layout: v.layout,
    text_template: v.text_template, sound_url: v.sound_url ?? '', image_url: v.image_url ?? '', enabled: v.enabled ? '1' : '',
  };
}

function defaults(t: Translator, type: AlertType): FormValues {
  return {
    type, name: typeLabel(t, type), min_amount: '0', duration_ms: '6000', layout: 'image-above-text',
    text_template: defaultTemplate(t, type), sound_url: '', image_url: '', enabled: '1',
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

function variationForm(t: Translator, action: string, csrf: string, currency: string, f: FormValues, errors?: Record<string, string[]>): Html {
  return html`<form method="post" action="${action}" class="variation-form" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <div class="row">
    <label>${t.t('widgets.form.type')} <select name="type">${ALERT_TYPES.map((ty) => html`<option value="${ty}" ${ty === f.type ? 'selected' : ''}>${typeLabel(t, ty)}</option>`)}</select></label>
    <label>${t.t('widgets.form.name')} <small>${t.t('widgets.form.name_hint', { max: VARIATION_LIMITS.name })}</small> <input name="name" required maxlength="${VARIATION_LIMITS.name}" value="${f.name}"></label>
  </div>
  ${fieldErrors(errors, 'type')}${fieldErrors(errors, 'name')}
  <div class="row">
    <label>${t.t('widgets.form.min_amount')} <small>${t.t('widgets.form.min_amount_hint', { currency })}</small> <input name="min_amount" inputmode="decimal" value="${f.min_amount}"></label>
    <label>${t.t('widgets.form.duration')} <small>${t.t('widgets.form.duration_hint', { min: VARIATION_LIMITS.minDurationMs, max: VARIATION_LIMITS.maxDurationMs })}</small> <input name="duration_ms" inputmode="numeric" value="${f.duration_ms}"></label>
    <label>${t.t('widgets.form.layout')} <select name="layout">${LAYOUTS.map((l) => html`<option value="${l}" ${l === f.layout ? 'selected' : ''}>${layoutLabel(t, l)}</option>`)}</select></label>
  </div>
  ${fieldErrors(errors, 'min_amount')}${fieldErrors(errors, 'duration_ms')}${fieldErrors(errors, 'layout')}
  <label>${t.t('widgets.form.template')} <small>${t.t('widgets.form.template_hint', { list: TEMPLATE_PLACEHOLDERS.join(' ') })}</small> <input name="text_template" maxlength="${VARIATION_LIMITS.template}" value="${f.text_template}"></label>
  ${fieldErrors(errors, 'text_template')}
  <label>${t.t('widgets.form.image_url')} <small>${t.t('widgets.form.url_hint')}</small> <input name="image_url" type="url" maxlength="${VARIATION_LIMITS.url}" value="${f.image_url}"></label>
  ${fieldErrors(errors, 'image_url')}
  <label>${t.t('widgets.form.sound_url')} <small>${t.t('widgets.form.url_hint')}</small> <input name="sound_url" type="url" maxlength="${VARIATION_LIMITS.url}" value="${f.sound_url}"></label>
  ${fieldErrors(errors, 'sound_url')}
  <label class="check"><input type="checkbox" name="enabled" value="1" ${f.enabled ? 'checked' : ''}> ${t.t('widgets.form.enabled')}</label>
  <button type="submit">${t.t('widgets.form.save')}</button> <a href="/dashboard/widgets">${t.t('widgets.form.cancel')}</a>
</form>`;
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
  )}</tbody></table>`;
}

export async function widgetSettingsPages(app: FastifyInstance): Promise<void> {
  const { db } = app.ctx;
  const key = app.ctx.secrets.encryptionKey;
  const base = app.ctx.config.publicUrl;

  app.get('/dashboard/widgets', { preHandler: requireUser }, async (request, reply) => {
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

  app.post('/dashboard/widgets/token', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    await regenerateWidgetToken(db, key, app.ctx.revocations, request.sessionUser!.id);
    return reply.redirect('/dashboard/widgets?done=token', 303);
  });

  app.get('/dashboard/widgets/variations/new', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const requested = str((request.query as Record<string, unknown>).type) as AlertType;
    const t = request.i18n!;
    const f = defaults(t, ALERT_TYPES.includes(requested) ? requested : 'donation');
    const body = html`<section class="card"><h1>${t.t('widgets.new_title')}</h1>${variationForm(t, '/dashboard/widgets/variations', csrf, user.currency, f)}</section>`;
    return send(t, reply, user, csrf, t.t('widgets.new_title'), body);
  });

  app.post('/dashboard/widgets/variations', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const user = request.sessionUser!;
    const f = formValues(request.body);
    try {
      await createVariation(db, user.id, toInput(f));
      return reply.redirect('/dashboard/widgets?done=created', 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const csrf = reply.generateCsrf();
      const t = request.i18n!;
      const body = html`<section class="card"><h1>${t.t('widgets.new_title')}</h1>${variationForm(t, '/dashboard/widgets/variations', csrf, user.currency, f, err.errors)}</section>`;
      return send(t, reply, user, csrf, t.t('widgets.new_title'), body, 422);
    }
  });

  app.get<{ Params: { id: string } }>('/dashboard/widgets/variations/:id', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const v = await getVariation(db, user.id, idOf(request.params.id));
    const t = request.i18n!;
    const body = html`<section class="card"><h1>${t.t('widgets.edit_title')}</h1>${variationForm(t, `/dashboard/widgets/variations/${v.id}`, csrf, user.currency, valuesOf(v))}</section>`;
    return send(t, reply, user, csrf, t.t('widgets.edit_title'), body);
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const user = request.sessionUser!;
    const id = idOf(request.params.id);
    const f = formValues(request.body);
    try {
      await updateVariation(db, user.id, id, toInput(f));
      return reply.redirect('/dashboard/widgets?done=saved', 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      const csrf = reply.generateCsrf();
      const t = request.i18n!;
      const body = html`<section class="card"><h1>${t.t('widgets.edit_title')}</h1>${variationForm(t, `/dashboard/widgets/variations/${id}`, csrf, user.currency, f, err.errors)}</section>`;
      return send(t, reply, user, csrf, t.t('widgets.edit_title'), body, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id/delete', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    await deleteVariation(db, request.sessionUser!.id, idOf(request.params.id));
    return reply.redirect('/dashboard/widgets?done=deleted', 303);
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id/test', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const user = request.sessionUser!;
    const variation = await getVariation(db, user.id, idOf(request.params.id));
    const t = request.i18n!;
    await sendTestAlert(db, user, variation, { donor: t.t('widgets.test.donor'), customer: t.t('widgets.test.customer'), header: t.t('widgets.test.header'), message: t.t('widgets.test.message') });
    return reply.redirect('/dashboard/widgets?done=test', 303);
  });
}

