// What the Ads screen's parts share: who may act, loading that keeps the last answer while it
// refreshes (the queue and the checklist poll), and refusals shown next to the field they concern.
import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../api/schema';
import { session, workspace } from '../../session';

export type Schemas = components['schemas'];
export type Milestone = Schemas['AdMilestone'];

export const milestones: { value: Milestone; label: string }[] = [
  { value: 'install', label: 'Install' },
  { value: 'trial_started', label: 'Trial started' },
  { value: 'trial_converted', label: 'Trial converted' },
  { value: 'qualified', label: 'Qualified' },
  { value: 'paid', label: 'Paid' },
];
export const milestoneLabel = (m: string) => milestones.find((x) => x.value === m)?.label ?? m;

// Owners and admins connect, map and retry; members read (the server refuses them too).
export function useMayAct(): { mayAct: boolean; role: string } {
  const role = session.value?.workspaces.find((w) => w.slug === workspace.value)?.role ?? '';
  return { mayAct: role === 'owner' || role === 'admin', role };
}

export type Polled<T> = { data?: T; error?: Error & { code?: string }; loading: boolean; reload: () => void };

// usePolled loads on a key change (the previous answer is cleared: another workspace's rows never
// show under this one's) and again every `every` ms while mounted, keeping the last answer on
// screen while the next one loads; an answer to an older key is dropped.
export function usePolled<T>(key: string, fn: () => Promise<T>, every = 0): Polled<T> {
  // Each answer remembers the key it was loaded for: in the render where the key has just changed,
  // the previous key's answer is already withheld.
  const [state, setState] = useState<{ key: string; data?: T; error?: Error & { code?: string }; loading: boolean }>({ key, loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => (s.key === key ? { ...s, loading: true } : { key, loading: true }));
    fn().then(
      (data) => live && setState({ key, data, loading: false }),
      (error) => live && setState((s) => ({ key, data: s.key === key ? s.data : undefined, error, loading: false })),
    );
    const id = every > 0 ? setTimeout(() => live && setTick((t) => t + 1), every) : undefined;
    return () => { live = false; if (id) clearTimeout(id); };
  }, [key, tick]);
  const reload = () => setTick((t) => t + 1);
  return state.key === key ? { data: state.data, error: state.error, loading: state.loading, reload } : { loading: true, reload };
}

// A refusal shown next to one field (or the form, when its message names none of them).
export type Refusal = { field: string; message: string };

// fieldOf names the field the API's message is about: the first rule whose pattern it matches.
export function fieldOf(message: string, rules: [RegExp, string][], fallback = 'form'): string {
  return rules.find(([re]) => re.test(message))?.[1] ?? fallback;
}

// FieldError is the refusal of one field, with the id its control names in aria-describedby.
export function FieldError({ id, refusal, field }: { id: string; refusal: Refusal | null; field: string }) {
  if (!refusal || refusal.field !== field) return null;
  return <span id={id} class="error ads-field-error" role="alert">{refusal.message}</span>;
}

export const describedBy = (id: string, refusal: Refusal | null, field: string) => (refusal?.field === field ? id : undefined);
