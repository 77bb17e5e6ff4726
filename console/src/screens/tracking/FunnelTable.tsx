// One group's sequential journey as a table: each step's acquisitions, its conversion from the step
// before and the drop-off (how many did not go on), then qualified beside it (not a step).
import type { components } from '../../api/schema';
import { formatCount, formatPercent } from '../../format';

export type FunnelGroup = components['schemas']['TrackingFunnelResponse']['funnel']['groups'][number];
type StepName = FunnelGroup['steps'][number]['name'];

export const stepLabels: Record<StepName, string> = {
  page_view: 'Page view (first seen)', install: 'Install', trial_started: 'Trial started',
  trial_converted: 'Trial converted', paid: 'Paid',
};

// rate is n ÷ of, null (shown "—") when there is nothing to divide by.
export const rate = (n: number, of: number) => (of > 0 ? n / of : null);

// The figures of one step, the same arithmetic the browser test does with the API's numbers.
export function stepFigures(g: FunnelGroup) {
  const first = g.steps[0]?.acquisitions ?? 0;
  return g.steps.map((s, i) => {
    const prev = i === 0 ? null : g.steps[i - 1].acquisitions;
    return { name: s.name, reached: s.acquisitions, conversion: prev === null ? null : rate(s.acquisitions, prev),
      dropOff: prev === null ? null : prev - s.acquisitions, ofFirst: rate(s.acquisitions, first) };
  });
}

// sumGroups adds the groups step by step: each acquisition is in exactly one group, so the sum is
// the whole cohort's journey.
export function sumGroups(groups: FunnelGroup[]): FunnelGroup {
  const steps = (groups[0]?.steps ?? []).map((s, i) => ({ name: s.name, acquisitions: groups.reduce((n, g) => n + (g.steps[i]?.acquisitions ?? 0), 0) }));
  return { key: '', steps, qualified: groups.reduce((n, g) => n + g.qualified, 0) };
}

export function FunnelTable({ group, caption, testId }: { group: FunnelGroup; caption: string; testId: string }) {
  return (
    <table data-testid={testId} data-group={group.key} class="funnel">
      <caption>{caption}</caption>
      <thead><tr><th scope="col" class="text">Step</th><th scope="col">Acquisitions</th><th scope="col">Conversion from the step before</th>
        <th scope="col">Drop-off</th><th scope="col">Of page views</th></tr></thead>
      <tbody>
        {stepFigures(group).map((s) => (
          <tr key={s.name} data-step={s.name}>
            <th scope="row">{stepLabels[s.name]}</th>
            <td data-col="reached">{formatCount(s.reached)}</td>
            <td data-col="conversion">{formatPercent(s.conversion)}</td>
            <td data-col="drop-off">{s.dropOff === null ? '—' : formatCount(s.dropOff)}</td>
            <td data-col="of-first">{formatPercent(s.ofFirst)}</td>
          </tr>
        ))}
        <tr data-step="qualified" class="beside">
          <th scope="row">Qualified (beside the journey)</th>
          <td data-col="reached">{formatCount(group.qualified)}</td>
          <td>—</td><td>—</td>
          <td data-col="of-first">{formatPercent(rate(group.qualified, group.steps[0]?.acquisitions ?? 0))}</td>
        </tr>
      </tbody>
    </table>
  );
}
