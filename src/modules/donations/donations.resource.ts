import { formatDateTime, formatNullableDateTime } from '../../domain/datetime.js';
import { toMajor } from '../../domain/money.js';
import type { DonationRow } from './donations.table.js';

/** Spec §2 "Donation alert" plus the compatibility.md §2 extras clients read. */
export interface DonationResource {
  id: number;
  name: 'donation';
  username: string;
  recipient_name: string;
  message_type: 'text' | 'audio';
  message: string;
  payin_system: { title: string } | null;
  amount: number;
  currency: string;
  amount_in_user_currency: number;
  is_shown: number;
  created_at: string;
  shown_at: string | null;
}

export function toDonationResource(row: DonationRow, recipientName: string): DonationResource {
  return {
    id: row.id,
    name: 'donation',
    username: row.username,
    recipient_name: recipientName,
    message_type: row.message_type,
    message: row.message,
    payin_system: row.payin_system === null ? null : { title: row.payin_system },
    amount: toMajor(row.amount),
    currency: row.currency,
    amount_in_user_currency: toMajor(row.amount_in_user_currency),
    is_shown: row.is_shown,
    created_at: formatDateTime(row.created_at),
    shown_at: formatNullableDateTime(row.shown_at),
  };
}
