// Owns how our Lua scripts reach Redis: by their SHA1 (EVALSHA), so a call carries its keys and arguments and
// not the script's text, and Redis neither re-reads nor re-hashes the body on every call. A Redis that does not
// know the script yet (first use, a restart, SCRIPT FLUSH) answers NOSCRIPT; the call is then repeated once with
// EVAL, which also loads the script for the next calls.
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

type Arg = string | number | Buffer;

export class LuaScript {
  readonly sha1: string;

  constructor(readonly source: string) {
    this.sha1 = createHash('sha1').update(source).digest('hex');
  }

  /** Runs the script with these keys and arguments (EVALSHA; EVAL when Redis does not have it). */
  async run(redis: Redis, keys: readonly string[], args: readonly Arg[] = []): Promise<unknown> {
    try {
      return await redis.evalsha(this.sha1, keys.length, ...keys, ...args);
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return redis.eval(this.source, keys.length, ...keys, ...args);
    }
  }
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}
