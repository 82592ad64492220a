// Owns the command-line argument shape both CLIs take (the operator CLI and the replay CLI): positional words
// and --flags, nothing else.

export type Flags = Record<string, string | true>;

/** --name value / --name=value / --flag; positional words are returned in order. */
export function parseArgs(argv: string[]): { words: string[]; flags: Flags } {
  const words: string[] = [];
  const flags: Flags = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (!a.startsWith('--')) {
      words.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    if (eq > 0) flags[a.slice(2, eq)] = a.slice(eq + 1);
    else if (argv[i + 1] !== undefined && !argv[i + 1]!.startsWith('--')) flags[a.slice(2)] = argv[++i]!;
    else flags[a.slice(2)] = true;
  }
  return { words, flags };
}
