import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LOCALES, OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { ValidationError } from '../../../domain/errors.js';
import { AVATAR_MAX, changePassword, updateProfile } from '../../../modules/accounts/profile.service.js';
import { defaultAvatarUrl } from '../../static.js';
import { redirectWithFlash, takeFlash } from '../../flash.js';
import { html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { nativeName } from '../../../i18n/locales.js';
import { pageTranslator } from '../../i18n.js';
import { sessionToken } from '../../session.js';
import { csrfField, field, notice, sendPage, type FieldErrors } from './common.js';
import { fieldErrorTexts } from '../../error-text.js';

interface ProfileForm {
  name: string;
  avatar: string;
  language: string;
  currency: string;
}

interface Flash {
  notice?: string;
  profileErrors?: FieldErrors;
  passwordErrors?: FieldErrors;
  form?: ProfileForm;
}

function render(app: FastifyInstance, request: FastifyRequest, reply: FastifyReply, flash: Flash = {}, status = 200) {
  const t = pageTranslator(request);
  const user = request.sessionUser!;
  const form: ProfileForm = flash.form ?? { name: user.name, avatar: user.avatar ?? '', language: user.language, currency: user.currency };
  const csrf = reply.generateCsrf();
  const e = flash.profileErrors;
  const p = flash.passwordErrors;
  const body = html`<section class="card">
<h1>${t.t('profile.title')}</h1>
${notice(flash.notice)}
<div class="profile-head">
  <img class="avatar" src="${user.avatar ?? defaultAvatarUrl('', user.id)}" alt="" width="64" height="64" referrerpolicy="no-referrer">
  <div><strong>${user.name}</strong><br><small>${user.email} · ${t.t('profile.code')} <code>${user.code}</code></small></div>
</div>
<form method="post" action="/dashboard/profile" novalidate>
  ${csrfField(csrf)}
  <label>${t.t('profile.name')} <small>${t.t('profile.name_hint')}</small><input name="name" required minlength="2" maxlength="32" value="${form.name}"></label>
  ${fieldErrors(e, 'name')}
  <label>${t.t('profile.avatar')} <small>${t.t('profile.avatar_hint', { max: AVATAR_MAX })}</small><input type="url" name="avatar" maxlength="${AVATAR_MAX}" value="${form.avatar}" placeholder="https://…"></label>
  ${fieldErrors(e, 'avatar')}
  <div class="row">
    <label>${t.t('lang.label')} <select name="language">${LOCALES.map((l) => html`<option value="${l}" lang="${l.replace('_', '-')}"${l === form.language ? html` selected` : ''}>${nativeName(l)}</option>`)}</select></label>
    <label>${t.t('overview.currency')} <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(e, 'language')}${fieldErrors(e, 'currency')}
  <p class="hint">${t.t('profile.currency_hint')}</p>
  <button type="submit">${t.t('profile.save')}</button>
</form>
</section>
<section class="card">
<h2>${t.t('profile.password_title')}</h2>
<form method="post" action="/dashboard/profile/password" novalidate>
  ${csrfField(csrf)}
  <input type="text" name="username" value="${user.email}" autocomplete="username" hidden>
  <label>${t.t('profile.current_password')} <input type="password" name="current_password" autocomplete="current-password" required></label>
  ${fieldErrors(p, 'current_password')}
  <label>${t.t('profile.new_password')} <small>${t.t('profile.password_hint')}</small><input type="password" name="password" autocomplete="new-password" required minlength="8"></label>
  ${fieldErrors(p, 'password')}
  <label>${t.t('profile.new_password_again')} <input type="password" name="password_confirmation" autocomplete="new-password" required minlength="8"></label>
  ${fieldErrors(p, 'password_confirmation')}
  <p class="hint">${t.t('profile.password_sessions')}</p>
  <button type="submit">${t.t('profile.change_password')}</button>
</form>
</section>`;
  return sendPage(request, reply, csrf, { title: t.t('profile.title'), body, status });
}

/** GET/POST /dashboard/profile and POST /dashboard/profile/password (profile.service). */
export async function profilePages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/profile', (request, reply) => render(app, request, reply, takeFlash(request, reply)));

  app.post('/dashboard/profile', async (request, reply) => {
    const form: ProfileForm = { name: field(request.body, 'name'), avatar: field(request.body, 'avatar'), language: field(request.body, 'language'), currency: field(request.body, 'currency') };
    try {
      request.sessionUser = await updateProfile(app.ctx.db, request.sessionUser!.id, form);
      // The page answers in the language just chosen.
      request.i18n = null;
      return redirectWithFlash(request, reply, '/dashboard/profile', { notice: pageTranslator(request).t('profile.notice.saved') });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { profileErrors: fieldErrorTexts(pageTranslator(request), err), form }, 422);
    }
  });

  app.post('/dashboard/profile/password', async (request, reply) => {
    try {
      await changePassword(
        app.ctx.db,
        request.sessionUser!.id,
        { currentPassword: field(request.body, 'current_password'), newPassword: field(request.body, 'password'), confirmation: field(request.body, 'password_confirmation') },
        sessionToken(request),
      );
      return redirectWithFlash(request, reply, '/dashboard/profile', { notice: pageTranslator(request).t('profile.notice.password') });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { passwordErrors: fieldErrorTexts(pageTranslator(request), err) }, 422);
    }
  });
}
