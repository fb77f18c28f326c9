import type { FastifyInstance } from 'fastify';
import { html } from '../html.js';
import { pageTranslator } from '../i18n.js';
import { page } from '../layout.js';

/** The start page; logged-in streamers go straight to their dashboard (pages/dashboard/). */
export async function homePages(app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    if (request.sessionUser) return reply.redirect('/dashboard');
    const t = pageTranslator(request);
    const body = html`<section class="card narrow"><h1>${t.t('layout.brand')}</h1>
<p>${t.t('home.lead')}</p>
<p><a class="button" href="/signup">${t.t('home.create')}</a> <a href="/login">${t.t('layout.log_in')}</a></p></section>`;
    return reply.type('text/html; charset=utf-8').send(page({ t, title: t.t('home.title'), body }));
  });
}
