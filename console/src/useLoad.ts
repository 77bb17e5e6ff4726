// useLoad runs an API call whenever its key changes and keeps the latest answer; an older answer
// that arrives late is dropped, so a quick change of range never shows stale numbers.
import { useEffect, useState } from 'preact/hooks';

export type Load<T> = { data?: T; error?: Error & { code?: string }; loading: boolean };

export function useLoad<T>(key: string, fn: () => Promise<T>): Load<T> {
  const [state, setState] = useState<Load<T>>({ loading: true });
  useEffect(() => {
    let live = true;
    setState((s) => ({ data: s.data, loading: true }));
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => { live = false; };
  }, [key]);
  return state;
}
