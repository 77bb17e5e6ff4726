// The signed-in person: who, which workspaces with which role, and the one being looked at.
import { signal } from '@preact/signals';
import { api, auth, unwrap } from './api/client';
import type { components } from './api/schema';

export type Session = components['schemas']['Session'];

export const session = signal<Session | null>(null);
// 'unknown' until the first GET /api/admin/session answers.
export const sessionState = signal<'unknown' | 'signedIn' | 'signedOut'>('unknown');
export const workspace = signal<string>('');

const WORKSPACE_KEY = 'revtrack.workspace';

// The session's CSRF token, which the OpenAPI requires on every state-changing session request.
const csrf = () => ({ 'X-CSRF-Token': auth.csrfToken });

function adopt(s: Session) {
  auth.csrfToken = s.csrfToken;
  const kept = localStorage.getItem(WORKSPACE_KEY);
  const slug = s.workspaces.find((w) => w.slug === kept)?.slug || s.workspaces[0]?.slug || '';
  auth.workspace = slug;
  workspace.value = slug;
  session.value = s;
  sessionState.value = 'signedIn';
}

export function signedOut() {
  auth.csrfToken = '';
  auth.workspace = '';
  session.value = null;
  sessionState.value = 'signedOut';
}

export async function loadSession() {
  const r = await api.GET('/api/admin/session');
  if (r.data && r.response.ok) adopt(r.data);
  else signedOut();
}

export async function signIn(email: string, password: string) {
  adopt(unwrap(await api.POST('/api/admin/session', { body: { email, password } })));
}

export async function signOut() {
  await api.DELETE('/api/admin/session', { params: { header: csrf() } }).catch(() => undefined);
  signedOut();
}

export function switchWorkspace(slug: string) {
  localStorage.setItem(WORKSPACE_KEY, slug);
  auth.workspace = slug;
  workspace.value = slug;
}

export async function changePassword(currentPassword: string, newPassword: string) {
  unwrap(await api.PUT('/api/admin/account/password', { params: { header: csrf() }, body: { currentPassword, newPassword } }));
}

// One-time links (the token comes from the URL's fragment, never sent to a server log).
export async function acceptInvitation(token: string, name: string, password: string) {
  adopt(unwrap(await api.POST('/api/admin/invitations/accept', { body: { token, password, ...(name ? { name } : {}) } })));
}

export async function completeReset(token: string, password: string) {
  unwrap(await api.POST('/api/admin/password-resets/complete', { body: { token, password } }));
}
