import { html, type Html } from '../../html.js';
import { field } from './common.js';

/**
 * A date-time input that dashboard.js shows in the viewer's local time. The server renders and
 * reads UTC; on submit the script puts the local offset into `tz_offset` (minutes east of UTC),
 * so without JavaScript the value simply is UTC.
 */
export function dateTimeInput(name: string, label: string, utcValue: string | null | undefined, hint = 'optional'): Html {
  const value = utcValue ? utcValue.replace(' ', 'T').slice(0, 16) : '';
  return html`<label>${label} <small>(${hint}; <span data-tz-hint>UTC</span>)</small><input type="datetime-local" name="${name}" value="${value}" data-utc></label>
<input type="hidden" name="tz_offset" value="0">`;
}

/** The typed date-time with the form's `tz_offset` applied, as an ISO 8601 string with an offset. */
export function dateTimeWithOffset(body: unknown, name: string): string {
  const value = field(body, name).trim();
  if (!value) return '';
  const minutes = Number.parseInt(field(body, 'tz_offset'), 10);
  if (!Number.isInteger(minutes) || Math.abs(minutes) > 14 * 60 || !/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2})?$/.test(value)) return value;
  const sign = minutes < 0 ? '-' : '+';
  const abs = Math.abs(minutes);
  return `${value.replace(' ', 'T')}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}

/** A major-unit amount for an input's value: 12.5 → "12.50". */
export function amountValue(major: number | undefined): string {
  return major === undefined ? '' : major.toFixed(2);
}
