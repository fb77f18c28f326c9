import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { authorizedApps, revokeAuthorizedApp } from '../../oauth/authorized-apps.service.js';
import { html } from '../html.js';
import { pageTranslator } from '../i18n.js';
import { page } from '../layout.js';
import { scopeText } from './consent.pages.js';

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, notice?: string) {
  const user = request.sessionUser!;
  const apps = await authorizedApps(app.ctx.db, user.id);
  const csrf = reply.generateCsrf();
  const t = pageTranslator(request);
  const col = { app: t.t('authorized.col.app'), access: t.t('authorized.col.access'), since: t.t('authorized.col.since') };
  const body = html`<section class="card">
<h1>${t.t('authorized.title')}</h1>
${notice ? html`<div class="notice" role="status">${notice}</div>` : ''}
${apps.length
  ? html`<table class="list"><thead><tr><th>${col.app}</th><th>${col.access}</th><th>${col.since}</th><th></th></tr></thead><tbody>
${apps.map(
  (a) => html`<tr>
  <td data-label="${col.app}">${a.name} <small>(${a.clientId})</small></td>
  <td data-label="${col.access}"><ul class="scopes">${a.scopes.length ? a.scopes.map((s) => html`<li title="${s}">${scopeText(t, s)}</li>`) : html`<li>${t.t('authorized.no_data')}</li>`}</ul></td>
  <td data-label="${col.since}"><time datetime="${new Date(a.since).toISOString()}" data-local>${t.dateTime(a.since)} UTC</time></td>
  <td class="actions"><form method="post" action="/dashboard/authorized-apps/${a.clientId}/revoke" class="inline" data-confirm="${t.t('authorized.confirm')}">
    <input type="hidden" name="_csrf" value="${csrf}"><button type="submit" class="danger">${t.t('authorized.revoke')}</button></form></td>
</tr>`,
)}
</tbody></table>`
  : html`<p>${t.t('authorized.none')}</p>`}
</section>`;
  return reply.type('text/html; charset=utf-8').send(page({ t, title: t.t('authorized.title'), user, csrf, body }));
}

/** The streamer's view of the applications acting for them, each revocable (issue 3). */
export async function authorizedAppsPages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/authorized-apps', (request, reply) => render(app, request, reply));

  app.post<{ Params: { clientId: string } }>('/dashboard/authorized-apps/:clientId/revoke', async (request, reply) => {
    const clientId = /^\d{1,15}$/.test(request.params.clientId) ? Number(request.params.clientId) : 0;
    await revokeAuthorizedApp(app.ctx.db, app.ctx.tokens, request.sessionUser!.id, clientId);
    return reply.redirect('/dashboard/authorized-apps', 303);
  });
}
