import type { UserRow } from '../../modules/accounts/accounts.table.js';
import { SCOPES, isScope } from '../../oauth/scopes.js';
import { html } from '../html.js';
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
export function consentPage(view: ConsentView): string {
  const body = html`<section class="card narrow consent">
<h1>Authorize <span class="app-name">${view.clientName}</span>?</h1>
<p><strong>${view.clientName}</strong> <small>(application ${view.clientId})</small> wants to act for your account <strong>${view.user.name}</strong>.</p>
${view.scopes.length
  ? html`<p>It will be able to:</p>
<ul class="scopes">${view.scopes.map((s) => html`<li>${isScope(s) ? SCOPES[s] : s} <small><code>${s}</code></small></li>`)}</ul>`
  : html`<p>It asks for no access to your data; it only learns that you authorized it.</p>`}
<p><small>You will be sent back to <code>${originOf(view.redirectUri)}</code>. You can revoke access at any time under <a href="/dashboard/authorized-apps">Authorized applications</a>.</small></p>
<form method="post" action="/oauth/authorize" class="decision">
  <input type="hidden" name="_csrf" value="${view.csrf}">
  ${Object.entries(view.fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button type="submit" name="decision" value="allow">Allow</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>
</section>`;
  return page({ title: `Authorize ${view.clientName}`, user: view.user, csrf: view.csrf, body });
}

/** An authorization request that cannot be sent back to the application (RFC 6749 §4.1.2.1). */
export function authorizeErrorPage(message: string): string {
  return page({
    title: 'Authorization error',
    body: html`<section class="card narrow"><h1>This authorization request is invalid</h1>
<p class="error">${message}</p>
<p>The application that sent you here is misconfigured. Nothing was shared with it. <a href="/">Back to the start page</a></p></section>`,
  });
}
