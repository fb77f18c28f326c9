/** `YYYY-MM-DD HH:MM:SS` in UTC (INTEROP §1: colons, as real clients parse). */
export function formatDateTime(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(0, 19).replace('T', ' ');
}

export function formatNullableDateTime(epochMs: number | null): string | null {
  return epochMs === null ? null : formatDateTime(epochMs);
}
