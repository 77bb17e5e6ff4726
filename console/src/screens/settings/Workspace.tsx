// Workspace settings: the Partner API connection, customer exclusions, and where people live.
import { Exclusions } from './Exclusions';
import { Partner } from './Partner';

export function Workspace() {
  return (
    <>
      <Partner />
      <Exclusions />
      <section aria-labelledby="people-title">
        <h2 id="people-title">Members and invitations</h2>
        <p>Who may do what, invitations and password-reset links are on the <a href="#/people">People</a> screen (owners act there).</p>
      </section>
    </>
  );
}
