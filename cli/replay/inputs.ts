// Expands the replay tool's arguments (files, folders, globs) into a sorted list of audio files.
import fs from 'node:fs';
import path from 'node:path';
import type { AudioContentType } from '../../clients/typescript/src';

const AUDIO_EXTENSIONS = ['.wav', '.aif', '.aiff', '.aifc', '.aac', '.m4a', '.mp4', '.mp3', '.wma', '.asf', '.flac'];

const CONTENT_TYPES: Record<string, AudioContentType> = {
  '.wav': 'audio/wav',
  '.aif': 'audio/aiff',
  '.aiff': 'audio/aiff',
  '.aifc': 'audio/aiff',
  '.aac': 'audio/aac',
  '.m4a': 'audio/mp4',
  '.mp4': 'audio/mp4',
  '.mp3': 'audio/mpeg',
  '.wma': 'audio/x-ms-wma',
  '.asf': 'audio/x-ms-wma',
  '.flac': 'audio/flac',
};

/** The Content-Type to send; the service detects the real format from the bytes anyway. */
export function contentTypeFor(file: string): AudioContentType {
  return CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'audio/octet-stream';
}

const isAudio = (file: string) => AUDIO_EXTENSIONS.includes(path.extname(file).toLowerCase());

function walk(dir: string, out: string[]): void {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (entry.isFile() && isAudio(full)) out.push(full);
  }
}

/** `*` and `?` within a path segment, `**` across segments. */
function globToRegExp(pattern: string): RegExp {
  let re = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      re += '.*';
      i++;
      if (pattern[i + 1] === '/') i++;
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else re += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${re}$`);
}

export function expandInputs(args: string[], cwd = process.cwd()): { files: string[]; missing: string[] } {
  const found = new Set<string>();
  const missing: string[] = [];
  for (const arg of args) {
    const abs = path.resolve(cwd, arg);
    if (/[*?]/.test(arg)) {
      const staticPart = abs.split(/[*?]/)[0]!;
      const base = staticPart.endsWith(path.sep) ? staticPart : path.dirname(staticPart);
      const all: string[] = [];
      if (fs.existsSync(base)) walk(base, all);
      const re = globToRegExp(abs);
      const matched = all.filter((f) => re.test(f));
      if (matched.length === 0) missing.push(arg);
      matched.forEach((f) => found.add(f));
    } else if (fs.existsSync(abs) && fs.statSync(abs).isDirectory()) {
      const all: string[] = [];
      walk(abs, all);
      all.forEach((f) => found.add(f));
    } else if (fs.existsSync(abs)) {
      found.add(abs);
    } else {
      missing.push(arg);
    }
  }
  return { files: [...found].sort(), missing };
}
