// Sources: being built for issue 16 (the console, part 2); the screen replaces this file.
import type { Filters } from '../filters';
import type { Route } from '../router';

export function Sources(_: { route: Route; filters: Filters }) {
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">Sources</h1>
    </main>
  );
}
