import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { msg, NotFoundError, ValidationError } from '../../../domain/errors.js';
import { createApp, deleteApp, listOwnApps, rotateSecret, updateRedirectUris, type AppView } from '../../../modules/apps/apps.service.js';
import { setFlash, takeFlash } from '../../flash.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import type { Translator } from '../../../i18n/translator.js';
import { pageTranslator } from '../../i18n.js';
import { csrfField, field, idParam, notice, sendPage, time, type FieldErrors } from './common.js';
import { fieldErrorTexts } from '../../error-text.js';

interface Flash {
  notice?: string;
  secret?: { clientId: number; value: string };
  errors?: FieldErrors;
  /** The create form as typed. */
  form?: { name: string; redirect_uris: string };
  /** An edit form as typed, for the app being edited. */
  edit?: { clientId: number; name: string; redirect_uris: string };
}

function editForm(t: Translator, a: AppView, csrf: string, flash: Flash): Html {
  const editing = flash.edit?.clientId === a.client_id ? flash.edit : undefined;
  const errors = editing ? flash.errors : undefined;
  return html`<details class="edit"${editing ? html` open` : ''}><summary>${t.t('apps.edit')}</summary>
<form method="post" action="/dashboard/apps/${a.client_id}/edit">
  ${csrfField(csrf)}
  <label>${t.t('profile.name')} <input name="name" required maxlength="100" value="${editing?.name ?? a.name}"></label>
  ${fieldErrors(errors, 'name')}
  <label>${t.t('apps.redirect_uris')} <small>${t.t('apps.redirect_hint')}</small><textarea name="redirect_uris" rows="3" required>${editing?.redirect_uris ?? a.redirect_uris.join('\n')}</textarea></label>
  ${fieldErrors(errors, 'redirect_uris')}
  <button type="submit">${t.t('apps.save')}</button>
</form></details>`;
}

function appCard(t: Translator, a: AppView, csrf: string, flash: Flash): Html {
  return html`<article class="item" id="app-${a.client_id}">
  <div class="item-head"><h3>${a.name}</h3><span class="tag">client_id <code>${a.client_id}</code></span></div>
  <dl class="facts">
    <dt>${t.t('apps.redirect_uris')}</dt><dd>${a.redirect_uris.map((u) => html`<code>${u}</code><br>`)}</dd>
    <dt>${t.t('apps.merchandise_api')}</dt><dd>${a.merchandise_access ? t.t('apps.granted') : '—'}</dd>
    <dt>${t.t('apps.created')}</dt><dd>${time(t, a.created_at)}</dd>
  </dl>
  ${editForm(t, a, csrf, flash)}
  <div class="actions">
    <form method="post" action="/dashboard/apps/${a.client_id}/rotate" class="inline" data-confirm="${t.t('apps.confirm_rotate')}">${csrfField(csrf)}<button type="submit" class="secondary">${t.t('apps.rotate')}</button></form>
    <form method="post" action="/dashboard/apps/${a.client_id}/delete" class="inline" data-confirm="${t.t('apps.confirm_delete')}">${csrfField(csrf)}<button type="submit" class="danger">${t.t('widgets.delete')}</button></form>
  </div>
</article>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const apps = await listOwnApps(app.ctx.db, user.id);
  const csrf = reply.generateCsrf();
  const base = app.ctx.config.publicUrl;
  const createErrors = flash.edit ? undefined : flash.errors;
  const body = html`<section class="card">
<h1>${t.t('apps.title')}</h1>
<p>${t.rich('apps.intro', { authorize: `${base}/oauth/authorize`, token: `${base}/oauth/token`, api: `${base}/api/v1`, code: (chunks) => html`<code>${chunks}</code>`, em: (chunks) => html`<em>${chunks}</em>`, a: (chunks) => html`<a href="/dashboard/authorized-apps">${chunks}</a>` })}</p>
${notice(flash.notice)}
${flash.secret
  ? html`<div class="notice secret" role="status">${t.rich('apps.secret', { id: flash.secret.clientId, b: (chunks) => html`<strong>${chunks}</strong>` })}<br><code id="client-secret">${flash.secret.value}</code></div>`
  : ''}
${apps.length ? apps.map((a) => appCard(t, a, csrf, flash)) : html`<p class="empty">${t.t('apps.none')}</p>`}
</section>
<section class="card">
<h2>${t.t('apps.create_title')}</h2>
<form method="post" action="/dashboard/apps">
  ${csrfField(csrf)}
  <label>${t.t('profile.name')} <input name="name" required maxlength="100" value="${flash.form?.name ?? ''}"></label>
  ${fieldErrors(createErrors, 'name')}
  <label>${t.t('apps.redirect_uris')} <small>${t.t('apps.redirect_hint')}</small><textarea name="redirect_uris" rows="3" required>${flash.form?.redirect_uris ?? ''}</textarea></label>
  ${fieldErrors(createErrors, 'redirect_uris')}
  <button type="submit">${t.t('apps.create')}</button>
</form>
</section>`;
  return sendPage(request, reply, csrf, { title: t.t('nav.apps'), body, status });
}

/**
 * The streamer's own OAuth applications: create (the secret is shown once), edit the name and
 * redirect URIs, rotate the secret (shown once), delete (every token of the app stops at once).
 * Each accepted form answers 303 to the list (flash.ts carries the notice and the secret);
 * a refused one is shown again as typed (422), having changed nothing.
 */
export async function appsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/apps', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/dashboard/apps', async (request, reply) => {
    const name = field(request.body, 'name');
    const uris = field(request.body, 'redirect_uris');
    try {
      const { app: created, clientSecret } = await createApp(app.ctx.db, app.ctx.secrets.encryptionKey, {
        ownerId: request.sessionUser!.id,
        name,
        redirectUris: uris.split(/\r?\n/),
      });
      // Shown once on the page the redirect lands on; reloading that page creates nothing.
      setFlash(request, reply, { notice: pageTranslator(request).t('apps.notice.created', { name: created.name }), secret: { clientId: created.client_id, value: clientSecret } });
      return reply.redirect('/dashboard/apps', 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), form: { name, redirect_uris: uris } }, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/edit', async (request, reply) => {
    const clientId = idParam(request.params.id);
    const name = field(request.body, 'name');
    const uris = field(request.body, 'redirect_uris');
    try {
      await updateRedirectUris(app.ctx.db, request.sessionUser!.id, clientId, name, uris.split(/\r?\n/));
      setFlash(request, reply, { notice: pageTranslator(request).t('apps.notice.saved') });
      return reply.redirect('/dashboard/apps', 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), edit: { clientId, name, redirect_uris: uris } }, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/rotate', async (request, reply) => {
    const clientId = idParam(request.params.id);
    const secret = await rotateSecret(app.ctx.db, app.ctx.secrets.encryptionKey, request.sessionUser!.id, clientId);
    setFlash(request, reply, { secret: { clientId, value: secret } });
    return reply.redirect('/dashboard/apps', 303);
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/delete', async (request, reply) => {
    const clientId = idParam(request.params.id);
    if (!clientId) throw new NotFoundError(msg('err.app.not_yours'));
    await deleteApp(app.ctx.db, app.ctx.revocations, request.sessionUser!.id, clientId);
    return reply.redirect('/dashboard/apps', 303);
  });
}
