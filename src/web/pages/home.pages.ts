import type { FastifyInstance } from 'fastify';
import { html } from '../html.js';
import { page } from '../layout.js';

/** The start page; logged-in streamers go straight to their dashboard (pages/dashboard/). */
export async function homePages(app: FastifyInstance): Promise<void> {
  app.get('/', async (request, reply) => {
    if (request.sessionUser) return reply.redirect('/dashboard');
    const body = html`<section class="card narrow"><h1>OpenAlerts</h1>
<p>Donation alerts for your live stream: receive donations, show alerts in OBS, and let applications act for you through OAuth 2.0.</p>
<p><a class="button" href="/signup">Create an account</a> <a href="/login">Log in</a></p></section>`;
    return reply.type('text/html; charset=utf-8').send(page({ title: 'Welcome', body }));
  });
}
