import type { FastifyInstance } from 'fastify';
import { OUTPUT_CURRENCIES } from '../../domain/currency.js';
import { LOCALES, nativeName } from '../../i18n/locales.js';
import type { Translator } from '../../i18n/translator.js';
import { pageTranslator } from '../i18n.js';
import { ValidationError } from '../../domain/errors.js';
import { loginBackoff } from '../../http/login-backoff.js';
import { authenticate, createAccount } from '../../modules/accounts/accounts.service.js';
import { html } from '../html.js';
import { fieldErrors, page } from '../layout.js';
import { logIn, logOut, safeNext } from '../session.js';
import { fieldErrorTexts } from '../error-text.js';

interface SignupForm {
  email?: string;
  name?: string;
  password?: string;
  currency?: string;
  language?: string;
  next?: string;
}

function signupPage(t: Translator, csrf: string, form: SignupForm = {}, errors?: Record<string, string[]>): string {
  return page({
    t,
    title: t.t('auth.signup_title'),
    body: html`<section class="card narrow">
<h1>${t.t('auth.signup_heading')}</h1>
<form method="post" action="/signup" novalidate>
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="next" value="${form.next ?? ''}">
  <label>${t.t('auth.email')} <input type="email" name="email" autocomplete="email" required maxlength="254" value="${form.email ?? ''}"></label>
  ${fieldErrors(errors, 'email')}
  <label>${t.t('profile.name')} <small>${t.t('auth.name_hint')}</small> <input name="name" required minlength="2" maxlength="32" value="${form.name ?? ''}"></label>
  ${fieldErrors(errors, 'name')}
  <label>${t.t('auth.password')} <small>${t.t('profile.password_hint')}</small> <input type="password" name="password" autocomplete="new-password" required minlength="8"></label>
  ${fieldErrors(errors, 'password')}
  <div class="row">
    <label>${t.t('overview.currency')} <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option ${c === (form.currency ?? 'USD') ? 'selected' : ''}>${c}</option>`)}</select></label>
    <label>${t.t('lang.label')} <select name="language">${LOCALES.map((l) => html`<option value="${l}" lang="${l.replace('_', '-')}" ${l === (form.language ?? t.locale) ? 'selected' : ''}>${nativeName(l)}</option>`)}</select></label>
  </div>
  ${fieldErrors(errors, 'currency')}${fieldErrors(errors, 'language')}
  <button type="submit">${t.t('layout.sign_up')}</button>
</form>
<p>${t.rich('auth.have_account', { a: (chunks) => html`<a href="/login">${chunks}</a>` })}</p>
</section>`,
  });
}

function loginPage(t: Translator, csrf: string, email = '', next = '', error?: string): string {
  return page({
    t,
    title: t.t('layout.log_in'),
    body: html`<section class="card narrow">
<h1>${t.t('layout.log_in')}</h1>
${error ? html`<p class="error" role="alert">${error}</p>` : ''}
<form method="post" action="/login">
  <input type="hidden" name="_csrf" value="${csrf}">
  <input type="hidden" name="next" value="${next}">
  <label>${t.t('auth.email')} <input type="email" name="email" autocomplete="username" required value="${email}"></label>
  <label>${t.t('auth.password')} <input type="password" name="password" autocomplete="current-password" required></label>
  <button type="submit">${t.t('layout.log_in')}</button>
</form>
<p>${t.rich('auth.no_account', { a: (chunks) => html`<a href="/signup${next ? `?next=${encodeURIComponent(next)}` : ''}">${chunks}</a>` })}</p>
</section>`,
  });
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);


export async function authPages(app: FastifyInstance): Promise<void> {
  const backoff = loginBackoff(app);

  app.get('/signup', async (request, reply) => {
    const next = str((request.query as Record<string, unknown>).next);
    return reply.type('text/html; charset=utf-8').send(signupPage(pageTranslator(request), reply.generateCsrf(), { next }));
  });

  app.post('/signup', async (request, reply) => {
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
      return reply.status(422).type('text/html; charset=utf-8').send(signupPage(pageTranslator(request), reply.generateCsrf(), form, fieldErrorTexts(pageTranslator(request), err)));
    }
  });

  app.get('/login', async (request, reply) => {
    const next = str((request.query as Record<string, unknown>).next) ?? '';
    if (request.sessionUser) return reply.redirect(safeNext(next));
    return reply.type('text/html; charset=utf-8').send(loginPage(pageTranslator(request), reply.generateCsrf(), '', next));
  });

  app.post('/login', async (request, reply) => {
    const body = (request.body ?? {}) as Record<string, unknown>;
    const email = str(body.email) ?? '';
    const next = str(body.next) ?? '';
    const wait = await backoff.admit(request, email);
    if (wait !== null) {
      return reply
        .status(429)
        .header('retry-after', wait)
        .type('text/html; charset=utf-8')
        .send(loginPage(pageTranslator(request), reply.generateCsrf(), email, next, pageTranslator(request).t('auth.backoff', { seconds: wait })));
    }
    const user = await authenticate(app.ctx.db, email, str(body.password) ?? '');
    if (!user) {
      await backoff.failed(request, email);
      return reply.status(401).type('text/html; charset=utf-8').send(loginPage(pageTranslator(request), reply.generateCsrf(), email, next, pageTranslator(request).t('auth.bad_credentials')));
    }
    await logIn(app, reply, user.id);
    return reply.redirect(safeNext(next), 303);
  });

  app.post('/logout', async (request, reply) => {
    await logOut(app, request, reply);
    return reply.redirect('/', 303);
  });
}
