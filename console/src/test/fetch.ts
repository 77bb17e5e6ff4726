// A fetch stand-in for component tests: answers by path from a table and records each request.
import { vi } from 'vitest';

export type Answer = { status?: number; body?: unknown };
export const requests: Request[] = [];

export function stubFetch(answers: Record<string, Answer | ((r: Request) => Answer)>) {
  requests.length = 0;
  vi.stubGlobal('fetch', vi.fn(async (input: Request) => {
    requests.push(input);
    const key = `${input.method} ${new URL(input.url).pathname}`;
    const a = answers[key];
    const got = typeof a === 'function' ? a(input) : a;
    if (!got) return new Response(JSON.stringify({ error: 'not_found', message: key }), { status: 404 });
    return new Response(got.status === 204 ? null : JSON.stringify(got.body), { status: got.status ?? 200, headers: { 'Content-Type': 'application/json' } });
  }));
}
