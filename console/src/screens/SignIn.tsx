// Sign-in. One message for a wrong e-mail or password (the server's; it never says which).
import { useState } from 'preact/hooks';
import { signIn } from '../session';

export function SignIn() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true); setError('');
    try { await signIn(email, password); } catch (err) {
      const e = err as Error & { retryAfter?: number };
      // Throttled: the server's message and when to try again (its Retry-After).
      setError(e.retryAfter ? `${e.message} Try again in ${e.retryAfter} s.` : e.message);
    } finally { setBusy(false); }
  };
  return (
    <main id="main" class="signin" aria-labelledby="title">
      <h1 id="title">Sign in to revtrack</h1>
      <form onSubmit={submit}>
        <label for="email">E-mail</label>
        <input id="email" name="email" type="email" autocomplete="username" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? 'Signing in…' : 'Sign in'}</button>
      </form>
    </main>
  );
}
