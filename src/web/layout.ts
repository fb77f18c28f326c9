import { english, type MessageKey, type Translator } from '../i18n/translator.js';
import { LOCALES, nativeName, bcp47 } from '../i18n/locales.js';
import { renderMessage, type Message } from '../i18n/messages.js';
import { html, jsonForScript, type Html } from './html.js';

export interface LayoutUser {
  name: string;
  role: 'admin' | 'streamer';
}

export interface PageOptions {
  /** Already in the page's language. */
  title: string;
  user?: LayoutUser | null;
  /** CSRF token for the forms of this page (the log-out form needs it whenever a user is shown). */
  csrf?: string;
  body: Html;
  /** Extra elements for <head> (our own scripts/styles only). */
  head?: Html;
  /** Path of the section being shown, to mark it in the navigation (dashboard.js marks it otherwise). */
  path?: string;
  /** The page's language (lang, dir, every shell string); English when not given. */
  t?: Translator;
}

interface NavLink {
  href: string;
  label: MessageKey;
}

/** Every dashboard section, in menu order. Admin links are shown to administrators only. */
export const DASHBOARD_NAV: readonly NavLink[] = [
  { href: '/dashboard', label: 'nav.overview' },
  { href: '/dashboard/donations', label: 'nav.donations' },
  { href: '/dashboard/goals', label: 'nav.goals' },
  { href: '/dashboard/polls', label: 'nav.polls' },
  { href: '/dashboard/widgets', label: 'nav.widgets' },
  { href: '/dashboard/moderation', label: 'nav.moderation' },
  { href: '/dashboard/merchandise', label: 'nav.merchandise' },
  { href: '/dashboard/payments', label: 'nav.payments' },
  { href: '/dashboard/apps', label: 'nav.apps' },
  { href: '/dashboard/authorized-apps', label: 'nav.authorized_apps' },
  { href: '/dashboard/webhooks', label: 'nav.webhooks' },
  { href: '/dashboard/profile', label: 'nav.profile' },
];

export const ADMIN_NAV: readonly NavLink[] = [
  { href: '/admin/users', label: 'nav.users' },
  { href: '/admin/merchants', label: 'nav.merchants' },
  { href: '/admin/rates', label: 'nav.rates' },
];

/** The section a path belongs to: the longest nav entry that is a prefix of it. */
function activeHref(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const clean = path.split('?')[0]!;
  let best: string | undefined;
  for (const { href } of [...DASHBOARD_NAV, ...ADMIN_NAV]) {
    if ((clean === href || clean.startsWith(`${href}/`)) && (!best || href.length > best.length)) best = href;
  }
  return best;
}

function navLinks(t: Translator, links: readonly NavLink[], active: string | undefined): Html {
  return html`${links.map((l) => html`<a href="${l.href}"${l.href === active ? html` aria-current="page"` : ''}>${t.t(l.label)}</a>`)}`;
}

function sectionNav(t: Translator, user: LayoutUser, path: string | undefined): Html {
  const active = activeHref(path);
  return html`<nav class="sections" aria-label="${t.t('nav.aria')}">
  ${navLinks(t, DASHBOARD_NAV, active)}
  ${user.role === 'admin' ? html`<span class="nav-group" aria-hidden="true">${t.t('nav.admin')}</span>${navLinks(t, ADMIN_NAV, active)}` : ''}
</nav>`;
}

/**
 * The page shell, in the page's language (`lang`, and `dir="rtl"` for Hebrew: app.css uses
 * logical properties, so the layout mirrors). Logged-in pages load /static/common.js and
 * /static/dashboard.js (confirmations, live updates, local times): no inline script anywhere, so
 * `script-src 'self'` is enough.
 */
