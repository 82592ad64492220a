// Owns the local mailbox format: one JSON file per message that the local SMTP sink stores and that
// `admin mail list` and the console's local-mode mailbox page read. Never used in production.
import fs from 'node:fs';
import path from 'node:path';

export interface StoredMessage {
  id: string;
  /** ISO 8601, when the sink received it. */
  receivedAt: string;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
}

const MESSAGE_FILE = /^\d{13}-[A-Za-z0-9_-]+\.json$/;

/** Writes atomically (rename), so a reader never sees half a message. */
export function storeMessage(dir: string, message: StoredMessage): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${Date.parse(message.receivedAt)}-${message.id}.json`);
  const tmp = `${file}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify(message, null, 2), { mode: 0o600 });
  fs.renameSync(tmp, file);
  return file;
}

/** Newest first. A missing folder is an empty mailbox. */
export function listMessages(dir: string): StoredMessage[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => MESSAGE_FILE.test(n));
  } catch {
    return [];
  }
  return names
    .sort()
    .reverse()
    .map((n) => JSON.parse(fs.readFileSync(path.join(dir, n), 'utf8')) as StoredMessage);
}

/** Absolute http(s) links in a message's text, in order (tests and operators follow them). */
export function linksIn(message: Pick<StoredMessage, 'text'>): string[] {
  return message.text.match(/https?:\/\/[^\s<>"]+/g) ?? [];
}
