// Owns the local-mode mailbox page: what the local SMTP sink received, newest first, links clickable.
import type { StoredMessage } from '../../../shared/mail/mailbox';
import { escapeHtml, html, raw } from './html';
import { authPage, type PageContext } from './layout';
import { utc } from './format';

function linkify(text: string) {
  return raw(escapeHtml(text).replace(/https?:\/\/[^\s<>"&]+(?:&amp;[^\s<>"&]+)*/g, (url) => `<a href="${url}">${url}</a>`));
}

export function mailboxPage(ctx: PageContext, o: { messages: StoredMessage[]; dir: string }): string {
  return authPage(ctx, {
    title: 'Local mailbox',
    wide: true,
    body: html`<h1>Local mailbox</h1>
<p class="lead">This page exists only when the service runs with its embedded mail sink (no <code>SMTP_URL</code>). Messages are stored in <code>${o.dir}</code>; <code>npm run -s admin -- mail list --json</code> prints them too.</p>
${
  o.messages.length === 0
    ? html`<p class="muted">No messages yet.</p>`
    : o.messages.map(
        (m, i) => html`<details class="mail"${i === 0 ? html` open` : ''}>
  <summary><strong>${m.subject}</strong><span class="muted small">to ${m.to.join(', ')} · ${utc(m.receivedAt)}</span></summary>
  <pre>${linkify(m.text)}</pre>
</details>`,
      )
}`,
  });
}