export function page({ title, user, csrf, body, head, path, t = english() }: PageOptions): string {
  return html`<!doctype html>
<html lang="${t.tag}" dir="${t.dir}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t.t('layout.title', { title })}</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/app.css">
${user ? html`${scriptMessages(t, 'js')}<script src="/static/common.js" defer></script>` : ''}
${head}
${user ? html`<script src="/static/dashboard.js" defer></script>` : ''}
</head>
<body>
<header class="top">
  <a class="brand" href="/">${t.t('layout.brand')}</a>
  <nav class="account">
    ${user
      ? html`<span class="who">${user.name}${user.role === 'admin' ? html` <small class="badge">${t.t('layout.admin_badge')}</small>` : ''}</span>
        <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${csrf ?? ''}"><button class="link" type="submit">${t.t('layout.log_out')}</button></form>`
      : html`<a href="/login">${t.t('layout.log_in')}</a><a href="/signup">${t.t('layout.sign_up')}</a>`}
  </nav>
</header>
${user ? sectionNav(t, user, path) : ''}
<main>
${body}
</main>
</body>
</html>`.value;
}

/** Field-level errors beside inputs, in the `{field: [messages]}` shape services throw. */
export function fieldErrors(errors: Record<string, string[]> | undefined, field: string): Html {
  const list = errors?.[field];
  return list?.length ? html`<p class="error" role="alert">${list.join(' ')}</p>` : html``;
}

/**
 * The language switcher: a plain GET form (works without JavaScript; donor.js submits it on
 * change). Each name is written in its own language, and marked so.
 */
export function languageSwitcher(t: Translator, action: string): Html {
  return html`<form method="get" action="${action}" class="lang-switch">
  <label>${t.t('lang.label')} <select name="lang" data-autosubmit>${LOCALES.map(
    (l) => html`<option value="${l}" lang="${bcp47(l)}"${l === t.locale ? html` selected` : ''}>${nativeName(l)}</option>`,
  )}</select></label>
  <button type="submit" class="secondary">${t.t('lang.submit')}</button>
</form>`;
}

/** An error page whose message is already in the page's language. */
export function errorPage(status: number, message: string, t: Translator = english()): string {
  return page({
    t,
    title: t.t('layout.error_title', { status }),
    body: html`<section class="card"><h1>${t.t('layout.error_title', { status })}</h1><p>${message}</p><p><a href="/">${t.t('layout.error_back')}</a></p></section>`,
  });
}

const STATUS_TEXT: Record<number, MessageKey> = {
  400: 'error.400', 401: 'error.401', 403: 'error.403', 404: 'error.404', 409: 'error.409', 413: 'error.413', 415: 'error.415', 422: 'error.422', 429: 'error.429',
};

/**
 * An error page for what the server's error handler caught. A service's message (`detail`, a
 * catalog code) is said in the page's language; another message (English, the API's language)
 * comes after the status explained in the page's own words, marked as English.
 */
export function serverErrorPage(status: number, message: string, t: Translator = english(), detail?: Message): string {
  if (detail && t.translates(detail.code)) return errorPage(status, renderMessage(t, detail), t);
  if (t.locale === 'en_US') return errorPage(status, message, t);
  const key = status >= 500 ? 'error.500' : STATUS_TEXT[status];
  if (!key) return errorPage(status, message, t);
  const details = status >= 500 ? html`` : html`<p class="muted">${t.t('error.details')} <span lang="en" dir="ltr">${message}</span></p>`;
  return page({
    t,
    title: t.t('layout.error_title', { status }),
    body: html`<section class="card"><h1>${t.t('layout.error_title', { status })}</h1><p>${t.t(key)}</p>${details}<p><a href="/">${t.t('layout.error_back')}</a></p></section>`,
  });
}

/**
 * What our browser scripts need to speak the page's language: the locale and the catalog
 * messages of the given namespaces (as data, never as script), and /static/i18n.js, a module that
 * runs before the page's deferred scripts and gives them window.OpenAlertsI18n.
 */
export function scriptMessages(t: Translator, ...namespaces: string[]): Html {
  const data = { locale: t.tag, messages: t.messagesFor(...namespaces) };
  return html`<script type="application/json" id="i18n-data">${jsonForScript(data)}</script>
<script type="module" src="/static/i18n.js"></script>`;
}
