import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError } from '../../../domain/errors.js';
import {
  approvalQueue,
  approveDonation,
  DEFAULT_SETTINGS,
  moderationSettings,
  parseSettingsForm,
  rejectDonation,
  saveModerationSettings,
  SETTINGS_LIMITS,
  settingsToForm,
  skipCurrentAlert,
  type SettingsErrorCode,
  type SettingsForm,
} from '../../../modules/moderation/moderation.service.js';
import type { Translator } from '../../../i18n/translator.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, field, idParam, money, notice, sendPage, time, type FieldErrors } from './common.js';

const FIELDS: (keyof SettingsForm)[] = [
  'banned_words', 'banned_words_mode', 'links', 'max_message_length', 'min_message_amount',
  'ip_rate_limit', 'donor_rate_limit', 'rate_window_seconds', 'approval_required', 'alert_delay_seconds',
];

function errorText(t: Translator, code: SettingsErrorCode): string {
  switch (code) {
    case 'too_many_words': return t.t('moderation.error.too_many_words', { max: SETTINGS_LIMITS.bannedWords });
    case 'word_too_long': return t.t('moderation.error.word_too_long', { max: SETTINGS_LIMITS.bannedWordLength });
    case 'mode': return t.t('moderation.error.mode');
    case 'whole_number': return t.t('moderation.error.whole_number');
    case 'amount': return t.t('moderation.error.amount', { example: t.decimal(10.5) });
    case 'too_large': return t.t('moderation.error.too_large');
  }
}

function option(value: string, current: string, label: string): Html {
  return html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`;
}

function settingsCard(t: Translator, csrf: string, currency: string, f: SettingsForm, errors?: FieldErrors): Html {
  return html`<section class="card">
<h2>${t.t('moderation.settings')}</h2>
<form method="post" action="/dashboard/moderation" novalidate id="moderation-settings">
  ${csrfField(csrf)}
  <label>${t.t('moderation.banned_words')} <small>${t.t('moderation.banned_words_hint')}</small>
    <textarea name="banned_words" rows="5">${f.banned_words}</textarea></label>
  ${fieldErrors(errors, 'banned_words')}
  <div class="row">
    <label>${t.t('moderation.banned_words_mode')} <select name="banned_words_mode">${option('mask', f.banned_words_mode, t.t('moderation.mode.mask'))}${option('reject', f.banned_words_mode, t.t('moderation.mode.reject'))}</select></label>
    <label>${t.t('moderation.links')} <select name="links">${option('allow', f.links, t.t('moderation.links.allow'))}${option('remove', f.links, t.t('moderation.links.remove'))}${option('reject', f.links, t.t('moderation.links.reject'))}</select></label>
  </div>
  ${fieldErrors(errors, 'banned_words_mode')}${fieldErrors(errors, 'links')}
  <p class="hint">${t.t('moderation.reject_hint')}</p>
  <div class="row">
    <label>${t.t('moderation.max_message_length')} <small>${t.t('moderation.optional_max', { max: SETTINGS_LIMITS.maxMessageLength })}</small><input name="max_message_length" inputmode="numeric" value="${f.max_message_length}"></label>
    <label>${t.t('moderation.min_message_amount')} <small>(${currency})</small><input name="min_message_amount" inputmode="decimal" value="${f.min_message_amount}" placeholder="${t.decimal(0)}"></label>
  </div>
  ${fieldErrors(errors, 'max_message_length')}${fieldErrors(errors, 'min_message_amount')}
  <p class="hint">${t.t('moderation.min_message_amount_hint')}</p>
  <div class="row">
    <label>${t.t('moderation.ip_rate_limit')} <input name="ip_rate_limit" inputmode="numeric" value="${f.ip_rate_limit}" placeholder="${t.t('moderation.no_limit')}"></label>
    <label>${t.t('moderation.donor_rate_limit')} <input name="donor_rate_limit" inputmode="numeric" value="${f.donor_rate_limit}" placeholder="${t.t('moderation.no_limit')}"></label>
    <label>${t.t('moderation.rate_window_seconds')} <input name="rate_window_seconds" inputmode="numeric" value="${f.rate_window_seconds}"></label>
  </div>
  ${fieldErrors(errors, 'ip_rate_limit')}${fieldErrors(errors, 'donor_rate_limit')}${fieldErrors(errors, 'rate_window_seconds')}
  <p class="hint">${t.t('moderation.rate_limit_hint')}</p>
  <label class="check"><input type="checkbox" name="approval_required" value="1"${f.approval_required ? html` checked` : ''}> ${t.t('moderation.approval_required')}</label>
  <label>${t.t('moderation.alert_delay_seconds')} <small>${t.t('moderation.alert_delay_hint', { max: SETTINGS_LIMITS.alertDelaySeconds })}</small><input name="alert_delay_seconds" inputmode="numeric" value="${f.alert_delay_seconds}"></label>
  ${fieldErrors(errors, 'alert_delay_seconds')}
  <button type="submit">${t.t('moderation.save')}</button>
</form>
</section>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: { notice?: string; form?: SettingsForm; errors?: FieldErrors } = {}, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const db = app.ctx.db;
  const [settings, held] = await Promise.all([moderationSettings(db, user.id), approvalQueue(db, user.id)]);
  const form = flash.form ?? settingsToForm(settings ?? DEFAULT_SETTINGS);
  const csrf = reply.generateCsrf();
  const body = html`<section class="card">
<div class="card-head">
  <h1>${t.t('moderation.title')}</h1>
  <form method="post" action="/dashboard/moderation/skip" class="inline" id="skip-alert-form">${csrfField(csrf)}<button type="submit">${t.t('moderation.skip')}</button></form>
</div>
${notice(flash.notice)}
<p class="hint">${t.t('moderation.skip_hint')}</p>
</section>
<section class="card" id="approval-queue">
<h2>${t.t('moderation.queue', { count: held.length })}</h2>
${held.length === 0
  ? html`<p class="empty">${form.approval_required ? t.t('moderation.queue_empty') : t.t('moderation.queue_off')}</p>`
  : html`<ul class="feed">${held.map(({ donation: d, moderation: m }) => html`<li class="donation held" data-id="${d.id}">
  <div class="donation-head"><strong class="donor">${m.shown_username}</strong><span class="amount">${money(t, d.amount, d.currency)}</span></div>
  ${m.shown_message ? html`<p class="message">${m.shown_message}</p>` : ''}
  <div class="meta">${time(t, d.created_at, true)}${(JSON.parse(m.reasons) as string[]).includes('rule') ? html` · ${t.t('moderation.held_by_rule')}` : ''}</div>
  <form method="post" action="/dashboard/moderation/${d.id}/approve" class="inline">${csrfField(csrf)}<button type="submit" data-action="approve">${t.t('moderation.approve')}</button></form>
  <form method="post" action="/dashboard/moderation/${d.id}/reject" class="inline">${csrfField(csrf)}<button type="submit" class="secondary" data-action="reject">${t.t('moderation.reject')}</button></form>
</li>`)}</ul>`}
<p class="hint">${t.t('moderation.queue_hint')}</p>
</section>
${settingsCard(t, csrf, user.currency, form, flash.errors)}`;
  return sendPage(request, reply, csrf, { title: t.t('moderation.title'), body, status });
}

