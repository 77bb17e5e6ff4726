// My account: who is signed in and a password change (the server ends every other session).
import { useState } from 'preact/hooks';
import { changePassword, session } from '../session';

export function Account() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [msg, setMsg] = useState<{ ok: boolean; text: string } | null>(null);
  const s = session.value!;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (next.length < 12) { setMsg({ ok: false, text: 'A password has at least 12 characters.' }); return; }
    try { await changePassword(current, next); setMsg({ ok: true, text: 'Password changed; your other sessions were signed out.' }); setCurrent(''); setNext(''); }
    catch (err) { setMsg({ ok: false, text: (err as Error).message }); }
  };
  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">My account</h1>
      <dl class="facts"><dt>Name</dt><dd>{s.user.name}</dd><dt>E-mail</dt><dd>{s.user.email}</dd>
        <dt>Workspaces</dt><dd>{s.workspaces.map((w) => `${w.name} (${w.role})`).join(', ')}</dd></dl>
      <h2>Change password</h2>
      <form onSubmit={submit}>
        <label for="current">Current password</label>
        <input id="current" type="password" autocomplete="current-password" required value={current} onInput={(e) => setCurrent(e.currentTarget.value)} />
        <label for="new">New password (at least 12 characters)</label>
        <input id="new" type="password" autocomplete="new-password" required minLength={12} value={next} onInput={(e) => setNext(e.currentTarget.value)} />
        {msg && <p role={msg.ok ? 'status' : 'alert'} class={msg.ok ? 'ok' : 'error'}>{msg.text}</p>}
        <button type="submit">Change password</button>
      </form>
    </main>
  );
}
