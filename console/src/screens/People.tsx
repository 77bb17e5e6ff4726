// People: the workspace's members with their roles. Owners change roles, remove members, invite
// someone (the one-time link is shown to pass on: no e-mail is sent) and make password-reset links;
// everyone else sees the list only (the server enforces the same: docs/SECURITY.md "Roles").
import { useState } from 'preact/hooks';
import { api, unwrap } from '../api/client';
import type { components } from '../api/schema';
import { ErrorBox, Loading } from '../components/Status';
import { formatTimestamp } from '../format';
import { useLoad } from '../useLoad';
import { session, workspace } from '../session';

type Role = components['schemas']['Role'];
const roles: Role[] = ['owner', 'admin', 'member'];

export function People() {
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<{ ok: boolean; text: string; link?: string } | null>(null);
  const r = useLoad(workspace.value + tick, async () => unwrap(await api.GET('/api/admin/members')));
  const owner = session.value?.workspaces.find((w) => w.slug === workspace.value)?.role === 'owner';
  const act = async (what: () => Promise<{ text: string; link?: string }>) => {
    setNote(null);
    try { setNote({ ok: true, ...(await what()) }); setTick((t) => t + 1); } catch (err) { setNote({ ok: false, text: (err as Error).message }); }
  };
  const setRole = (userId: string, email: string, role: Role) => act(async () => {
    unwrap(await api.PUT('/api/admin/members/{userId}', { params: { path: { userId } }, body: { role } }));
    return { text: `${email} is now ${role}.` };
  });
  const remove = (userId: string, email: string) => act(async () => {
    unwrap(await api.DELETE('/api/admin/members/{userId}', { params: { path: { userId } } }));
    return { text: `${email} was removed; their sessions ended.` };
  });
  const reset = (email: string) => act(async () => {
    const { link } = unwrap(await api.POST('/api/admin/password-resets', { body: { email } }));
    return { text: `Password-reset link for ${email} (one use; pass it on yourself):`, link };
  });

  return (
    <main id="main" aria-labelledby="title">
      <h1 id="title">People</h1>
      <p class="note">A member reads the reports; an admin also manages keys, tracking sources, the partner connection and exclusions, and starts syncs;
        an owner also invites and removes people, changes roles and makes password-reset links. No e-mail is sent: pass the links on yourself.</p>
      {note && <div role={note.ok ? 'status' : 'alert'} class={note.ok ? 'ok' : 'error'}>
        <p>{note.text}</p>{note.link && <p><input readOnly aria-label="One-time link" value={note.link} size={80} data-testid="one-time-link" /></p>}</div>}
      {owner && <Invite onDone={(text, link) => { setNote({ ok: true, text, link }); setTick((t) => t + 1); }} onError={(text) => setNote({ ok: false, text })} />}
      {r.error && <ErrorBox error={r.error} />}
      {!r.data && r.loading && <Loading what="members" />}
      {r.data && <table data-testid="members">
        <caption>Members of this workspace</caption>
        <thead><tr><th scope="col">Name</th><th scope="col" class="text">E-mail</th><th scope="col" class="text">Role</th><th scope="col" class="text">Since</th>
          {owner && <th scope="col" class="text">Actions</th>}</tr></thead>
        <tbody>{r.data.members.map((m) => (
          <tr key={m.userId}><th scope="row">{m.name || '—'}</th><td class="text">{m.email}</td>
            <td class="text">{owner
              ? <select aria-label={`Role of ${m.email}`} value={m.role} onChange={(e) => setRole(m.userId, m.email, e.currentTarget.value as Role)}>
                  {roles.map((x) => <option key={x} value={x}>{x}</option>)}</select>
              : m.role}</td>
            <td class="text">{formatTimestamp(m.createdAt)}</td>
            {owner && <td class="text">
              <button type="button" onClick={() => reset(m.email)}>Reset link<span class="sr"> for {m.email}</span></button>{' '}
              <button type="button" onClick={() => remove(m.userId, m.email)}>Remove<span class="sr"> {m.email}</span></button></td>}
          </tr>
        ))}</tbody>
      </table>}
    </main>
  );
}

function Invite({ onDone, onError }: { onDone: (text: string, link: string) => void; onError: (text: string) => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('member');
  const submit = async (e: Event) => {
    e.preventDefault();
    try {
      const { link, invitation } = unwrap(await api.POST('/api/admin/invitations', { body: { email, role } }));
      onDone(`Invitation for ${invitation.email} as ${invitation.role}, valid until ${formatTimestamp(invitation.expiresAt)} (one use; pass it on yourself):`, link);
      setEmail('');
    } catch (err) { onError((err as Error).message); }
  };
  return (
    <form class="filters" onSubmit={submit} aria-label="Invite someone">
      <label>E-mail of the person to invite <input type="email" required value={email} onInput={(e) => setEmail(e.currentTarget.value)} /></label>
      <label>Role <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
        {roles.map((x) => <option key={x} value={x}>{x}</option>)}</select></label>
      <button type="submit">Invite</button>
    </form>
  );
}
