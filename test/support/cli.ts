// Runs a project CLI (tsx) as a child process, the way an operator would, and parses --json output.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { projectRoot } from '../../shared/paths';

export function runCli(
  script: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const tsx = path.join(projectRoot, 'node_modules', '.bin', 'tsx');
  return new Promise((resolve) => {
    execFile(tsx, [path.join(projectRoot, script), ...args], { env: { ...process.env, ...env }, timeout: timeoutMs }, (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr });
    });
  });
}
