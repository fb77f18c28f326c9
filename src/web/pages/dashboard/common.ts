import type { FastifyReply, FastifyRequest } from 'fastify';
import type { UserRow } from '../../../modules/accounts/accounts.table.js';
import { html, jsonForScript, type Html } from '../../html.js';
import type { Translator } from '../../../i18n/translator.js';
import { pageTranslator } from '../../i18n.js';
import { errorPage, page } from '../../layout.js';

export type FieldErrors = Record<string, string[]>;

/** Form and query values as strings: anything else (arrays, objects, absent) reads as ''. */
export function field(source: unknown, name: string): string {
  const value = (source as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

/** A positive integer path or form id, or 0 (which matches nothing). */
export function idParam(value: unknown): number {
  return typeof value === 'string' && /^[1-9]\d{0,14}$/.test(value) ? Number(value) : 0;
}

/** True when a script asked for JSON (fetch with `accept: application/json`) rather than a page. */
export function wantsJson(request: FastifyRequest): boolean {
  const accept = request.headers.accept ?? '';
  return accept.includes('application/json') && !accept.includes('text/html');
}

export interface DashboardPage {
  title: string;
  body: Html;
  /** Page data for dashboard.js, embedded as JSON (never as script). */
  data?: unknown;
  /** Extra <head> elements (our own scripts only). */
  head?: Html;
  status?: number;
}

/** Sends a dashboard page for the logged-in user with a fresh CSRF token. */
export function sendPage(request: FastifyRequest, reply: FastifyReply, csrf: string, view: DashboardPage): FastifyReply {
  const user = request.sessionUser!;
  const body = view.data === undefined ? view.body : html`${view.body}
<script type="application/json" id="page-data">${jsonForScript(view.data)}</script>`;
  return reply
    .status(view.status ?? 200)
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(page({ t: pageTranslator(request), title: view.title, user, csrf, body, head: view.head, path: request.url }));
}

/** preHandler: administrators only; other logged-in users get a 403 page (run after requireUser). */
export async function requireAdmin(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const user = request.sessionUser;
  if (!user || user.role === 'admin') return;
  const t = pageTranslator(request);
  const title = t.t('layout.error_title', { status: 403 });
  const body = html`<section class="card"><h1>${title}</h1><p>${t.t('dash.admin_only')}</p><p><a href="/dashboard">${t.t('dash.back_to_dashboard')}</a></p></section>`;
  await reply.status(403).type('text/html; charset=utf-8').send(page({ t, title, user, csrf: reply.generateCsrf(), body }));
}

export function notice(text: string | undefined): Html {
  return text ? html`<div class="notice" role="status">${text}</div>` : html``;
}

/**
 * A date-time in the page's language, in UTC; dashboard.js rewrites it into the viewer's local
 * time, or (`relative`) into "3 minutes ago" kept current.
 */
export function time(t: Translator, epochMs: number, relative = false): Html {
  return html`<time datetime="${new Date(epochMs).toISOString()}" ${relative ? 'data-relative' : 'data-local'}>${t.dateTime(epochMs)} UTC</time>`;
}

/** Minor units with the currency in the page's language: `1 234,50 ₽`, `$1,234.50`. */
export function money(t: Translator, minor: number, currency: string): string {
  return t.money(minor, currency);
}

/** Hidden CSRF field for a form. */
export function csrfField(csrf: string): Html {
  return html`<input type="hidden" name="_csrf" value="${csrf}">`;
}

/** Page links that keep the current filters. */
export function pager(t: Translator, path: string, query: URLSearchParams, current: number, last: number, param = 'page'): Html {
  if (last <= 1) return html``;
  const link = (n: number) => {
    const q = new URLSearchParams(query);
    q.set(param, String(n));
    return `${path}?${q.toString()}`;
  };
  return html`<nav class="pager" aria-label="${t.t('dash.pages')}">
  ${current > 1 ? html`<a href="${link(current - 1)}" rel="prev">${t.t('dash.newer')}</a>` : html`<span></span>`}
  <span>${t.t('dash.page_of', { current, last })}</span>
  ${current < last ? html`<a href="${link(current + 1)}" rel="next">${t.t('dash.older')}</a>` : html`<span></span>`}
</nav>`;
}

/** A page-number query parameter: a positive integer, 1 otherwise. */
export function pageNumber(query: unknown, param = 'page'): number {
  const n = Number.parseInt(field(query, param), 10);
  return Number.isSafeInteger(n) && n > 0 && n < 1_000_000 ? n : 1;
}

export type SessionUser = UserRow;

/** preHandler of /admin/merchants: administrators only; others get a 403 page with the merchants' wording (logged-out visitors are sent to log in first). */
export async function requireMerchantsAdmin(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (request.sessionUser && request.sessionUser.role !== 'admin') {
    const t = pageTranslator(request);
    await reply.status(403).type('text/html; charset=utf-8').send(errorPage(403, t.t('merchants.admin_only'), t));
  }
}
