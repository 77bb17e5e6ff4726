// The key created last in this page's life, for the AI assistant panel's configurations. It is
// held in memory only (never stored), and forgotten with the page or a workspace switch.
import { signal } from '@preact/signals';

export const justCreatedKey = signal<{ workspace: string; name: string; value: string } | null>(null);
