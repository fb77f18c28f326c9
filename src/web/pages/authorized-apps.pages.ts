import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { formatDateTime } from '../../domain/datetime.js';
import { authorizedApps, revokeAuthorizedApp } from '../../oauth/authorized-apps.service.js';
import { SCOPES, isScope } from '../../oauth/scopes.js';
import { html } from '../html.js';
import { page } from '../layout.js';
import { requireUser } from '../session.js';

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, notice?: string) {
  const user = request.sessionUser!;
  const apps = await authorizedApps(app.ctx.db, user.id);
  const csrf = reply.generateCsrf();
  const body = html`<section class="card">
<h1>Authorized applications</h1>
${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}
${apps.length
  ? html`<table class="list"><thead><tr><th>Application</th><th>Access</th><th>Since (UTC)</th><th></th></tr></thead><tbody>
${apps.map(
  (a) => html`<tr>
  <td data-label="Application">${a.name} <small>(${a.clientId})</small></td>
  <td data-label="Access"><ul class="scopes">${a.scopes.length ? a.scopes.map((s) => html`<li title="${s}">${isScope(s) ? SCOPES[s] : s}</li>`) : html`<li>No data access</li>`}</ul></td>
  <td data-label="Since">${formatDateTime(a.since)}</td>
  <td class="actions"><form method="post" action="/dashboard/authorized-apps/${a.clientId}/revoke" class="inline" data-confirm="Revoke access? The application's tokens stop working at once.">
    <input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="danger">Revoke</button></form></td>
</tr>`,
)}
</tbody></table>`
  : html`<p>No application has access to your account.</p>`}
</section>`;
  return reply.type('text/html; charset=utf-8').send(page({ title: 'Authorized applications', user, csrf, body }));
}

/** The streamer's view of the applications acting for them, each revocable (issue 3). */
export async function authorizedAppsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/authorized-apps', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post<{ Params: { clientId: string } }>('/dashboard/authorized-apps/:clientId/revoke', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const clientId = /^\d{1,15}$/.test(request.params.clientId) ? Number(request.params.clientId) : 0;
    await revokeAuthorizedApp(app.ctx.db, app.ctx.tokens, request.sessionUser!.id, clientId);
    return reply.redirect('/dashboard/authorized-apps', 303);
  });
}
