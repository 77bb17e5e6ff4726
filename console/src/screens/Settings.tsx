// Settings: API and MCP keys, connecting an AI assistant, the workspace's partner connection and
// exclusions, and the audit log, one tab each (#/settings/keys, /assistant, /workspace, /audit).
// Owners and admins act; members see the same read-only (the server refuses them too).
import type { Filters } from '../filters';
import type { Route } from '../router';
import { Assistant } from './settings/Assistant';
import { Audit } from './settings/Audit';
import { useRole } from './settings/common';
import { Keys } from './settings/Keys';
import { Workspace } from './settings/Workspace';

const tabs = [
  { path: '/settings/keys', label: 'API and MCP keys' },
  { path: '/settings/assistant', label: 'AI assistant' },
  { path: '/settings/workspace', label: 'Workspace' },
  { path: '/settings/audit', label: 'Audit log' },
];

export function Settings({ route }: { route: Route; filters: Filters }) {
  const { role, mayAct } = useRole();
  const path = tabs.some((t) => t.path === route.path) ? route.path : '/settings/keys';
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Settings</h1>
      <nav class="tabs" aria-label="Settings sections">
        {tabs.map((t) => <a key={t.path} href={'#' + t.path} aria-current={t.path === path ? 'page' : undefined}>{t.label}</a>)}
      </nav>
      {!mayAct && <p class="note" data-testid="read-only">You are a {role || 'member'} of this workspace: you see the settings, and owners and admins change them.</p>}
      {path === '/settings/keys' && <Keys />}
      {path === '/settings/assistant' && <Assistant />}
      {path === '/settings/workspace' && <Workspace />}
      {path === '/settings/audit' && <Audit route={route} />}
    </main>
  );
}
