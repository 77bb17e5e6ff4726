import { fireEvent, render, screen, waitFor } from '@testing-library/preact';
import { describe, expect, it } from 'vitest';
import { requests, stubFetch } from '../test/fetch';
import { auth } from '../api/client';
import { session, sessionState, signOut, workspace } from '../session';
import { SignIn } from './SignIn';

const body = { user: { id: 'u1', email: 'owner@demo.example', name: 'Owner' }, csrfToken: 'tok',
  workspaces: [{ id: 'w1', slug: 'demo', name: 'Demo', role: 'owner' }, { id: 'w2', slug: 'other', name: 'Other', role: 'member' }] };

describe('SignIn', () => {
  it('shows the server\'s one message for a refused sign-in', async () => {
    stubFetch({ 'POST /api/admin/session': { status: 401, body: { error: 'unauthorized', message: 'wrong e-mail or password' } } });
    render(<SignIn />);
    fireEvent.input(screen.getByLabelText('E-mail'), { target: { value: 'a@b.example' } });
    fireEvent.input(screen.getByLabelText('Password'), { target: { value: 'x'.repeat(12) } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('wrong e-mail or password');
    expect(sessionState.value).not.toBe('signedIn');
  });
  it('signs in: the first workspace is chosen, later writes carry the CSRF token and reads the workspace', async () => {
    stubFetch({ 'POST /api/admin/session': { body }, 'DELETE /api/admin/session': { status: 204 } });
    render(<SignIn />);
    fireEvent.input(screen.getByLabelText('E-mail'), { target: { value: 'owner@demo.example' } });
    fireEvent.input(screen.getByLabelText('Password'), { target: { value: 'correct horse battery' } });
    fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(sessionState.value).toBe('signedIn'));
    expect(session.value?.user.email).toBe('owner@demo.example');
    expect(workspace.value).toBe('demo');
    expect(auth.csrfToken).toBe('tok');
    const post = requests[0];
    expect(await post.clone().json()).toEqual({ email: 'owner@demo.example', password: 'correct horse battery' });
    await signOut();
    const del = requests[1];
    expect(del.method).toBe('DELETE');
    expect(del.headers.get('X-CSRF-Token')).toBe('tok');
    expect(del.headers.get('X-Revtrack-Workspace')).toBe('demo');
    expect(sessionState.value).toBe('signedOut');
  });
});
