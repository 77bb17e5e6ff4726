// Test helper: a session in the demo workspace with one role.
import { session, workspace } from '../../session';

export function as(role: 'owner' | 'admin' | 'member') {
  session.value = { user: { id: 'u', email: 'a@b.example', name: 'A' }, csrfToken: 't', workspaces: [{ id: 'w', slug: 'demo', name: 'Demo', role }] };
  workspace.value = 'demo';
}
