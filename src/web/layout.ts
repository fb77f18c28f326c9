import { html, type Html } from './html.js';

export interface LayoutUser {
  name: string;
  role: 'admin' | 'streamer';
}

export interface PageOptions {
  title: string;
  user?: LayoutUser | null;
  /** CSRF token for the forms of this page (the log-out form needs it whenever a user is shown). */
  csrf?: string;
  body: Html;
  /** Extra elements for <head> (our own scripts/styles only). */
  head?: Html;
  /** Path of the section being shown, to mark it in the navigation (dashboard.js marks it otherwise). */
  path?: string;
}

interface NavLink {
  href: string;
  label: string;
}

/** Every dashboard section, in menu order. Admin links are shown to administrators only. */
export const DASHBOARD_NAV: readonly NavLink[] = [
  { href: '/dashboard', label: 'Overview' },
  { href: '/dashboard/donations', label: 'Donations' },
  { href: '/dashboard/goals', label: 'Goals' },
  { href: '/dashboard/polls', label: 'Polls' },
  { href: '/dashboard/widgets', label: 'Alerts widget' },
  { href: '/dashboard/merchandise', label: 'Merchandise' },
  { href: '/dashboard/apps', label: 'Applications' },
  { href: '/dashboard/authorized-apps', label: 'Authorized apps' },
  { href: '/dashboard/profile', label: 'Profile' },
];

export const ADMIN_NAV: readonly NavLink[] = [
  { href: '/admin/users', label: 'Users' },
  { href: '/admin/merchants', label: 'Merchants' },
  { href: '/admin/rates', label: 'Rates' },
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

function navLinks(links: readonly NavLink[], active: string | undefined): Html {
  return html`${links.map((l) => html`<a href="${l.href}"${l.href === active ? html` aria-current="page"` : ''}>${l.label}</a>`)}`;
}

function sectionNav(user: LayoutUser, path: string | undefined): Html {
  const active = activeHref(path);
  return html`<nav class="sections" aria-label="Dashboard">
  ${navLinks(DASHBOARD_NAV, active)}
  ${user.role === 'admin' ? html`<span class="nav-group" aria-hidden="true">Admin</span>${navLinks(ADMIN_NAV, active)}` : ''}
</nav>`;
}

/**
 * The page shell. Logged-in pages load /static/common.js and /static/dashboard.js (confirmations,
 * live updates, local times): no inline script anywhere, so `script-src 'self'` is enough.
 */
export function page({ title, user, csrf, body, head, path }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · OpenAlerts</title>
<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/static/app.css">
${user ? html`<script src="/static/common.js" defer></script>` : ''}
${head}
${user ? html`<script src="/static/dashboard.js" defer></script>` : ''}
</head>
<body>
<header class="top">
  <a class="brand" href="/">OpenAlerts</a>
  <nav class="account">
    ${user
      ? html`<span class="who">${user.name}${user.role === 'admin' ? html` <small class="badge">admin</small>` : ''}</span>
        <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${csrf ?? ''}"><button class="link" type="submit">Log out</button></form>`
      : html`<a href="/login">Log in</a><a href="/signup">Sign up</a>`}
  </nav>
</header>
${user ? sectionNav(user, path) : ''}
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

export function errorPage(status: number, message: string): string {
  return page({ title: `Error ${status}`, body: html`<section class="card"><h1>Error ${status}</h1><p>${message}</p><p><a href="/">Back to the start page</a></p></section>` });
}
