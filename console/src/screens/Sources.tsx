// Sources: the workspace's tracking sources (#/sources) and one source (#/sources/{id}): create one
// for an app with its exact allowed origins, the install and server-side snippets, key rotation,
// disable/enable and a status panel that answers docs/TRACKING.md's troubleshooting from real data.
// Owners and admins act; members read (the server refuses them too: docs/SECURITY.md "Roles").
import type { Filters } from '../filters';
import type { Route } from '../router';
import { SourceDetail } from './sources/SourceDetail';
import { SourceList } from './sources/SourceList';

export function Sources({ route }: { route: Route; filters: Filters }) {
  const id = route.path.startsWith('/sources/') ? decodeURIComponent(route.path.slice('/sources/'.length)) : '';
  return id ? <SourceDetail id={id} /> : <SourceList />;
}