/**
 * /dashboard/moderation: the streamer's donor-page rules, the approval queue and "skip current
 * alert" (moderation.service). Plain forms; every action answers with a redirect back here.
 */
export async function moderationPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/moderation', (request, reply) => render(app, request, reply, { notice: takeFlash(request, reply).notice }));
  const done = (request: FastifyRequest, reply: FastifyReply, key: 'saved' | 'skipped' | 'approved' | 'rejected') =>
    redirectWithFlash(request, reply, '/dashboard/moderation', { notice: pageTranslator(request).t(`moderation.notice.${key}`) });

  app.post('/dashboard/moderation', async (request, reply) => {
    const form = Object.fromEntries(FIELDS.map((name) => [name, field(request.body, name)])) as unknown as SettingsForm;
    const parsed = parseSettingsForm(form);
    if ('errors' in parsed) {
      const t = pageTranslator(request);
      const errors = Object.fromEntries(Object.entries(parsed.errors).map(([name, code]) => [name, [errorText(t, code)]]));
      return render(app, request, reply, { form, errors }, 422);
    }
    await saveModerationSettings(app.ctx.db, request.sessionUser!.id, parsed.settings);
    return done(request, reply, 'saved');
  });

  app.post('/dashboard/moderation/skip', async (request, reply) => {
    await skipCurrentAlert(app.ctx.db, request.sessionUser!.id);
    return done(request, reply, 'skipped');
  });

  for (const action of ['approve', 'reject'] as const) {
    app.post<{ Params: { id: string } }>(`/dashboard/moderation/:id/${action}`, async (request, reply) => {
      const user = request.sessionUser!;
      const id = idParam(request.params.id);
      try {
        if (action === 'approve') await approveDonation(app.ctx.db, user, id);
        else await rejectDonation(app.ctx.db, user.id, id);
      } catch (err) {
        if (!(err instanceof NotFoundError)) throw err;
        const t = pageTranslator(request);
        return render(app, request, reply, { notice: t.t('moderation.notice.not_held') }, 404);
      }
      return done(request, reply, action === 'approve' ? 'approved' : 'rejected');
    });
  }
}
