import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Translator } from '../../../i18n/translator.js';
import { ForbiddenError, InsufficientScopeError, ValidationError } from '../../../domain/errors.js';
import { WEBHOOK_EVENTS } from '../../../modules/webhooks/webhook-events.js';
import {
  dashboardWebhooks, redeliverFromDashboard, reenableFromDashboard, removeFromDashboard, rotateFromDashboard, subscribableStreamers, subscribeFromDashboard, type DashboardSubscription, type WebhookDeps,
} from '../../../modules/webhooks/webhooks.service.js';
import type { OwnedAppStreamer } from '../../../oauth/oauth.repository.js';
import { errorText, fieldErrorTexts } from '../../error-text.js';
import { setFlash, takeFlash, type Flash } from '../../flash.js';
import { html, type Html } from '../../html.js';
import { pageTranslator } from '../../i18n.js';
import { fieldErrors } from '../../layout.js';
import { csrfField, field, idParam, notice, sendPage, time, type FieldErrors } from './common.js';

/** The subscribe form as typed, with what was wrong (a refused form is shown again, 422). */
interface SubscribeForm {
  grant: string;
  url: string;
  events: string[];
  errors: FieldErrors;
}

/** The status line of a subscription, with why it is not active. */
function statusText(t: Translator, s: DashboardSubscription['subscription']): string {
  if (s.status === 'active') return t.t('webhooks.status.active');
  const reason = s.status_reason ?? 'deleted_by_app';
  return t.t(`webhooks.reason.${reason}`);
}

function attemptsList(t: Translator, view: DashboardSubscription['log'][number]): Html {
  return html`<ol class="attempts">${view.attempts.map(
    (a) => html`<li>${time(t, a.attempted_at)} — <strong>${a.status_code ?? a.error ?? '—'}</strong>, ${t.t('webhooks.latency', { ms: a.latency_ms })}${
      a.response_excerpt ? html` — <code>${a.response_excerpt.slice(0, 200)}</code>` : ''
    }</li>`,
  )}</ol>`;
}

function logTable(t: Translator, item: DashboardSubscription, csrf: string): Html {
  if (item.log.length === 0) return html`<p class="empty">${t.t('webhooks.log_empty')}</p>`;
  const sub = item.subscription;
  return html`<table class="list webhook-log"><thead><tr><th>${t.t('webhooks.col.event')}</th><th>${t.t('webhooks.col.state')}</th><th>${t.t('webhooks.col.attempts')}</th><th></th></tr></thead><tbody>
${item.log.map(
  (view) => html`<tr>
  <td data-label="${t.t('webhooks.col.event')}"><code>${view.delivery.event_type}</code> <small><code>${view.delivery.message_id}</code></small><br>${time(t, view.delivery.created_at)}</td>
  <td data-label="${t.t('webhooks.col.state')}">${t.t(`webhooks.delivery.${view.delivery.status}`)}</td>
  <td data-label="${t.t('webhooks.col.attempts')}">${view.attempts.length ? attemptsList(t, view) : '—'}</td>
  <td class="actions">${sub.status === 'removed' ? '' : html`<form method="post" action="/dashboard/webhooks/${sub.id}/deliveries/${view.delivery.id}/redeliver" class="inline">${csrfField(csrf)}<button type="submit" class="secondary">${t.t('webhooks.redeliver')}</button></form>`}</td>
</tr>`,
)}
</tbody></table>`;
}

function subscriptionCard(t: Translator, item: DashboardSubscription, csrf: string, showStreamer: boolean, ownerId: number): Html {
  const s = item.subscription;
  return html`<article class="item webhook" id="webhook-${s.id}">
  <div class="item-head"><h3>${s.app_name}${showStreamer ? html` → ${s.streamer_name}` : ''}</h3><span class="tag">${statusText(t, s)}</span></div>
  <dl class="facts">
    <dt>${t.t('webhooks.url')}</dt><dd><code>${s.url}</code></dd>
    <dt>${t.t('webhooks.events')}</dt><dd>${item.events.map((e) => html`<code>${e}</code> `)}</dd>
    <dt>${t.t('apps.created')}</dt><dd>${time(t, s.created_at)}</dd>
  </dl>
  <div class="actions">
    ${s.status === 'disabled' ? html`<form method="post" action="/dashboard/webhooks/${s.id}/reenable" class="inline">${csrfField(csrf)}<button type="submit">${t.t('webhooks.reenable')}</button></form>` : ''}
    ${s.status !== 'removed' && s.app_owner_id === ownerId ? html`<form method="post" action="/dashboard/webhooks/${s.id}/secret" class="inline" data-confirm="${t.t('webhooks.confirm_rotate')}">${csrfField(csrf)}<button type="submit" class="secondary">${t.t('webhooks.rotate')}</button></form>` : ''}
    ${s.status === 'removed' ? '' : html`<form method="post" action="/dashboard/webhooks/${s.id}/remove" class="inline" data-confirm="${t.t('webhooks.confirm_remove')}">${csrfField(csrf)}<button type="submit" class="danger">${t.t('webhooks.remove')}</button></form>`}
  </div>
  <details${s.status === 'disabled' ? html` open` : ''}><summary>${t.t('webhooks.log')}</summary>${logTable(t, item, csrf)}</details>
</article>`;
}

