import type { DonationRow } from '../../../modules/donations/donations.table.js';
import { html, type Html } from '../../html.js';
import { money, time } from './common.js';

/**
 * One donation in the overview feed. dashboard.js builds the same markup for donations arriving
 * live (with textContent only): keep the two in step.
 */
export function donationItem(d: DonationRow): Html {
  return html`<li class="donation" data-id="${d.id}">
  <div class="donation-head"><strong class="donor">${d.username}</strong><span class="amount">${money(d.amount, d.currency)}</span></div>
  ${d.message ? html`<p class="message">${d.message}</p>` : ''}
  <div class="meta">${time(d.created_at)}${d.payin_system ? html` · <span class="payin">${d.payin_system}</span>` : ''}</div>
</li>`;
}

/** One donation as a table row of the donations page. */
export function donationRow(d: DonationRow): Html {
  return html`<tr>
  <td data-label="Date">${time(d.created_at)}</td>
  <td data-label="Donor" class="donor">${d.username}</td>
  <td data-label="Amount" class="num">${money(d.amount, d.currency)}${d.currency !== d.user_currency ? html`<br><small>${money(d.amount_in_user_currency, d.user_currency)}</small>` : ''}</td>
  <td data-label="Message" class="message">${d.message}</td>
  <td data-label="Shown">${d.is_shown ? 'yes' : 'not yet'}</td>
  <td data-label="Via">${d.payin_system ?? '—'}</td>
</tr>`;
}
