// The pages of the one-time links an owner or the CLI makes: accept an invitation (a new person
// chooses a name and a password and is signed in; someone with an account gives their current
// password) and set a new password after a reset (then sign in with it).
import { useState } from 'preact/hooks';
import { acceptInvitation, completeReset } from '../session';
import { navigate, type Route } from '../router';

export function AcceptInvitation({ route }: { route: Route }) {
  const token = route.params.get('token') || '';
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    setError('');
    try { await acceptInvitation(token, name.trim(), password); navigate('/overview'); } catch (err) { setError((err as Error).message); }
  };
  return (
    <main id="main" class="signin" aria-labelledby="title">
      <h1 id="title">Accept the invitation</h1>
      {!token && <p role="alert" class="error">This link has no token: open the whole link you were given.</p>}
      <form onSubmit={submit}>
        <label for="name">Your name (for a new account)</label>
        <input id="name" autocomplete="name" value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <label for="password">Password: a new one of at least 12 characters, or your current one if you already have an account</label>
        <input id="password" type="password" autocomplete="new-password" required value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        {error && <p role="alert" class="error">{error}</p>}
        <button type="submit" disabled={!token}>Accept and sign in</button>
      </form>
    </main>
  );
}

export function ResetPassword({ route }: { route: Route }) {
  const token = route.params.get('token') || '';
  const [password, setPassword] = useState('');
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (password.length < 12) { setMsg({ ok: false, text: 'A password has at least 12 characters.' }); return; }
    try { await completeReset(token, password); setMsg({ ok: true, text: 'Your password is set; every earlier session was signed out.' }); }
    catch (err) { setMsg({ ok: false, text: (err as Error).message }); }
  };
  return (
    <main id="main" class="signin" aria-labelledby="title">
      <h1 id="title">Choose a new password</h1>
      {msg?.ok ? <>
        <p role="status" class="ok">{msg.text}</p>
        <button type="button" onClick={() => navigate('/overview')}>Go to sign-in</button>
      </> : <form onSubmit={submit}>
        <label for="password">New password (at least 12 characters)</label>
        <input id="password" type="password" autocomplete="new-password" required minLength={12} value={password} onInput={(e) => setPassword(e.currentTarget.value)} />
        {msg && <p role="alert" class="error">{msg.text}</p>}
        <button type="submit" disabled={!token}>Set the password</button>
      </form>}
    </main>
  );
}
