// Owns the start-up sweep of temporary upload folders: a worker killed mid-job (SIGKILL, OOM) leaves its
// `emotion-*` folder with the caller's audio behind; the next start removes every such folder older than
// a job can live, so customer audio does not pile up on disk.
import fs from 'node:fs';
import path from 'node:path';

/** Older than any job (budgets are seconds): a folder this old belongs to no running worker on this host. */
export const STALE_TEMP_AGE_MS = 10 * 60 * 1000;

/** Removes `dir/<prefix>*` folders last modified more than `olderThanMs` ago; returns how many. */
export async function sweepStaleTempDirs(dir: string, prefix: string, olderThanMs = STALE_TEMP_AGE_MS, now = Date.now()): Promise<number> {
  let removed = 0;
  let names: string[];
  try {
    names = await fs.promises.readdir(dir);
  } catch {
    return 0;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const full = path.join(dir, name);
    try {
      const stat = await fs.promises.lstat(full);
      if (!stat.isDirectory() || now - stat.mtimeMs < olderThanMs) continue;
      await fs.promises.rm(full, { recursive: true, force: true });
      removed++;
    } catch {
      // another worker removed it first, or it is not ours to read: leave it
    }
  }
  return removed;
}
