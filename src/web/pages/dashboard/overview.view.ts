import { renderSVG } from 'uqr';
import type { Translator } from '../../../i18n/translator.js';
import { DAY_MS, type DailyDonations, type TopDonor } from '../../../modules/donations/donation-stats.repository.js';
import { MILESTONES, type Checklist } from '../../../modules/onboarding/onboarding.service.js';
import { html, unsafeRaw, type Html } from '../../html.js';

/** How many days the overview's chart covers, today included. */
export const CHART_DAYS = 30;

/**
 * The donation page's URL as a QR code, an inline SVG drawn by uqr on the server (no script, no
 * image request, nothing sent elsewhere). Four modules of quiet zone, as scanners expect.
 */
export function qrCode(url: string): Html {
  // uqr's own markup for our own URL: the URL is encoded into modules, never written as text.
  return unsafeRaw(renderSVG(url, { border: 4, ecc: 'M' }).replace('<svg ', '<svg class="qr-code" aria-hidden="true" focusable="false" '));
}

/** A read-only field with a copy button (dashboard.js copies it; `report` is told it was copied). */
export function copyRow(t: Translator, id: string, label: string, value: string, report?: string): Html {
  return html`<div class="link-row">
  <label for="${id}">${label}</label>
  <div class="copy-row"><input id="${id}" class="mono" readonly value="${value}" dir="ltr"><button type="button" class="secondary" data-copy-from="${id}" data-copied="${t.t('overview.copied')}"${report ? html` data-copy-report="${report}"` : ''}>${t.t('overview.copy')}</button></div>
</div>`;
}

const STEP_TEXT = {
  widget_added: ['overview.step.widget_added', 'overview.step.widget_added_hint'],
  test_alert_sent: ['overview.step.test_alert_sent', 'overview.step.test_alert_sent_hint'],
  link_shared: ['overview.step.link_shared', 'overview.step.link_shared_hint'],
} as const;

/** The first-hour steps, each ticked from what really happened (onboarding.service). */
export function checklist(t: Translator, list: Checklist): Html {
  const done = MILESTONES.filter((m) => list[m] !== null).length;
  return html`<section class="card" id="checklist" data-done="${done}" data-total="${MILESTONES.length}">
<h2>${t.t('overview.checklist_title')} <small class="checklist-count" id="checklist-count">${t.t('overview.checklist_count', { done, total: MILESTONES.length })}</small></h2>
<ol class="checklist">${MILESTONES.map((m) => {
    const [title, hint] = STEP_TEXT[m];
    const ticked = list[m] !== null;
    return html`<li data-step="${m}" data-done="${ticked ? '1' : '0'}">
  <span class="tick" aria-hidden="true"></span>
  <span class="step"><strong>${t.t(title)}</strong> <span class="state">${ticked ? t.t('overview.step_done') : t.t('overview.step_todo')}</span><br><small class="hint">${t.t(hint)}</small></span>
</li>`;
  })}</ol>
<p class="notice" id="checklist-all"${done === MILESTONES.length ? '' : html` hidden`}>${t.t('overview.all_done')}</p>
</section>`;
}

const CHART = { width: 600, height: 190, top: 16, plot: 140, slot: 20, bar: 14 } as const;

/**
 * Donations per day for the last CHART_DAYS UTC days, as an inline SVG bar chart: one bar per
 * day, its height the day's sum in the main currency, every bar titled with the day, sum and
 * count (hover, screen readers). Days without donations keep their slot with a zero bar.
 */
export function dailyChart(t: Translator, days: readonly DailyDonations[], today: number, currency: string): Html {
  const byDay = new Map(days.map((d) => [d.day, d]));
  const first = today - CHART_DAYS + 1;
  const max = Math.max(0, ...days.map((d) => d.total));
  const baseline = CHART.top + CHART.plot;
  const bars = [];
  for (let i = 0; i < CHART_DAYS; i++) {
    const day = first + i;
    const d = byDay.get(day) ?? { day, count: 0, total: 0 };
    const height = max > 0 ? Math.round((d.total / max) * CHART.plot * 100) / 100 : 0;
    const x = i * CHART.slot + (CHART.slot - CHART.bar) / 2;
    const label = t.t('overview.chart_bar', { day: t.day(day * DAY_MS), total: t.money(d.total, currency), count: d.count });
    bars.push(html`<rect class="bar" x="${x}" y="${baseline - height}" width="${CHART.bar}" height="${height}" data-day="${new Date(day * DAY_MS).toISOString().slice(0, 10)}" data-count="${d.count}" data-total="${d.total}"><title>${label}</title></rect>`);
  }
  const labelAt = (i: number, anchor: string) =>
    html`<text class="axis" x="${i * CHART.slot + CHART.slot / 2}" y="${baseline + 18}" text-anchor="${anchor}">${t.day((first + i) * DAY_MS)}</text>`;
  const summary = t.t('overview.chart_label', { currency, from: t.day(first * DAY_MS), to: t.day(today * DAY_MS) });
  return html`<figure class="chart">
<svg class="daily-chart" viewBox="0 0 ${CHART.width} ${CHART.height}" role="img" aria-label="${summary}" preserveAspectRatio="xMidYMid meet">
<line class="grid" x1="0" x2="${CHART.width}" y1="${CHART.top}" y2="${CHART.top}"/>
<text class="axis max" x="0" y="${CHART.top - 4}">${max > 0 ? t.money(max, currency) : ''}</text>
<line class="base" x1="0" x2="${CHART.width}" y1="${baseline}" y2="${baseline}"/>
${bars}
${labelAt(0, 'start')}${labelAt(Math.floor(CHART_DAYS / 2), 'middle')}${labelAt(CHART_DAYS - 1, 'end')}
</svg>
<figcaption class="hint">${max > 0 ? t.t('overview.chart_note', { currency }) : t.t('overview.chart_empty')}</figcaption>
</figure>`;
}

/** The donors who gave the most in the chart's period. */
export function topDonorsTable(t: Translator, donors: readonly TopDonor[], currency: string): Html {
  if (donors.length === 0) return html`<p class="empty">${t.t('overview.top_empty')}</p>`;
  const col = { donor: t.t('overview.top_col.donor'), total: t.t('overview.top_col.total'), count: t.t('overview.top_col.count') };
  return html`<table class="list top-donors"><thead><tr><th>#</th><th>${col.donor}</th><th class="num">${col.total}</th><th class="num">${col.count}</th></tr></thead>
<tbody>${donors.map(
    (d, i) => html`<tr><td>${i + 1}</td><td data-label="${col.donor}" class="donor">${d.username || t.t('widget.anonymous')}</td><td data-label="${col.total}" class="num">${t.money(d.total, currency)}</td><td data-label="${col.count}" class="num">${t.number(d.count)}</td></tr>`,
  )}</tbody></table>`;
}
