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
}

export function page({ title, user, csrf, body, head }: PageOptions): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · OpenAlerts</title>
<link rel="stylesheet" href="/static/app.css">
${head}
</head>
<body>
<header class="top">
  <a class="brand" href="/">OpenAlerts</a>
  <nav>
    ${user
      ? html`<a href="/dashboard">Dashboard</a><a href="/dashboard/apps">Applications</a>
        <form method="post" action="/logout" class="inline"><input type="hidden" name="_csrf" value="${csrf ?? ''}"><button class="link" type="submit">Log out (${user.name})</button></form>`
      : html`<a href="/login">Log in</a><a href="/signup">Sign up</a>`}
  </nav>
</header>
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
