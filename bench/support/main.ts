// Owns what the benchmarks under bench/ share: running a main() to an exit code, and the load line they print.
import os from 'node:os';

export const loadAvg = (): string =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

/** Runs a benchmark's main and exits (engines and sockets left open by a failure must not keep it alive). */
export function runMain(main: () => Promise<void>): void {
  main().then(
    // A benchmark that found a target missed may set process.exitCode.
    () => process.exit(process.exitCode ?? 0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
