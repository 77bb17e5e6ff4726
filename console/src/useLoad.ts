// useLoad runs an API call whenever its key changes (range, app, workspace, …) and keeps the latest
// answer. An answer is returned only under the key it was loaded for, so the render right after a
// key changes (before the effect runs) already shows loading rather than the previous answer under
// the new filters; an older answer that arrives late is dropped.
import { useEffect, useState } from 'preact/hooks';

export type Load<T> = { data?: T; error?: Error & { code?: string }; loading: boolean };

const LOADING = { loading: true } as const;

export function useLoad<T>(key: string, fn: () => Promise<T>): Load<T> {
  const [state, setState] = useState<Load<T> & { key?: string }>(LOADING);
  useEffect(() => {
    let live = true;
    setState({ loading: true, key });
    fn().then(
      (data) => live && setState({ data, loading: false, key }),
      (error) => live && setState({ error, loading: false, key }),
    );
    return () => { live = false; };
  }, [key]);
  return state.key === key ? state : LOADING;
}
