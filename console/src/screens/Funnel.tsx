// Distribution funnel (GET /api/v1/tracking/funnel): the sequential journey page view → install →
// trial started → trial converted → paid of the acquisitions first seen in the range, per tracking
// source or first-touch channel, with step conversion and drop-off; qualified beside it. Read-only.
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { FilterBar } from '../components/FilterBar';
import { ErrorBox, Loading } from '../components/Status';
import type { Filters } from '../filters';
import { formatCount } from '../format';
import { navigate, type Route } from '../router';
import { workspace } from '../session';
import { useLoad } from '../useLoad';
import { NothingYet, sourceName, useSources } from './tracking/common';
import { FunnelTable, sumGroups } from './tracking/FunnelTable';

type GroupBy = components['schemas']['TrackingFunnelResponse']['funnel']['dimension'];

// The groupings the API takes, with what a person calls them and the name of a group without a value.
export const funnelGroups: [GroupBy, string, string][] = [
  ['source', 'Tracking source', '(no source)'], ['utm_campaign', 'First touch: UTM campaign', '(no UTM campaign)'],
  ['utm_source', 'First touch: UTM source', '(no UTM source)'], ['utm_medium', 'First touch: UTM medium', '(no UTM medium)'],
  ['tracker_ref', 'First touch: tracker ref', '(no tracker ref)'], ['click_id_type', 'First touch: click ID type (gclid, gbraid, wbraid)', '(none)'],
  ['landing_path', 'First touch: landing page path', '(no landing URL)'],
];
const windows = [7, 30, 90, 180];

export function Funnel({ route, filters }: { route: Route; filters: Filters }) {
  const groupBy = (route.params.get('groupBy') || 'source') as GroupBy;
  const windowDays = Number(route.params.get('window')) || 30;
  const sources = useSources();
  const r = useLoad(workspace.value + JSON.stringify(filters) + groupBy + windowDays, async () => unwrap(await api.GET('/api/v1/tracking/funnel', {
    params: { query: { from: filters.from, to: filters.to, groupBy, windowDays } } })));
  const f = r.data?.funnel;
  const params = { from: filters.from, to: filters.to, groupBy, window: String(windowDays) };
  const label = funnelGroups.find(([g]) => g === groupBy);
  const name = (key: string) => (groupBy === 'source' && key ? sourceName(sources, key) : key || label?.[2] || '(none)');
  return (
    <main id="main" aria-labelledby="title" tabIndex={-1}>
      <h1 id="title">Funnel</h1>
      <p>The sequential journey of the browsers first seen in the range: page view → install → trial started → trial converted →
        paid, counted in verified server events only. A step counts only after the step before it, so the numbers never rise.</p>
      <FilterBar path="/funnel" filters={filters} apps={[]} extra={{ groupBy, window: String(windowDays) }} noApp />
      <div class="filters">
        <label>Group by <select value={groupBy} onChange={(e) => navigate('/funnel', { ...params, groupBy: e.currentTarget.value })}>
          {funnelGroups.map(([g, l]) => <option key={g} value={g}>{l}</option>)}</select></label>
        <label>Events count up to <select value={String(windowDays)} onChange={(e) => navigate('/funnel', { ...params, window: e.currentTarget.value })}>
          {windows.map((d) => <option key={d} value={String(d)}>{d} days</option>)}</select> after the first page view</label>
      </div>
      <Notes />
      {r.error && <ErrorBox error={r.error} />}
      {!f && r.loading && <Loading what="the funnel" />}
      {f && f.groups.length === 0 && <NothingYet what="browser first seen" sources={sources} />}
      {f && f.groups.length > 0 && <>
        <p data-testid="funnel-summary">{formatCount(sumGroups(f.groups).steps[0]?.acquisitions ?? 0)} browsers first seen, in {formatCount(f.groups.length)} group(s) by {label?.[1] ?? groupBy}.</p>
        {f.groups.length > 1 && <FunnelTable group={sumGroups(f.groups)} caption="Every group together" testId="funnel-total" />}
        {f.groups.map((g) => <FunnelTable key={g.key} group={g} caption={`${label?.[1] ?? groupBy}: ${name(g.key)}`} testId="funnel-group" />)}
      </>}
    </main>
  );
}

function Notes() {
  return (
    <section class="legend" aria-label="What the funnel counts" data-testid="funnel-notes">
      <dl>
        <div><dt>Unit</dt><dd>one browser of one source (its acquisition ID), in the group of its source or of its first touch.</dd></div>
        <div><dt>identified</dt><dd>never counts as a conversion: it links a browser to a shop that already existed (no new install,
          trial or payment). Neither do canceled, churned or refunded.</dd></div>
        <div><dt>Qualified</dt><dd>browsers with a verified <code>qualified</code> event (your server's own rule), whatever their step: shown beside the journey, not as a step.</dd></div>
        <div><dt>Conversion, drop-off</dt><dd>a step's acquisitions ÷ the step before's; drop-off = the step before's − this step's. "—" when there is nothing to divide by.</dd></div>
      </dl>
    </section>
  );
}
