import type { FastifyInstance } from 'fastify';
import { html } from '../html.js';
import { page } from '../layout.js';
import { requireUser } from '../session.js';

/** Start page and the dashboard entry; the full dashboard is built out by the pages issue. */
export async function homePages(app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    if (request.sessionUser) return reply.redirect('/dashboard');
    const body = html`<section class="card narrow"><h1>OpenAlerts</h1>
<p>Donation alerts for your live stream: receive donations, show alerts in OBS, and let applications act for you through OAuth 2.0.</p>
<p><a class="button" href="/signup">Create an account</a> <a href="/login">Log in</a></p></section>`;
    return reply.type('text/html; charset=utf-8').send(page({ title: 'Welcome', body }));
  });

  app.get('/dashboard', { preHandler: requireUser }, async (request, reply) => {
    const user = request.sessionUser!;
    const csrf = reply.generateCsrf();
    const body = html`<section class="card"><h1>Hello, ${user.name}</h1>
<dl class="facts"><dt>User id</dt><dd>${user.id}</dd><dt>Code</dt><dd>${user.code}</dd><dt>Main currency</dt><dd>${user.currency}</dd><dt>Role</dt><dd>${user.role}</dd></dl>
<p><a href="/dashboard/apps">Manage your applications</a></p></section>`;
    return reply.type('text/html; charset=utf-8').send(page({ title: 'Dashboard', user, csrf, body }));
  });
}
