import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { SCOPES, isScope } from '../../oauth/scopes.js';
import { html } from '../html.js';
import { renderMessage, type Message } from '../../i18n/messages.js';
import { english, type Translator } from '../../i18n/translator.js';
import { page } from '../layout.js';

export interface ConsentView {
  user: UserRow;
  csrf: string;
  clientName: string;
  clientId: number;
  redirectUri: string;
  scopes: readonly string[];
  /** The validated authorization request, posted back with the decision. */
  fields: Record<string, string>;
}

function originOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host ? `${url.protocol}//${url.host}` : url.protocol;
  } catch {
    return uri;
  }
}

/**
 * The consent page (issue 3): names the application, lists each scope in plain words, Allow/Deny.
 * The application name is chosen by its developer: hostile input, escaped like everything else.
 */
/** A scope in plain words of the reader's language (the catalog's `scope.*`), else its name. */
export function scopeText(t: Translator, scope: string): string {
  const key = `scope.${scope}`;
  return isScope(scope) && t.has(key) ? t.t(key) : isScope(scope) ? SCOPES[scope] : scope;
}

/** In the logged-in user's language (their profile setting: the page's language, `t`). */
export function consentPage(view: ConsentView, t: Translator): string {
  const strong = (chunks: unknown) => html`<strong>${chunks as string}</strong>`;
  const body = html`<section class="card narrow consent">
<h1>${t.rich('consent.heading', { app: view.clientName, name: (chunks) => html`<span class="app-name">${chunks}</span>` })}</h1>
<p>${t.rich('consent.wants', { app: view.clientName, id: view.clientId, user: view.user.name, b: strong, small: (chunks) => html`<small>${chunks}</small>` })}</p>
${view.scopes.length
  ? html`<p>${t.t('consent.able')}</p>
<ul class="scopes">${view.scopes.map((s) => html`<li>${scopeText(t, s)} <small><code>${s}</code></small></li>`)}</ul>`
  : html`<p>${t.t('consent.no_access')}</p>`}
<p><small>${t.rich('consent.sent_back', { origin: originOf(view.redirectUri), code: (chunks) => html`<code>${chunks}</code>`, a: (chunks) => html`<a href="/dashboard/authorized-apps">${chunks}</a>` })}</small></p>
<form method="post" action="/oauth/authorize" class="decision">
  <input type="hidden" name="_csrf" value="${view.csrf}">
  ${Object.entries(view.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button type="submit" name="decision" value="allow">${t.t('consent.allow')}</button>
  <button type="submit" name="decision" value="deny" class="secondary">${t.t('consent.deny')}</button>
</form>
</section>`;
  return page({ t, title: t.t('consent.title', { app: view.clientName }), user: view.user, csrf: view.csrf, body });
}

/**
 * An authorization request that cannot be sent back to the application (RFC 6749 §4.1.2.1). The
 * reason comes from the OAuth checks, in English, and is marked so on a page in another language.
 */
export function authorizeErrorPage(detail: Message | string, t: Translator = english()): string {
  // A refusal of our own is said in the user's language; an OAuth error's description is the
  // RFC/league English clients see too, so it is marked as English.
  const translated = typeof detail !== 'string';
  return page({
    t,
    title: t.t('consent.error_title'),
    body: html`<section class="card narrow"><h1>${t.t('consent.error_heading')}</h1>
<p class="error"${translated || t.locale === 'en_US' ? '' : html` lang="en" dir="ltr"`}>${translated ? renderMessage(t, detail) : detail}</p>
<p>${t.t('consent.error_text')} <a href="/">${t.t('layout.error_back')}</a></p></section>`,
  });
}
