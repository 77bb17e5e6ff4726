// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { formatCount, formatMoney, formatPercent, minorDigits } from './format';

describe('format', () => {
  it('formats minor units per currency, with the currency\'s own digits', () => {
    expect(formatMoney(123456, 'USD')).toBe('$1,234.56');
    expect(formatMoney(123456, 'EUR')).toBe('€1,234.56');
    expect(formatMoney(1234, 'JPY')).toBe('¥1,234');
    expect(minorDigits('JPY')).toBe(0);
    expect(formatMoney(-500, 'GBP')).toBe('-£5.00');
  });
  it('formats counts and rates; a null rate is a dash, not zero', () => {
    expect(formatCount(12345)).toBe('12,345');
    expect(formatPercent(0.1234)).toBe('12.3%');
    expect(formatPercent(null)).toBe('—');
  });
});
