// The recommended verification order of docs/TRACKING.md, section 6, ticked from the source's
// status (GET /api/v1/tracking/sources/{id}/status) rather than by hand.
import type { components } from '../../api/schema';

type Status = components['schemas']['Troubleshooting'];

export type Step = { id: string; title: string; done: boolean; how: string };

export function checklist(st: Status): Step[] {
  const ce = st.clickEvidence;
  return [
    { id: 'page-view', title: 'Page view seen', done: st.pageViews.count > 0,
      how: 'Open a page of an allowed origin that has the script: a page_view arrives with the Browser badge.' },
    { id: 'verified-event', title: 'Verified event received', done: st.lifecycleEvents.count > 0,
      how: 'Send a server event (after the platform authenticated the shop) with the page\'s acquisition ID: it arrives with the Server badge.' },
    { id: 'click-evidence', title: 'Click evidence', done: ce.browserEvents > 0 && ce.lifecycleEvents > 0,
      how: 'Open the page with a gclid first, then send a verified event with that browser\'s acquisition ID: both are counted with click evidence.' },
    { id: 'ad-upload', title: 'Ad upload', done: false,
      how: 'Once an advertising connection and mapping exist, the Ads screen follows the upload queue: validated, then accepted.' },
  ];
}

// nextStep is the first step not done: what to do now.
export function nextStep(steps: Step[]): Step | undefined {
  return steps.find((s) => !s.done);
}
