// Owns our Lua scripts and how they reach Redis: each is a file in shared/lua/ named
// `<owner>-<name>-<numberOfKeys>.lua` with a KEYS/ARGV/returns header, and `--- @include "name"` fragments from
// shared/lua/includes/ (the convention: docs/STYLE.md). `luaScript(name)` reads and expands a file once at module
// load; a call must declare exactly the key count its name states (else it throws before Redis is asked) and goes
// by EVALSHA, falling back once to EVAL on NOSCRIPT (first use, a restart, SCRIPT FLUSH), which loads it again.
// `npm run build` copies shared/lua/ into dist/shared/lua/ beside this module's compiled form.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';

type Arg = string | number | Buffer;

/** Where the .lua files are, beside this module (in the sources and in dist/). */
export const LUA_DIR = path.join(__dirname, 'lua');

const INCLUDE = /^--- @include "([a-z0-9-]+)"[ \t]*$/gm;
const NAME = /^[a-z0-9-]+-(\d+)$/;

export class LuaScript {
  readonly sha1: string;

  constructor(
    readonly source: string,
    /** The number of KEYS every call declares. */
    readonly numberOfKeys: number,
    /** For errors: the file's name (without .lua). */
    readonly name = 'inline',
  ) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script with these keys and arguments (EVALSHA; EVAL when Redis does not have it). */
  async run(redis: Redis, keys: readonly string[], args: readonly Arg[] = []): Promise<unknown> {
    if (keys.length !== this.numberOfKeys) {
      throw new Error(`Lua script ${this.name} takes ${this.numberOfKeys} keys, the call passed ${keys.length}`);
    }
    try {
      return await redis.evalsha(this.sha1, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

/** The script shared/lua/<name>.lua with its includes expanded; its key count is the name's last number. */
export function luaScript(name: string): LuaScript {
  const m = NAME.exec(name);
  if (!m) throw new Error(`Lua script name ${name} does not end in -<numberOfKeys>`);
  return new LuaScript(readLua(path.join(LUA_DIR, `${name}.lua`)), Number(m[1]), name);
}

/** A file's text with each `--- @include "name"` line replaced by shared/lua/includes/<name>.lua (itself expanded). */
function readLua(file: string, seen: readonly string[] = []): string {
  if (seen.includes(file)) throw new Error(`Lua include cycle: ${[...seen, file].join(' -> ')}`);
  return readFileSync(file, 'utf8').replace(INCLUDE, (_, inc: string) => readLua(path.join(LUA_DIR, 'includes', `${inc}.lua`), [...seen, file]).trimEnd());
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}
