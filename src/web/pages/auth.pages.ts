import type { FastifyInstance } from 'fastify';
import { LOCALES, OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { ValidationError } from '../../domain/errors.js';
import { loginBackoff } from '../../http/login-backoff.js';
import { authenticate, createAccount } from '../../modules/accounts/accounts.service.js';
import { html } from '../html.js';
import { fieldErrors, page } from '../layout.js';
import { logIn, logOut, safeNext } from '../session.js';

interface SignupForm {
  email?: string;
  name?: string;
  password?: string;
  currency?: string;
  language?: string;
  next?: string;
}

function signupPage(csrf: string, form: SignupForm = {}, errors?: Record<string, string[]>): string {
  return page({
    title: 'Sign up',
    body: html`<section class="card narrow">
<h1>Create your streamer account</h1>
<form method="post" action="/signup" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="next" value="${form.next ?? ''}">
  <label>E-mail <input type="email" name="email" autocomplete="email" required maxlength="254" value="${form.email ?? ''}"></label>
  ${fieldErrors(errors, 'email')}
  <label>Name <small>(shown to your viewers; 2–32 characters)</small> <input name="name" required minlength="2" maxlength="32" value="${form.name ?? ''}"></label>
  ${fieldErrors(errors, 'name')}
  <label>Password <small>(at least 8 characters)</small> <input type="password" name="password" autocomplete="new-password" required minlength="8"></label>
  ${fieldErrors(errors, 'password')}
  <div class="row">
    <label>Main currency <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option ${c === (form.currency ?? 'USD') ? 'selected' : ''}>${c}</option>`)}</select></label>
    <label>Language <select name="language">${LOCALES.map((l) => html`<option ${l === (form.language ?? 'en_US') ? 'selected' : ''}>${l}</option>`)}</select></label>
  </div>
  ${fieldErrors(errors, 'currency')}${fieldErrors(errors, 'language')}
  <button type="submit">Sign up</button>
</form>
<p>Already have an account? <a href="/login">Log in</a>.</p>
</section>`,
  });
}

function loginPage(csrf: string, email = '', next = '', error?: string): string {
  return page({
    title: 'Log in',
    body: html`<section class="card narrow">
<h1>Log in</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="next" value="${next}">
  <label>E-mail <input type="email" name="email" autocomplete="username" required value="${email}"></label>
  <label>Password <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">Log in</button>
</form>
<p>No account yet? <a href="/signup${next ? `?next=${encodeURIComponent(next)}` : ''}">Sign up</a>.</p>
</section>`,
  });
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/**
 * Per IP (rate-limit.ts): sign-up runs scrypt on every post, log-in is where passwords are guessed.
 * A failing counter store lets posts through rather than failing them.
 */
const SIGNUP_LIMIT = { max: 10, timeWindow: 15 * 60_000, skipOnError: true };
const LOGIN_LIMIT = { max: 10, timeWindow: 60_000, skipOnError: true };

export async function authPages(app: FastifyInstance): Promise<void> {
  const backoff = loginBackoff(app);

  app.get('/signup', async (request, reply) => {
    const next = str((request.query as Record<string, unknown>).next);
    return reply.type('text/html; charset=utf-8').send(signupPage(reply.generateCsrf(), { next }));
  });

  app.post('/signup', { preHandler: app.csrfProtection, config: { rateLimit: SIGNUP_LIMIT } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const form: SignupForm = { email: str(body.email), name: str(body.name), password: str(body.password), currency: str(body.currency), language: str(body.language), next: str(body.next) };
    try {
      const user = await createAccount(app.ctx.db, {
        email: form.email ?? '',
        name: form.name ?? '',
        password: form.password ?? '',
        currency: form.currency || undefined,
        language: form.language || undefined,
      });
      await logIn(app, reply, user.id);
      return reply.redirect(safeNext(form.next), 303);
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return reply.status(422).type('text/html; charset=utf-8').send(signupPage(reply.generateCsrf(), form, err.errors));
    }
  });

  app.get('/login', async (request, reply) => {
    const next = str((request.query as Record<string, unknown>).next) ?? '';
    if (request.sessionUser) return reply.redirect(safeNext(next));
    return reply.type('text/html; charset=utf-8').send(loginPage(reply.generateCsrf(), '', next));
  });

  app.post('/login', { preHandler: app.csrfProtection, config: { rateLimit: LOGIN_LIMIT } }, async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const email = str(body.email) ?? '';
    const next = str(body.next) ?? '';
    const wait = await backoff.admit(request, email);
    if (wait !== null) {
      return reply
        .status(429)
        .header('retry-after', wait)
        .type('text/html; charset=utf-8')
        .send(loginPage(reply.generateCsrf(), email, next, `Too many failed log-ins for this account. Try again in ${wait} seconds.`));
    }
    const user = await authenticate(app.ctx.db, email, str(body.password) ?? '');
    if (!user) {
      await backoff.failed(request, email);
      return reply.status(401).type('text/html; charset=utf-8').send(loginPage(reply.generateCsrf(), email, next, 'These credentials do not match our records.'));
    }
    await logIn(app, reply, user.id);
    return reply.redirect(safeNext(next), 303);
  });

  app.post('/logout', { preHandler: app.csrfProtection }, async (request, reply) => {
    await logOut(app, request, reply);
    return reply.redirect('/', 303);
  });
}
