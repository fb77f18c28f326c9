import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../domain/errors.js';
import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { sendTestAlert } from '../../modules/widgets/alerts.service.js';
import {
  ALERT_TYPE_LABELS, ALERT_TYPES, createVariation, DEFAULT_TEMPLATES, deleteVariation, getVariation, LAYOUT_LABELS, LAYOUTS, listVariations,
  TEMPLATE_PLACEHOLDERS, updateVariation, VARIATION_LIMITS, type VariationInput, type VariationView,
} from '../../modules/widgets/variations.service.js';
import { regenerateWidgetToken, widgetTokenFor } from '../../modules/widgets/widget-tokens.service.js';
import type { AlertType } from '../../modules/widgets/widgets.table.js';
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
const NOTICES: Record<string, string> = {
  token: 'A new widget token was generated. Update the URLs in OBS: the old ones no longer work.',
  created: 'Variation created.',
  saved: 'Variation saved.',
  deleted: 'Variation deleted.',
  test: 'Test alert sent: it shows in every open alerts widget within a second.',
};

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

function defaults(type: AlertType): FormValues {
  return {
    type, name: ALERT_TYPE_LABELS[type], min_amount: '0', duration_ms: '6000', layout: 'image-above-text',
    text_template: DEFAULT_TEMPLATES[type], sound_url: '', image_url: '', enabled: '1',
  };
}

const idOf = (raw: unknown): number => (typeof raw === 'string' && /^[1-9]\d{0,14}$/.test(raw) ? Number(raw) : 0);

function send(reply: FastifyReply, user: UserRow, csrf: string, title: string, body: Html, status = 200): FastifyReply {
  return reply
    .status(status)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page({ title, user, csrf, body, head: html`<link rel="stylesheet" href="/static/widget-pages.css"><script src="/static/widget-settings.js" defer></script>` }));
}

function variationForm(action: string, csrf: string, currency: string, f: FormValues, errors?: Record<string, string[]>): Html {
  return html`<form method="post" action="${action}" class="variation-form" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <div class="row">
    <label>Alert type <select name="type">${ALERT_TYPES.map((t) => html`<option value="${t}" ${t === f.type ? 'selected' : ''}>${ALERT_TYPE_LABELS[t]}</option>`)}</select></label>
    <label>Name <small>(up to ${VARIATION_LIMITS.name} characters)</small> <input name="name" required maxlength="${VARIATION_LIMITS.name}" value="${f.name}"></label>
  </div>
  ${fieldErrors(errors, 'type')}${fieldErrors(errors, 'name')}
  <div class="row">
    <label>Minimum amount <small>(${currency}; not used for custom alerts)</small> <input name="min_amount" inputmode="decimal" value="${f.min_amount}"></label>
    <label>Duration <small>(milliseconds, ${VARIATION_LIMITS.minDurationMs}–${VARIATION_LIMITS.maxDurationMs})</small> <input name="duration_ms" inputmode="numeric" value="${f.duration_ms}"></label>
    <label>Layout <select name="layout">${LAYOUTS.map((l) => html`<option value="${l}" ${l === f.layout ? 'selected' : ''}>${LAYOUT_LABELS[l]}</option>`)}</select></label>
  </div>
  ${fieldErrors(errors, 'min_amount')}${fieldErrors(errors, 'duration_ms')}${fieldErrors(errors, 'layout')}
  <label>Text template <small>(placeholders: ${TEMPLATE_PLACEHOLDERS.join(' ')})</small> <input name="text_template" maxlength="${VARIATION_LIMITS.template}" value="${f.text_template}"></label>
  ${fieldErrors(errors, 'text_template')}
  <label>Image URL <small>(http or https; optional)</small> <input name="image_url" type="url" maxlength="${VARIATION_LIMITS.url}" value="${f.image_url}"></label>
  ${fieldErrors(errors, 'image_url')}
  <label>Sound URL <small>(http or https; optional)</small> <input name="sound_url" type="url" maxlength="${VARIATION_LIMITS.url}" value="${f.sound_url}"></label>
  ${fieldErrors(errors, 'sound_url')}
  <label class="check"><input type="checkbox" name="enabled" value="1" ${f.enabled ? 'checked' : ''}> Enabled</label>
  <button type="submit">Save variation</button> <a href="/dashboard/widgets">Cancel</a>
</form>`;
}

function urlRow(id: string, label: string, url: string, hint?: string): Html {
  return html`<div class="widget-url">
  <label for="${id}">${label}</label>
  <div class="copy-row"><input id="${id}" class="mono" readonly value="${url}"><button type="button" class="secondary" data-copy="${id}">Copy</button></div>
  ${hint ? html`<small class="hint">${hint}</small>` : ''}
</div>`;
}

