// Messages and formats of the page's language for our browser scripts (widgets, dashboard), from
// <script type="application/json" id="i18n-data">: the locale and the page's catalog messages,
// formatted with the same ICU library the server uses (intl-messageformat). A module, so it runs
// before the page's deferred scripts that use window.OpenAlertsI18n.
import { IntlMessageFormat } from '/static/vendor/intl-messageformat.js';

const node = document.getElementById('i18n-data');
const data = node ? JSON.parse(node.textContent || '{}') : {};
const locale = data.locale || document.documentElement.lang || 'en-US';
const messages = data.messages || {};
const compiled = new Map();

function message(key) {
  if (!compiled.has(key)) {
    let mf = null;
    try {
      if (typeof messages[key] === 'string') mf = new IntlMessageFormat(messages[key], locale, undefined, { ignoreTag: true });
    } catch (e) { /* a broken message reads as missing */ }
    compiled.set(key, mf);
  }
  return compiled.get(key);
}

/** The message in the page's language; `fallback` (or '') when this page was not given the key. */
function t(key, values, fallback) {
  const mf = message(key);
  if (!mf) return fallback === undefined ? '' : fallback;
  try {
    const out = mf.format(values);
    return Array.isArray(out) ? out.join('') : String(out);
  } catch (e) {
    return fallback === undefined ? '' : fallback;
  }
}

const numberFormats = new Map();
function numberFormat(options) {
  const id = JSON.stringify(options);
  if (!numberFormats.has(id)) numberFormats.set(id, new Intl.NumberFormat(locale, options));
  return numberFormats.get(id);
}

/** `1 234,50 ₽`, `$1,234.50`; whole amounts without decimals when `compact` (widgets). */
function money(amount, currency, compact) {
  const n = Number(amount);
  if (!isFinite(n)) return String(amount);
  const digits = compact && Number.isInteger(n) ? 0 : 2;
  if (!currency) return numberFormat({ minimumFractionDigits: digits, maximumFractionDigits: 2 }).format(n);
  try {
    return numberFormat({ style: 'currency', currency: currency, minimumFractionDigits: digits, maximumFractionDigits: 2 }).format(n);
  } catch (e) {
    return numberFormat({ maximumFractionDigits: 2 }).format(n) + ' ' + currency;
  }
}

function number(n, options) {
  return numberFormat(options || { maximumFractionDigits: 2 }).format(Number(n));
}

const UNITS = [['year', 31536000], ['month', 2592000], ['week', 604800], ['day', 86400], ['hour', 3600], ['minute', 60], ['second', 1]];
let relativeFormat = null;
/** "3 минуты назад", "in 2 days": the largest unit that fits. */
function relative(date, now) {
  const seconds = Math.round((date.getTime() - (now === undefined ? Date.now() : now)) / 1000);
  relativeFormat = relativeFormat || new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  for (const [unit, size] of UNITS) {
    if (Math.abs(seconds) >= size || unit === 'second') return relativeFormat.format(Math.trunc(seconds / size), unit);
  }
  return '';
}

window.OpenAlertsI18n = { locale: locale, t: t, money: money, number: number, relative: relative };
