import { render } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { useLoad, type Load } from './useLoad';

// Every render's answer, in order, so the render right after a key change can be inspected.
function Probe({ k, seen, answers }: { k: string; seen: Load<string>[]; answers: Record<string, Promise<string>> }) {
  seen.push(useLoad(k, () => answers[k]));
  return null;
}

describe('useLoad', () => {
  it('never returns the previous key\'s answer under a new key, not even in the first render after the change', async () => {
    const seen: Load<string>[] = [];
    let resolveB!: (v: string) => void;
    const answers = { a: Promise.resolve('page 1'), b: new Promise<string>((r) => { resolveB = r; }) };
    const { rerender } = render(<Probe k="a" seen={seen} answers={answers} />);
    await answers.a;
    await new Promise((r) => setTimeout(r, 0));
    expect(seen[seen.length - 1].data).toBe('page 1');
    const before = seen.length;
    rerender(<Probe k="b" seen={seen} answers={answers} />);
    expect(seen[before]).toEqual({ loading: true });
    resolveB('page 2');
    await new Promise((r) => setTimeout(r, 0));
    expect(seen.slice(before).map((s) => s.data)).not.toContain('page 1');
    expect(seen[seen.length - 1].data).toBe('page 2');
  });
});
