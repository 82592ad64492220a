// Owns the embedded default's state file (var/local-engines.json), so a second terminal (the admin CLI,
// the replay tool) finds the engines and ports that `npm start` chose.
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

export const localStateFile = (varDir: string) => path.join(varDir, 'local-engines.json');

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
