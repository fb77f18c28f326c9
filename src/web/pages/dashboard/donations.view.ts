import type { DonationRow } from '../../../modules/donations/donations.table.js';
import { html, type Html } from '../../html.js';
import type { Translator } from '../../../i18n/translator.js';
import { money, time } from './common.js';

/** A donation as the dashboard shows it: moderated text, and its alert's moderation state if any. */
type ShownRow = DonationRow & { moderation?: 'published' | 'held' | 'rejected' | null };

function shownState(t: Translator, d: ShownRow): string {
  if (d.moderation === 'held') return t.t('moderation.status.held');
  if (d.moderation === 'rejected') return t.t('moderation.status.rejected');
  return d.is_shown ? t.t('donations.shown_yes') : t.t('donations.shown_not_yet');
}

/**
 * One donation in the overview feed. dashboard.js builds the same markup for donations arriving
 * live (with textContent only): keep the two in step.
 */
export function donationItem(t: Translator, d: ShownRow): Html {
  return html`<li class="donation" data-id="${d.id}">
  <div class="donation-head"><strong class="donor">${d.username}</strong><span class="amount">${money(t, d.amount, d.currency)}</span></div>
  ${d.message ? html`<p class="message">${d.message}</p>` : ''}
  <div class="meta">${time(t, d.created_at, true)}${d.payin_system ? html` · <span class="payin">${d.payin_system}</span>` : ''}</div>
</li>`;
}

/** One donation as a table row of the donations page. */
export function donationRow(t: Translator, d: ShownRow): Html {
  return html`<tr>
  <td data-label="${t.t('donations.col.date')}">${time(t, d.created_at)}</td>
  <td data-label="${t.t('donations.col.donor')}" class="donor">${d.username}</td>
  <td data-label="${t.t('donations.col.amount')}" class="num">${money(t, d.amount, d.currency)}${d.currency !== d.user_currency ? html`<br><small>${money(t, d.amount_in_user_currency, d.user_currency)}</small>` : ''}</td>
  <td data-label="${t.t('donations.col.message')}" class="message">${d.message}</td>
  <td data-label="${t.t('donations.col.shown')}">${shownState(t, d)}</td>
  <td data-label="${t.t('donations.col.via')}">${d.payin_system ?? '—'}</td>
</tr>`;
}