function variationRows(list: VariationView[], csrf: string, currency: string): Html {
  if (list.length === 0) return html`<p class="muted">No variations yet.</p>`;
  return html`<table class="list">
<thead><tr><th>Name</th><th>Minimum</th><th>Duration</th><th>Layout</th><th>Template</th><th>State</th><th></th></tr></thead>
<tbody>${list.map(
    (v) => html`<tr>
  <td data-label="Name"><a href="/dashboard/widgets/variations/${v.id}">${v.name}</a></td>
  <td data-label="Minimum">${v.type === 'custom' ? '—' : `${v.min_amount} ${currency}`}</td>
  <td data-label="Duration">${(v.duration_ms / 1000).toFixed(1)} s</td>
  <td data-label="Layout">${LAYOUT_LABELS[v.layout]}</td>
  <td data-label="Template" class="template"><code>${v.text_template}</code></td>
  <td data-label="State">${v.enabled ? 'Enabled' : 'Disabled'}</td>
  <td class="actions">
    <form method="post" action="/dashboard/widgets/variations/${v.id}/test" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="secondary">Send test alert</button></form>
    <form method="post" action="/dashboard/widgets/variations/${v.id}/delete" class="inline" data-confirm="Delete the variation “${v.name}”?"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="danger">Delete</button></form>
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
    const csrf = reply.generateCsrf();
    const [token, variations] = await Promise.all([widgetTokenFor(db, key, user.id), listVariations(db, user.id)]);
    const q = encodeURIComponent(token);
    const done = NOTICES[str((request.query as Record<string, unknown>).done)];
    const hasCustom = variations.some((v) => v.type === 'custom' && v.enabled);
    const body = html`<section class="card">
<h1>Alerts widget</h1>
${done ? html`<div class="notice" role="status">${done}</div>` : ''}
<p>Add these pages to OBS (or any streaming software) as <strong>browser sources</strong>. The background is transparent. Anyone with these links can see your alerts: keep them secret.</p>
${urlRow('url-alerts', 'Alerts widget', `${base}/widget/alerts?token=${q}`, 'Shows donations, custom alerts and merchandise sales, one at a time.')}
${urlRow('url-goal', 'Goal widget', `${base}/widget/goal?token=${q}`, 'Follows your newest running goal; add &goal=<id> to pin one goal.')}
${urlRow('url-poll', 'Poll widget', `${base}/widget/poll?token=${q}`, 'Shows your running poll with live results.')}
<form method="post" action="/dashboard/widgets/token" data-confirm="Generate a new widget token? The current widget URLs stop working.">
  <input type="hidden" name="_csrf" value="${csrf}">
  <button type="submit" class="danger">Regenerate token</button>
</form>
</section>
${ALERT_TYPES.map(
  (type) => html`<section class="card">
<h2>${ALERT_TYPE_LABELS[type]}</h2>
${type === 'custom' && !hasCustom ? html`<p class="warning">Custom alerts sent by your applications are not shown until you add an enabled Custom alerts variation.</p>` : ''}
${variationRows(variations.filter((v) => v.type === type), csrf, user.currency)}
<p><a class="button" href="/dashboard/widgets/variations/new?type=${type}">Add a ${ALERT_TYPE_LABELS[type].toLowerCase()} variation</a></p>
</section>`,
)}
<section class="card"><h2>How variations are chosen</h2>
<p>For each alert the widget picks the enabled variation of its type with the highest minimum amount that is not above the alert's amount (in ${user.currency}). Without a matching variation the alert is not shown.</p></section>`;
    return send(reply, user, csrf, 'Alerts widget', body);
  });

  app.post('/dashboard/widgets/token', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    await regenerateWidgetToken(db, key, request.sessionUser!.id);
    return reply.redirect('/dashboard/widgets?done=token', 303);
  });

  app.get('/dashboard/widgets/variations/new', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const requested = str((request.query as Record<string, unknown>).type) as AlertType;
    const f = defaults(ALERT_TYPES.includes(requested) ? requested : 'donation');
    const body = html`<section class="card"><h1>New variation</h1>${variationForm('/dashboard/widgets/variations', csrf, user.currency, f)}</section>`;
    return send(reply, user, csrf, 'New variation', body);
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
      const body = html`<section class="card"><h1>New variation</h1>${variationForm('/dashboard/widgets/variations', csrf, user.currency, f, err.errors)}</section>`;
      return send(reply, user, csrf, 'New variation', body, 422);
    }
  });

  app.get<{ Params: { id: string } }>('/dashboard/widgets/variations/:id', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const v = await getVariation(db, user.id, idOf(request.params.id));
    const body = html`<section class="card"><h1>Edit variation</h1>${variationForm(`/dashboard/widgets/variations/${v.id}`, csrf, user.currency, valuesOf(v))}</section>`;
    return send(reply, user, csrf, 'Edit variation', body);
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
      const body = html`<section class="card"><h1>Edit variation</h1>${variationForm(`/dashboard/widgets/variations/${id}`, csrf, user.currency, f, err.errors)}</section>`;
      return send(reply, user, csrf, 'Edit variation', body, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id/delete', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    await deleteVariation(db, request.sessionUser!.id, idOf(request.params.id));
    return reply.redirect('/dashboard/widgets?done=deleted', 303);
  });

  app.post<{ Params: { id: string } }>('/dashboard/widgets/variations/:id/test', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const user = request.sessionUser!;
    const variation = await getVariation(db, user.id, idOf(request.params.id));
    await sendTestAlert(db, user, variation);
    return reply.redirect('/dashboard/widgets?done=test', 303);
  });
}

