// Range picker and app filter. Changing them rewrites the fragment, which every screen reads.
import { useState } from 'preact/hooks';
import { lastDays, presets, validRange } from '../range';
import { filterParams, type Filters } from '../filters';
import { navigate } from '../router';

// noApp: the screen's API takes no app (the tracking screens filter by source instead).
type Props = { path: string; filters: Filters; apps: string[]; extra?: Record<string, string | undefined>; noApp?: boolean };

export function FilterBar({ path, filters, apps, extra, noApp }: Props) {
  const [from, setFrom] = useState(filters.from);
  const [to, setTo] = useState(filters.to);
  const [problem, setProblem] = useState<string | null>(null);
  const go = (f: Filters) => navigate(path, { ...extra, ...filterParams(f) });

  const apply = (e: Event) => {
    e.preventDefault();
    const why = validRange({ from, to });
    setProblem(why);
    if (!why) go({ ...filters, from, to });
  };
  const preset = (days: number) => {
    const r = lastDays(days);
    setFrom(r.from); setTo(r.to); setProblem(null);
    go({ ...filters, ...r });
  };

  return (
    <form class="filters" onSubmit={apply} aria-label="Filters">
      <div class="presets" role="group" aria-label="Range presets">
        {presets.map((p) => (
          <button type="button" key={p.id} onClick={() => preset(p.days)}>{p.label}</button>
        ))}
      </div>
      <label>From <input type="date" name="from" value={from} onInput={(e) => setFrom(e.currentTarget.value)} required /></label>
      <label>To <input type="date" name="to" value={to} onInput={(e) => setTo(e.currentTarget.value)} required /></label>
      <button type="submit">Apply</button>
      {!noApp && <label>App{' '}
        <select name="app" value={filters.appId || ''} onChange={(e) => go({ ...filters, appId: e.currentTarget.value || undefined })}>
          <option value="">All apps</option>
          {apps.map((a) => <option key={a} value={a}>{a}</option>)}
        </select>
      </label>}
      {problem && <p role="alert" class="error">{problem}</p>}
    </form>
  );
}
