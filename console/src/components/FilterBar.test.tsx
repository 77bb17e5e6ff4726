import { fireEvent, render, screen } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { FilterBar } from './FilterBar';

describe('FilterBar', () => {
  it('refuses a range the API would refuse, saying why, and keeps the fragment', () => {
    location.hash = '#/overview?from=2026-01-01&to=2026-01-31';
    render(<FilterBar path="/overview" filters={{ from: '2026-01-01', to: '2026-01-31' }} apps={['demo-upsell']} />);
    fireEvent.input(screen.getByLabelText('From'), { target: { value: '2026-02-10' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    expect(screen.getByRole('alert').textContent).toMatch(/after the end/);
    expect(location.hash).toBe('#/overview?from=2026-01-01&to=2026-01-31');
  });
  it('applies a range and an app through the fragment, keeping the screen\'s own parameters', () => {
    render(<FilterBar path="/revenue" filters={{ from: '2026-01-01', to: '2026-01-31' }} apps={['demo-upsell']} extra={{ metric: 'arr' }} />);
    fireEvent.input(screen.getByLabelText('From'), { target: { value: '2026-01-10' } });
    fireEvent.click(screen.getByRole('button', { name: 'Apply' }));
    expect(location.hash).toBe('#/revenue?metric=arr&from=2026-01-10&to=2026-01-31');
    fireEvent.change(screen.getByLabelText(/App/), { target: { value: 'demo-upsell' } });
    expect(location.hash).toBe('#/revenue?metric=arr&from=2026-01-01&to=2026-01-31&app=demo-upsell');
  });
});
