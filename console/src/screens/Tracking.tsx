// Tracking: the events that arrived (#/tracking, filtered and paged) and one acquisition's journey
// (#/tracking/acquisitions/{id}). Read-only: every member sees the same.
import type { Filters } from '../filters';
import type { Route } from '../router';
import { Events } from './tracking/Events';
import { JourneyView } from './tracking/Journey';

const JOURNEY = '/tracking/acquisitions/';

export function Tracking({ route, filters }: { route: Route; filters: Filters }) {
  if (route.path.startsWith(JOURNEY)) {
    const id = decodeURIComponent(route.path.slice(JOURNEY.length));
    const source = route.params.get('source') || undefined;
    return <JourneyView id={id} sourceId={source} back={{ from: filters.from, to: filters.to, acq: id, source }} />;
  }
  return (
    <main id="main" aria-labelledby="title" tabIndex={-1}>
      <h1 id="title">Tracking</h1>
      <p>Events as they arrive from your pages and your server, newest first. Open an acquisition ID for that browser's whole journey.</p>
      <Events route={route} filters={filters} />
    </main>
  );
}
