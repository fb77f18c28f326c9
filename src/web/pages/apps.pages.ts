import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ValidationError } from '../../domain/errors.js';
import { createApp, deleteApp, listOwnApps, rotateSecret, type AppView } from '../../modules/apps/apps.service.js';
import { html, type Html } from '../html.js';
import { fieldErrors, page } from '../layout.js';
import { requireUser } from '../session.js';

interface Flash {
  secret?: { clientId: number; value: string };
  errors?: Record<string, string[]>;
  form?: { name?: string; redirect_uris?: string };
}

function appRow(app: AppView, csrf: string): Html {
  return html`<tr>
  <td data-label="Name">${app.name}</td>
  <td data-label="client_id"><code>${app.client_id}</code></td>
  <td data-label="Redirect URIs">${app.redirect_uris.map((u) => html`<code>${u}</code><br>`)}</td>
  <td data-label="Merchandise API">${app.merchandise_access ? 'granted' : '—'}</td>
  <td class="actions">
    <form method="post" action="/dashboard/apps/${app.client_id}/rotate" class="inline"><input type="hidden" name="_csrf" value="${csrf}"><button type="submit">Rotate secret</button></form>
    <form method="post" action="/dashboard/apps/${app.client_id}/delete" class="inline" data-confirm="Delete this application? Every token it holds stops working."><input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="danger">Delete</button></form>
  </td>
</tr>`;
}

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const user = request.sessionUser!;
  const apps = await listOwnApps(app.ctx.db, user.id);
  const csrf = reply.generateCsrf();
  const body = html`<section class="card">
<h1>Your applications</h1>
<p>Applications act for streamers through OAuth 2.0. Authorization endpoint <code>${app.ctx.config.publicUrl}/oauth/authorize</code>, token endpoint <code>${app.ctx.config.publicUrl}/oauth/token</code>, API <code>${app.ctx.config.publicUrl}/api/v1</code>.</p>
${flash.secret
  ? html`<div class="notice" role="status"><strong>Client secret for application ${flash.secret.clientId}</strong> — copy it now, it is shown only once:<br><code id="client-secret">${flash.secret.value}</code></div>`
  : ''}
${apps.length
  ? html`<table class="list"><thead><tr><th>Name</th><th>client_id</th><th>Redirect URIs</th><th>Merchandise API</th><th></th></tr></thead><tbody>${apps.map((a) => appRow(a, csrf))}</tbody></table>`
  : html`<p>You have no applications yet.</p>`}
</section>
<section class="card">
<h2>Create an application</h2>
<form method="post" action="/dashboard/apps">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label>Name <input name="name" required maxlength="100" value="${flash.form?.name ?? ''}"></label>
  ${fieldErrors(flash.errors, 'name')}
  <label>Redirect URIs <small>(one per line; matched exactly)</small><textarea name="redirect_uris" rows="3" required>${flash.form?.redirect_uris ?? ''}</textarea></label>
  ${fieldErrors(flash.errors, 'redirect_uris')}
  <button type="submit">Create application</button>
</form>
</section>`;
  return reply.status(status).type('text/html; charset=utf-8').send(page({ title: 'Applications', user, csrf, body }));
}

export async function appsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/apps', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post('/dashboard/apps', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const name = typeof body.name === 'string' ? body.name : '';
    const uris = typeof body.redirect_uris === 'string' ? body.redirect_uris : '';
    try {
      const { app: created, clientSecret } = await createApp(app.ctx.db, app.ctx.secrets.encryptionKey, {
        ownerId: request.sessionUser!.id,
        name,
        redirectUris: uris.split(/\r?\n/),
      });
      return render(app, request, reply, { secret: { clientId: created.client_id, value: clientSecret } }, 201);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { errors: err.errors, form: { name, redirect_uris: uris } }, 422);
    }
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/rotate', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const clientId = Number(request.params.id);
    const secret = await rotateSecret(app.ctx.db, app.ctx.secrets.encryptionKey, request.sessionUser!.id, clientId);
    return render(app, request, reply, { secret: { clientId, value: secret } });
  });

  app.post<{ Params: { id: string } }>('/dashboard/apps/:id/delete', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    await deleteApp(app.ctx.db, request.sessionUser!.id, Number(request.params.id));
    return reply.redirect('/dashboard/apps', 303);
  });
}
