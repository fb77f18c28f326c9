import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { msg, ValidationError } from '../../domain/errors.js';
import { setMerchandiseAccess } from '../../modules/apps/apps.service.js';
import { createMerchant, listAppsWithAccess, listMerchantViews } from '../../modules/merchants/merchants.service.js';
import { redirectWithFlash, takeFlash } from '../flash.js';
import { html } from '../html.js';
import { pageTranslator } from '../i18n.js';
import { errorPage, fieldErrors, page } from '../layout.js';
import { fieldErrorTexts } from '../error-text.js';

interface Flash {
  notice?: string;
  errors?: Record<string, string[]>;
  form?: { client_id?: string; identifier?: string; name?: string };
}

const field = (body: unknown, name: string): string => {
  const value = (body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
};

async function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const db = app.ctx.db;
  const [apps, merchants] = await Promise.all([listAppsWithAccess(db), listMerchantViews(db)]);
  const csrf = reply.generateCsrf();
  const appName = new Map(apps.map((a) => [a.client_id, a.name]));
  const t = pageTranslator(request);
  const name = t.t('profile.name');
  const body = html`<section class="card">
<h1>${t.t('apps.merchandise_api')}</h1>
${flash.notice ? html`<div class="notice" role="status">${flash.notice}</div>` : ''}
<h2>${t.t('nav.apps')}</h2>
${apps.length
  ? html`<table class="list"><thead><tr><th>client_id</th><th>${name}</th><th>${t.t('merchants.owner')}</th><th>${t.t('apps.merchandise_api')}</th><th></th></tr></thead><tbody>
${apps.map(
  (a) => html`<tr>
  <td data-label="client_id"><code>${a.client_id}</code></td>
  <td data-label="${name}">${a.name}</td>
  <td data-label="${t.t('merchants.owner')}">${a.owner_id}</td>
  <td data-label="${t.t('apps.merchandise_api')}">${a.merchandise_access ? t.t('apps.granted') : '—'}</td>
  <td class="actions"><form method="post" action="/admin/merchants/apps/${a.client_id}/access" class="inline">
    <input type="hidden" name="_csrf" value="${csrf}"><input type="hidden" name="grant" value="${a.merchandise_access ? '0' : '1'}">
    <button type="submit"${a.merchandise_access ? html` class="danger"` : ''}>${a.merchandise_access ? t.t('merchants.revoke') : t.t('merchants.grant')}</button></form></td>
</tr>`,
)}</tbody></table>`
  : html`<p>${t.t('merchants.no_apps')}</p>`}
</section>
<section class="card">
<h2>${t.t('nav.merchants')}</h2>
${merchants.length
  ? html`<table class="list"><thead><tr><th>${t.t('merchants.identifier')}</th><th>${name}</th><th>${t.t('authorized.col.app')}</th><th>${t.t('apps.created')}</th></tr></thead><tbody>
${merchants.map((m) => html`<tr><td data-label="${t.t('merchants.identifier')}"><code>${m.identifier}</code></td><td data-label="${name}">${m.name}</td><td data-label="${t.t('authorized.col.app')}">${appName.get(m.client_id) ?? ''} (<code>${m.client_id}</code>)</td><td data-label="${t.t('apps.created')}">${m.created_at}</td></tr>`)}
</tbody></table>`
  : html`<p>${t.t('merchants.none')}</p>`}
<h3>${t.t('merchants.create_title')}</h3>
<form method="post" action="/admin/merchants">
  <input type="hidden" name="_csrf" value="${csrf}">
  <label>${t.t('authorized.col.app')} <select name="client_id" required>
    ${apps.map((a) => html`<option value="${a.client_id}"${String(a.client_id) === flash.form?.client_id ? html` selected` : ''}>${a.client_id} · ${a.name}${a.merchandise_access ? '' : ` ${t.t('merchants.no_access_yet')}`}</option>`)}
  </select></label>
  ${fieldErrors(flash.errors, 'client_id')}
  <label>${t.t('merchants.identifier')} <small>${t.t('merchants.identifier_hint')}</small><input name="identifier" required maxlength="32" value="${flash.form?.identifier ?? ''}"></label>
  ${fieldErrors(flash.errors, 'identifier')}
  <label>${name} <input name="name" required maxlength="100" value="${flash.form?.name ?? ''}"></label>
  ${fieldErrors(flash.errors, 'name')}
  <button type="submit">${t.t('merchants.create')}</button>
</form>
</section>`;
  return reply.status(status).type('text/html; charset=utf-8').send(page({ t, title: t.t('nav.merchants'), user: request.sessionUser, csrf, body }));
}

export async function adminMerchantsPages(app: FastifyInstance): Promise<void> {
  app.get('/admin/merchants', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/admin/merchants', async (request, reply) => {
    const form = { client_id: field(request.body, 'client_id'), identifier: field(request.body, 'identifier'), name: field(request.body, 'name') };
    try {
      if (!/^\d{1,15}$/.test(form.client_id)) throw ValidationError.field('client_id', msg('err.merchant.choose_app'));
      const merchant = await createMerchant(app.ctx.db, { clientId: Number(form.client_id), identifier: form.identifier, name: form.name });
      return redirectWithFlash(request, reply, '/admin/merchants', { notice: pageTranslator(request).t('merchants.notice.created', { identifier: merchant.identifier }) });
    } catch (err) {
      if (err instanceof ValidationError) return render(app, request, reply, { errors: fieldErrorTexts(pageTranslator(request), err), form }, 422);
      if ((err as { status?: number }).status === 404) return render(app, request, reply, { errors: { client_id: [(err as Error).message] }, form }, 422);
      throw err;
    }
  });

  app.post<{ Params: { id: string } }>('/admin/merchants/apps/:id/access', async (request, reply) => {
    const grant = field(request.body, 'grant') === '1';
    await setMerchandiseAccess(app.ctx.db, Number(request.params.id), grant);
    return reply.redirect('/admin/merchants', 303);
  });
}