/** WEBHOOKS_RETRY_WINDOW in its largest whole unit, for the notice (24 hours by default; tests use seconds). */
export function retryWindowText(ms: number): { unit: 'hour' | 'minute' | 'second'; n: number } {
  const seconds = Math.round(ms / 1000);
  if (seconds % 3600 === 0) return { unit: 'hour', n: seconds / 3600 };
  if (seconds % 60 === 0) return { unit: 'minute', n: seconds / 60 };
  return { unit: 'second', n: seconds };
}

/** The email-free notice: what stopped, when, and what to do. */
function disabledNotices(t: Translator, items: DashboardSubscription[], retryWindowMs: number): Html {
  const disabled = items.filter((i) => i.subscription.status === 'disabled');
  return html`${disabled.map(
    (i) => html`<div class="notice warning" role="alert">${t.rich('webhooks.disabled_notice', {
      app: i.subscription.app_name,
      url: i.subscription.url,
      ...retryWindowText(retryWindowMs),
      a: (chunks) => html`<a href="#webhook-${i.subscription.id}">${chunks}</a>`,
    })} ${time(t, i.subscription.status_at ?? i.subscription.updated_at)}</div>`,
  )}`;
}

/** Subscribe one of your applications for a streamer who authorized it; the challenge runs on submit. */
function subscribeForm(t: Translator, streamers: OwnedAppStreamer[], csrf: string, form: SubscribeForm | undefined): Html {
  if (streamers.length === 0) return html`<p class="empty">${t.t('webhooks.subscribe_nobody')}</p>`;
  const checked = new Set(form?.events ?? []);
  return html`<form method="post" action="/dashboard/webhooks" id="webhook-subscribe">
  ${csrfField(csrf)}
  <label>${t.t('webhooks.subscribe_for')} <select name="grant" required>${streamers.map((s) => {
    const value = `${s.clientId}:${s.userId}`;
    return html`<option value="${value}"${form?.grant === value ? html` selected` : ''}>${s.appName} → ${s.userName}</option>`;
  })}</select></label>
  ${fieldErrors(form?.errors, 'grant')}
  <label>${t.t('webhooks.url')} <input name="url" type="url" required maxlength="2048" placeholder="https://" value="${form?.url ?? ''}"></label>
  ${fieldErrors(form?.errors, 'url')}
  <fieldset><legend>${t.t('webhooks.events')}</legend>${WEBHOOK_EVENTS.map((e) => html`<label class="check"><input type="checkbox" name="events" value="${e}"${checked.has(e) ? html` checked` : ''}> <code>${e}</code></label> `)}</fieldset>
  ${fieldErrors(form?.errors, 'events')}
  <p><small>${t.t('webhooks.subscribe_hint')}</small></p>
  <button type="submit">${t.t('webhooks.subscribe')}</button>
</form>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, form?: SubscribeForm, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const [{ forMe, ofMyApps }, streamers] = await Promise.all([dashboardWebhooks(app.ctx.db, user.id), subscribableStreamers(app.ctx.db, user.id)]);
  const csrf = reply.generateCsrf();
  const body = html`<section class="card">
<h1>${t.t('webhooks.title')}</h1>
<p>${t.t('webhooks.intro')}</p>
${notice(flash.notice)}
${flash.webhookSecret
  ? html`<div class="notice secret" role="status">${t.rich('webhooks.secret', { id: flash.webhookSecret.subscriptionId, b: (chunks) => html`<strong>${chunks}</strong>` })}<br><code id="webhook-secret">${flash.webhookSecret.value}</code></div>`
  : ''}
${disabledNotices(t, [...forMe, ...ofMyApps.filter((i) => i.subscription.user_id !== user.id)], app.ctx.config.webhooks.retryWindowMs)}
${forMe.length ? forMe.map((i) => subscriptionCard(t, i, csrf, false, user.id)) : html`<p class="empty">${t.t('webhooks.none_for_me')}</p>`}
</section>
<section class="card">
<h2>${t.t('webhooks.of_my_apps')}</h2>
${ofMyApps.length ? ofMyApps.map((i) => subscriptionCard(t, i, csrf, true, user.id)) : html`<p class="empty">${t.t('webhooks.none_of_my_apps')}</p>`}
<h3>${t.t('webhooks.subscribe_title')}</h3>
${subscribeForm(t, streamers, csrf, form)}
</section>`;
  return sendPage(request, reply, csrf, { title: t.t('nav.webhooks'), body, status });
}

/** `events` of a form: one checkbox ticked arrives as a string, several as an array (or as `events[]`). */
function formEvents(body: unknown): string[] {
  const raw = (body as Record<string, unknown> | undefined)?.events ?? (body as Record<string, unknown> | undefined)?.['events[]'];
  const list = Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
  return list.filter((e): e is string => typeof e === 'string');
}

/**
 * Webhooks on the dashboard (issue 11): the streamer sees the subscriptions applications made for
 * them, an application owner those of their applications; both see the delivery log, redeliver a
 * message, re-enable a subscription the retry window disabled (the notice at the top says so — no
 * e-mail is sent), or remove one. Someone else's subscription is a 404.
 */
export async function webhookPages(app: FastifyInstance): Promise<void> {
  const back = (reply: FastifyReply, id: number) => reply.redirect(`/dashboard/webhooks#webhook-${id}`, 303);
  const deps = (): WebhookDeps => ({ db: app.ctx.db, config: app.ctx.config.webhooks, encryptionKey: app.ctx.secrets.encryptionKey, resolver: app.ctx.webhooks.resolver });
  app.get('/dashboard/webhooks', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/dashboard/webhooks', async (request, reply) => {
    const t = pageTranslator(request);
    const grant = field(request.body, 'grant');
    const url = field(request.body, 'url');
    const events = formEvents(request.body);
    const [clientId, userId] = /^\d{1,15}:\d{1,15}$/.test(grant) ? grant.split(':').map(Number) : [0, 0];
    try {
      const created = await subscribeFromDashboard(deps(), request.sessionUser!.id, { clientId: clientId!, userId: userId!, url, events });
      // Shown once on the page the redirect lands on; reloading it subscribes nothing.
      setFlash(request, reply, { notice: t.t('webhooks.notice.subscribed'), webhookSecret: { subscriptionId: created.id, value: created.secret! } });
      return back(reply, created.id);
    } catch (err) {
      let errors: FieldErrors;
      if (err instanceof ValidationError) errors = fieldErrorTexts(t, err);
      else if (err instanceof InsufficientScopeError || err instanceof ForbiddenError) errors = { events: [errorText(t, err)] };
      else throw err;
      return render(app, request, reply, {}, { grant, url, events, errors }, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/webhooks/:id/secret', async (request, reply) => {
    const id = idParam(request.params.id);
    const rotated = await rotateFromDashboard(deps(), request.sessionUser!.id, id);
    setFlash(request, reply, { notice: pageTranslator(request).t('webhooks.notice.rotated'), webhookSecret: { subscriptionId: id, value: rotated.secret! } });
    return back(reply, id);
  });

  app.post<{ Params: { id: string } }>('/dashboard/webhooks/:id/reenable', async (request, reply) => {
    const id = idParam(request.params.id);
    await reenableFromDashboard(app.ctx.db, request.sessionUser!.id, id);
    return back(reply, id);
  });

  app.post<{ Params: { id: string } }>('/dashboard/webhooks/:id/remove', async (request, reply) => {
    const id = idParam(request.params.id);
    await removeFromDashboard(app.ctx.db, request.sessionUser!.id, id);
    return back(reply, id);
  });

  app.post<{ Params: { id: string; delivery: string } }>('/dashboard/webhooks/:id/deliveries/:delivery/redeliver', async (request, reply) => {
    const id = idParam(request.params.id);
    await redeliverFromDashboard(app.ctx.db, request.sessionUser!.id, id, idParam(request.params.delivery));
    return back(reply, id);
  });
}
