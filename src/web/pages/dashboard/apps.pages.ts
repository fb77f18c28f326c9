import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { NotFoundError, ValidationError } from '../../../domain/errors.js';
import { createApp, deleteApp, listOwnApps, rotateSecret, updateRedirectUris, type AppView } from '../../../modules/apps/apps.service.js';
import { html, type Html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import type { Translator } from '../../../i18n/translator.js';
import { pageTranslator } from '../../i18n.js';
import { requireUser } from '../../session.js';
import { csrfField, field, idParam, notice, sendPage, time, type FieldErrors } from './common.js';

interface Flash {
  notice?: string;
  secret?: { clientId: number; value: string };
  errors?: FieldErrors;
  /** The create form as typed. */
  form?: { name: string; redirect_uris: string };
  /** An edit form as typed, for the app being edited. */
  edit?: { clientId: number; name: string; redirect_uris: string };
}

function editForm(a: AppView, csrf: string, flash: Flash): Html {
  const editing = flash.edit?.clientId === a.client_id ? flash.edit : undefined;
  const errors = editing ? flash.errors : undefined;
  return html`<details class="edit"${editing ? html` open` : ''}><summary>Edit name and redirect URIs</summary>
<form method="post" action="/dashboard/apps/${a.client_id}/edit">
  ${csrfField(csrf)}
  <label>Name <input name="name" required maxlength="100" value="${editing?.name ?? a.name}"></label>
  ${fieldErrors(errors, 'name')}
  <label>Redirect URIs <small>(one per line; matched exactly)</small><textarea name="redirect_uris" rows="3" required>${editing?.redirect_uris ?? a.redirect_uris.join('\n')}</textarea></label>
  ${fieldErrors(errors, 'redirect_uris')}
  <button type="submit">Save</button>
</form></details>`;
}

function appCard(t: Translator, a: AppView, csrf: string, flash: Flash): Html {
  return html`<article class="item" id="app-${a.client_id}">
  <div class="item-head"><h3>${a.name}</h3><span class="tag">client_id <code>${a.client_id}</code></span></div>
  <dl class="facts">
    <dt>Redirect URIs</dt><dd>${a.redirect_uris.map((u) => html`<code>${u}</code><br>`)}</dd>
    <dt>Merchandise API</dt><dd>${a.merchandise_access ? 'granted' : '—'}</dd>
    <dt>Created</dt><dd>${time(t, a.created_at)}</dd>
  </dl>
  ${editForm(a, csrf, flash)}
  <div class="actions">
    <form method="post" action="/dashboard/apps/${a.client_id}/rotate" class="inline" data-confirm="Rotate the secret? The application must be given the new one before it can obtain tokens again.">${csrfField(csrf)}<button type="submit" class="secondary">Rotate secret</button></form>
    <form method="post" action="/dashboard/apps/${a.client_id}/delete" class="inline" data-confirm="Delete this application? Every token it holds stops working.">${csrfField(csrf)}<button type="submit" class="danger">Delete</button></form>
  </div>
</article>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const user = request.sessionUser!;
  const apps = await listOwnApps(app.ctx.db, user.id);
  const csrf = reply.generateCsrf();
  const base = app.ctx.config.publicUrl;
  const createErrors = flash.edit ? undefined : flash.errors;
  const body = html`<section class="card">
<h1>Your applications</h1>
<p>Applications act for streamers through OAuth 2.0. Authorization endpoint <code>${base}/oauth/authorize</code>, token endpoint <code>${base}/oauth/token</code>, API <code>${base}/api/v1</code>. Applications that act for <em>you</em> are under <a href="/dashboard/authorized-apps">Authorized apps</a>.</p>
${notice(flash.notice)}
${flash.secret
  ? html`<div class="notice secret" role="status"><strong>Client secret for application ${flash.secret.clientId}</strong> — copy it now, it is shown only once:<br><code id="client-secret">${flash.secret.value}</code></div>`
  : ''}
${apps.length ? apps.map((a) => appCard(pageTranslator(request), a, csrf, flash)) : html`<p class="empty">You have no applications yet.</p>`}
</section>
<section class="card">
<h2>Create an application</h2>
<form method="post" action="/dashboard/apps">
  ${csrfField(csrf)}
  <label>Name <input name="name" required maxlength="100" value="${flash.form?.name ?? ''}"></label>
  ${fieldErrors(createErrors, 'name')}
  <label>Redirect URIs <small>(one per line; matched exactly)</small><textarea name="redirect_uris" rows="3" required>${flash.form?.redirect_uris ?? ''}</textarea></label>
  ${fieldErrors(createErrors, 'redirect_uris')}
  <button type="submit">Create application</button>
</form>
</section>`;
  return sendPage(request, reply, csrf, { title: 'Applications', body, status });
}

/**
 * The streamer's own OAuth applications: create (the secret is shown once), edit the name and
 * redirect URIs, rotate the secret (shown once), delete (every token of the app stops at once).
 */
export async function appsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/apps', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post('/dashboard/apps', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const name = field(request.body, 'name');
    const uris = field(request.body, 'redirect_uris');
    try {
      const { app: created, clientSecret } = await createApp(app.ctx.db, app.ctx.secrets.encryptionKey, {
        ownerId: request.sessionUser!.id,
        name,
        redirectUris: uris.split(/\r?\n/),
      });
      return render(app, request, reply, { notice: `Application ${created.name} created.`, secret: { clientId: created.client_id, value: clientSecret } }, 201);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: err.errors, form: { name, redirect_uris: uris } }, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/edit', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const clientId = idParam(request.params.id);
    const name = field(request.body, 'name');
    const uris = field(request.body, 'redirect_uris');
    try {
      await updateRedirectUris(app.ctx.db, request.sessionUser!.id, clientId, name, uris.split(/\r?\n/));
      return render(app, request, reply, { notice: 'Application saved.' });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: err.errors, edit: { clientId, name, redirect_uris: uris } }, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/rotate', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const clientId = idParam(request.params.id);
    const secret = await rotateSecret(app.ctx.db, app.ctx.secrets.encryptionKey, request.sessionUser!.id, clientId);
    return render(app, request, reply, { secret: { clientId, value: secret } });
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/delete', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const clientId = idParam(request.params.id);
    if (!clientId) throw new NotFoundError('No such application among yours.');
    await deleteApp(app.ctx.db, app.ctx.revocations, request.sessionUser!.id, clientId);
    return reply.redirect('/dashboard/apps', 303);
  });
}
