// Owns the embedded default's state file (var/local-engines.json), so a second terminal (the admin CLI,
// the replay tool) finds the engines and ports that `npm start` chose.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

export interface LocalState {
  redisUrl: string;
  mongoUri: string;
  livenessPort: number;
  emotionPort: number;
  supervisorPid: number;
  /** The local mail sink (when SMTP_URL is unset): its smtp:// URL and mailbox folder. */
  smtpUrl?: string;
  mailDir?: string;
}

const localStateFile = (varDir: string) => path.join(varDir, 'local-engines.json');

export function writeLocalState(varDir: string, state: LocalState): void {
  fs.mkdirSync(varDir, { recursive: true });
  fs.writeFileSync(localStateFile(varDir), JSON.stringify(state, null, 2));
}

export function readLocalState(varDir: string): LocalState | null {
  try {
    const state = JSON.parse(fs.readFileSync(localStateFile(varDir), 'utf8')) as LocalState;
    process.kill(state.supervisorPid, 0); // throws when that `npm start` is gone
    return state;
  } catch {
    return null;
  }
}

export function clearLocalState(varDir: string): void {
  fs.rmSync(localStateFile(varDir), { force: true });
}

const secretFile = (varDir: string) => path.join(varDir, 'app-secret');

/** The embedded default's APP_SECRET: generated once under var/ by `npm start`, read by the admin CLI. */
export function ensureLocalSecret(varDir: string): string {
  const file = secretFile(varDir);
  if (!fs.existsSync(file)) {
    fs.mkdirSync(varDir, { recursive: true });
    fs.writeFileSync(file, crypto.randomBytes(32).toString('base64url'), { mode: 0o600 });
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/** The local secret if `npm start` has made one, else null. */
export function readLocalSecret(varDir: string): string | null {
  try {
    return fs.readFileSync(secretFile(varDir), 'utf8').trim();
  } catch {
    return null;
  }
}
