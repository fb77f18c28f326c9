import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LOCALES, OUTPUT_CURRENCIES } from '../../../domain/currency.js';
import { ValidationError } from '../../../domain/errors.js';
import { AVATAR_MAX, changePassword, updateProfile } from '../../../modules/accounts/profile.service.js';
import { defaultAvatarUrl } from '../../static.js';
import { html } from '../../html.js';
import { fieldErrors } from '../../layout.js';
import { requireUser, sessionToken } from '../../session.js';
import { csrfField, field, notice, sendPage, type FieldErrors } from './common.js';

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
  const user = request.sessionUser!;
  const form: ProfileForm = flash.form ?? { name: user.name, avatar: user.avatar ?? '', language: user.language, currency: user.currency };
  const csrf = reply.generateCsrf();
  const e = flash.profileErrors;
  const p = flash.passwordErrors;
  const body = html`<section class="card">
<h1>Profile</h1>
${notice(flash.notice)}
<div class="profile-head">
  <img class="avatar" src="${user.avatar ?? defaultAvatarUrl('', user.id)}" alt="" width="64" height="64" referrerpolicy="no-referrer">
  <div><strong>${user.name}</strong><br><small>${user.email} · code <code>${user.code}</code></small></div>
</div>
<form method="post" action="/dashboard/profile" novalidate>
  ${csrfField(csrf)}
  <label>Name <small>(shown to your viewers; unique; 2–32 characters)</small><input name="name" required minlength="2" maxlength="32" value="${form.name}"></label>
  ${fieldErrors(e, 'name')}
  <label>Avatar URL <small>(http or https, at most ${AVATAR_MAX} characters; empty for the default)</small><input type="url" name="avatar" maxlength="${AVATAR_MAX}" value="${form.avatar}" placeholder="https://…"></label>
  ${fieldErrors(e, 'avatar')}
  <div class="row">
    <label>Language <select name="language">${LOCALES.map((l) => html`<option${l === form.language ? html` selected` : ''}>${l}</option>`)}</select></label>
    <label>Main currency <select name="currency">${OUTPUT_CURRENCIES.map((c) => html`<option${c === form.currency ? html` selected` : ''}>${c}</option>`)}</select></label>
  </div>
  ${fieldErrors(e, 'language')}${fieldErrors(e, 'currency')}
  <p class="hint">A new main currency applies to donations from now on.</p>
  <button type="submit">Save profile</button>
</form>
</section>
<section class="card">
<h2>Change password</h2>
<form method="post" action="/dashboard/profile/password" novalidate>
  ${csrfField(csrf)}
  <input type="text" name="username" value="${user.email}" autocomplete="username" hidden>
  <label>Current password <input type="password" name="current_password" autocomplete="current-password" required></label>
  ${fieldErrors(p, 'current_password')}
  <label>New password <small>(at least 8 characters)</small><input type="password" name="password" autocomplete="new-password" required minlength="8"></label>
  ${fieldErrors(p, 'password')}
  <label>New password again <input type="password" name="password_confirmation" autocomplete="new-password" required minlength="8"></label>
  ${fieldErrors(p, 'password_confirmation')}
  <p class="hint">Your other sessions are logged out when the password changes.</p>
  <button type="submit">Change password</button>
</form>
</section>`;
  return sendPage(request, reply, csrf, { title: 'Profile', body, status });
}

/** GET/POST /dashboard/profile and POST /dashboard/profile/password (profile.service). */
export async function profilePages(app: FastifyInstance): Promise<void> {
  app.get('/dashboard/profile', { preHandler: requireUser }, (request, reply) => render(app, request, reply));

  app.post('/dashboard/profile', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    const form: ProfileForm = { name: field(request.body, 'name'), avatar: field(request.body, 'avatar'), language: field(request.body, 'language'), currency: field(request.body, 'currency') };
    try {
      request.sessionUser = await updateProfile(app.ctx.db, request.sessionUser!.id, form);
      return render(app, request, reply, { notice: 'Profile saved.' });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { profileErrors: err.errors, form }, 422);
    }
  });

  app.post('/dashboard/profile/password', { preHandler: [requireUser, app.csrfProtection] }, async (request, reply) => {
    try {
      await changePassword(
        app.ctx.db,
        request.sessionUser!.id,
        { currentPassword: field(request.body, 'current_password'), newPassword: field(request.body, 'password'), confirmation: field(request.body, 'password_confirmation') },
        sessionToken(request),
      );
      return render(app, request, reply, { notice: 'Password changed. Your other sessions have been logged out.' });
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      return render(app, request, reply, { passwordErrors: err.errors }, 422);
    }
  });
}
