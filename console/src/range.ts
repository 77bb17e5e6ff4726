// The reporting range: inclusive UTC dates, at most 367 of them (the API's rule), `to` not after today.
export type Range = { from: string; to: string };

export const presets = [
  { id: '30d', label: 'Last 30 days', days: 30 },
  { id: '90d', label: 'Last 90 days', days: 90 },
  { id: '365d', label: 'Last 12 months', days: 365 },
] as const;

export function isoDay(d: Date): string { return d.toISOString().slice(0, 10); }

export function lastDays(days: number, today = new Date()): Range {
  const to = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()));
  const from = new Date(to.getTime() - (days - 1) * 86400000);
  return { from: isoDay(from), to: isoDay(to) };
}

// validRange says why a range is refused, or null: the API would answer 400 for the same reasons.
export function validRange(r: Range, today = new Date()): string | null {
  const re = /^\d{4}-\d{2}-\d{2}$/;
  if (!re.test(r.from) || !re.test(r.to)) return 'Dates must be YYYY-MM-DD.';
  const f = Date.parse(r.from + 'T00:00:00Z'), t = Date.parse(r.to + 'T00:00:00Z');
  if (Number.isNaN(f) || Number.isNaN(t) || isoDay(new Date(f)) !== r.from || isoDay(new Date(t)) !== r.to) return 'That date does not exist.';
  if (f > t) return 'The start is after the end.';
  if ((t - f) / 86400000 > 366) return 'A range spans at most 367 days.';
  if (r.to > isoDay(today)) return 'The end may not be after today (UTC).';
  return null;
}

// The interval a chart of the range reads best at: days up to three months, then weeks.
export function defaultInterval(r: Range): 'day' | 'week' | 'month' {
  const days = (Date.parse(r.to) - Date.parse(r.from)) / 86400000 + 1;
  return days <= 92 ? 'day' : 'week';
}
