// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { defaultInterval, lastDays, validRange } from './range';

const today = new Date('2026-11-26T15:00:00Z');

describe('range', () => {
  it('the last N days end today (UTC) and include it', () => {
    expect(lastDays(30, today)).toEqual({ from: '2026-10-28', to: '2026-11-26' });
  });
  it('refuses what the API refuses', () => {
    expect(validRange({ from: '2026-11-01', to: '2026-11-26' }, today)).toBeNull();
    expect(validRange({ from: '2026-11-27', to: '2026-11-26' }, today)).toMatch(/after the end/);
    expect(validRange({ from: '2025-11-24', to: '2026-11-26' }, today)).toMatch(/367/);
    expect(validRange({ from: '2025-11-25', to: '2026-11-26' }, today)).toBeNull();
    expect(validRange({ from: '2026-02-30', to: '2026-03-02' }, today)).toMatch(/does not exist/);
    expect(validRange({ from: '2026-11-01', to: '2026-11-27' }, today)).toMatch(/today/);
  });
  it('charts up to three months by day, longer by week', () => {
    expect(defaultInterval({ from: '2026-09-01', to: '2026-11-26' })).toBe('day');
    expect(defaultInterval({ from: '2026-01-01', to: '2026-11-26' })).toBe('week');
  });
});
