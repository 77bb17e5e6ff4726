// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { href, parseHash } from './router';
import { filtersOf } from './filters';

describe('router', () => {
  it('reads the screen and its parameters from the fragment', () => {
    const r = parseHash('#/customers/cus_1?from=2026-01-01&to=2026-01-31&app=demo-upsell');
    expect(r.path).toBe('/customers/cus_1');
    expect(filtersOf(r)).toEqual({ from: '2026-01-01', to: '2026-01-31', appId: 'demo-upsell' });
  });
  it('opens the Overview on an empty fragment, for the last 30 days', () => {
    const r = parseHash('');
    expect(r.path).toBe('/overview');
    expect(filtersOf(r, new Date('2026-11-26T00:00:00Z'))).toEqual({ from: '2026-10-28', to: '2026-11-26', appId: undefined });
  });
  it('keeps a one-time token in the fragment', () => {
    expect(parseHash('#/accept-invitation?token=abc').params.get('token')).toBe('abc');
    expect(href('/overview', { from: '2026-01-01', app: undefined })).toBe('#/overview?from=2026-01-01');
  });
});
