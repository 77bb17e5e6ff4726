// Who may change sources, and the private key that was just shown: kept outside the screens so that
// creating a source on the list can show its key once on the source's own page.
import { signal } from '@preact/signals';
import { session, workspace } from '../../session';

export function canManage(): boolean {
  const role = session.value?.workspaces.find((w) => w.slug === workspace.value)?.role;
  return role === 'owner' || role === 'admin';
}

// The private key of the last creation or rotation, for its source only; the page that shows it
// clears it when it goes away, so it is never shown twice.
export const freshKey = signal<{ sourceId: string; privateKey: string; why: string } | null>(null);

// fieldOf says which field a refusal of the API concerns, from its message (the API names the
// field or the value it refused), so that the message is shown next to that field.
export function fieldOf(message: string): 'allowedOrigins' | 'appId' | 'name' | '' {
  if (/origin/i.test(message)) return 'allowedOrigins';
  if (/\bapp\b|appId/i.test(message)) return 'appId';
  if (/\bname\b/i.test(message)) return 'name';
  return '';
}
