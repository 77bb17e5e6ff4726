// useLoad runs an API call whenever its key changes (range, app, workspace, …) and keeps the latest
// answer. The previous answer is cleared at once and an older answer that arrives late is dropped,
// so the screen never shows one workspace's or range's numbers under another's filters.
import { useEffect, useState } from 'preact/hooks';

export type Load<T> = { data?: T; error?: Error & { code?: string }; loading: boolean };

export function useLoad<T>(key: string, fn: () => Promise<T>): Load<T> {
  const [state, setState] = useState<Load<T>>({ loading: true });
  useEffect(() => {
    let live = true;
    setState({ loading: true });
    fn().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false }),
    );
    return () => { live = false; };
  }, [key]);
  return state;
}
