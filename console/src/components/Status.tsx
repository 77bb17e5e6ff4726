// Loading, errors, and the data's own warnings: coverage and staleDataWarning are shown where a
// person sees them, above the numbers, never in a tooltip.
import type { components } from '../api/schema';
import { formatDate, formatTimestamp } from '../format';

// The parts of every reporting answer's coverage that the box shows.
type Coverage = Pick<components['schemas']['SummaryCoverage'], 'transactions' | 'lifecycle' | 'apps'>;

export function Loading({ what }: { what: string }) {
  return <p class="loading" role="status">Loading {what}…</p>;
}

export function ErrorBox({ error }: { error: Error & { code?: string } }) {
  return <p class="error" role="alert">Could not load: {error.message}{error.code ? ` (${error.code})` : ''}</p>;
}

export function StaleWarning({ warning }: { warning: string | null | undefined }) {
  if (!warning) return null;
  return <p class="warning" role="status" data-testid="stale-warning"><strong>Data may be stale:</strong> {warning}</p>;
}

const span = (c: { coverageFrom: string | null; coverageThrough: string | null }) =>
  c.coverageFrom && c.coverageThrough ? `${formatDate(c.coverageFrom)} – ${formatDate(c.coverageThrough)}` : 'no data';

export function CoverageBox({ coverage }: { coverage: Coverage | undefined }) {
  if (!coverage) return null;
  const t = coverage.transactions, l = coverage.lifecycle;
  const complete = t.complete && l.complete && !t.truncated;
  return (
    <section class={complete ? 'coverage' : 'coverage incomplete'} aria-label="Data coverage" data-testid="coverage">
      <h2>Data coverage {complete ? '' : '(incomplete)'}</h2>
      <ul>
        <li>Transactions: {span(t)}{t.complete ? '' : ', incomplete'}{t.truncated ? ', truncated' : ''}</li>
        <li>Lifecycle events: {span(l)}{l.complete ? '' : ', incomplete'}</li>
        {(coverage.apps || []).map((a) => (
          <li key={a.appId}>{a.appId}: last successful sync {formatTimestamp(a.lastSuccessfulSyncAt)}
            {a.lastSyncStatus ? ` (last run ${a.lastSyncStatus})` : ''}</li>
        ))}
      </ul>
    </section>
  );
}
