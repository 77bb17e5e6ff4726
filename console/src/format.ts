// Numbers as a person reads them. Money is integer minor units of ONE currency: formatted per
// currency and never added across currencies (docs/METRICS.md). The locale is fixed so that the
// browser tests can compare the screen with the API's numbers byte for byte.
export const LOCALE = 'en-US';

const money = new Map<string, Intl.NumberFormat>();

// Minor units per major unit for a currency (JPY has none, most have two).
export function minorDigits(currency: string): number {
  return new Intl.NumberFormat(LOCALE, { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

export function formatMoney(cents: number, currency: string): string {
  let f = money.get(currency);
  if (!f) {
    f = new Intl.NumberFormat(LOCALE, { style: 'currency', currency });
    money.set(currency, f);
  }
  return f.format(cents / 10 ** minorDigits(currency));
}

const count = new Intl.NumberFormat(LOCALE);
export function formatCount(n: number): string { return count.format(n); }

// A rate or share (0.25 → "25.0%"); null (undefined for the data) → an em dash.
export function formatPercent(x: number | null | undefined): string {
  if (x === null || x === undefined) return '—';
  return new Intl.NumberFormat(LOCALE, { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(x);
}

export function formatDate(iso: string): string {
  const d = new Date(iso.length === 10 ? iso + 'T00:00:00Z' : iso);
  return d.toLocaleDateString(LOCALE, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
}

export function formatTimestamp(iso: string | null | undefined): string {
  if (!iso) return '—';
  return new Date(iso).toLocaleString(LOCALE, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }) + ' UTC';
}
