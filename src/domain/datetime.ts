/** `YYYY-MM-DD HH:MM:SS` in UTC (compatibility.md §1: colons, as real clients parse). */
export function formatDateTime(epochMs: number): string {
  // The text names a whole second, which the times formatted one after another (a donation's
  // resource and its alert, a page of them) mostly share: formatted once per second.
  const second = Math.floor(epochMs / 1000);
  if (second !== lastSecond) {
    lastText = new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
    lastSecond = second;
  }
  return lastText;
}
let lastSecond = NaN;
let lastText = '';

export function formatNullableDateTime(epochMs: number | null): string | null {
  return epochMs === null ? null : formatDateTime(epochMs);
}
