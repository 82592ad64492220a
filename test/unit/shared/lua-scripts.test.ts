// The Lua scripts are files in shared/lua/ named <name>-<numberOfKeys>.lua (shared/redis-script.ts): each loads,
// states its contract in a header, declares as many keys as it uses, and is run by some module.
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { Redis } from 'ioredis';
import { projectRoot } from '../../../shared/paths';
import { LUA_DIR, luaScript } from '../../../shared/redis-script';

const SKIP = new Set(['node_modules', 'dist', '.git', 'var']);

function files(dir: string, ext: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP.has(e.name) ? [] : files(p, ext);
    return e.name.endsWith(ext) ? [p] : [];
  });
}

const scripts = fs
  .readdirSync(LUA_DIR)
  .filter((f) => f.endsWith('.lua'))
  .map((f) => f.slice(0, -'.lua'.length));
const includes = fs.readdirSync(path.join(LUA_DIR, 'includes')).map((f) => f.slice(0, -'.lua'.length));
const sources = ['api', 'workers', 'shared'].flatMap((d) => files(path.join(projectRoot, d), '.ts')).map((f) => fs.readFileSync(f, 'utf8'));

describe('Lua scripts (shared/lua/)', () => {
  it('are all in shared/lua/ (scripts) or shared/lua/includes/ (fragments)', () => {
    const elsewhere = files(projectRoot, '.lua')
      .map((f) => path.relative(LUA_DIR, f))
      .filter((r) => path.dirname(r) !== '.' && path.dirname(r) !== 'includes');
    expect(elsewhere).to.deep.equal([]);
    expect(scripts.length).to.be.at.least(16);
  });

  for (const name of scripts) {
    describe(`${name}.lua`, () => {
      it('loads with its includes expanded and the key count its name states', () => {
        const script = luaScript(name);
        expect(script.numberOfKeys).to.equal(Number(/-(\d+)$/.exec(name)![1]));
        expect(script.source).not.to.match(/@include/);
        expect(script.sha1).to.match(/^[0-9a-f]{40}$/);
      });

      it('opens with a header naming its KEYS, ARGV and return value', () => {
        const text = fs.readFileSync(path.join(LUA_DIR, `${name}.lua`), 'utf8');
        const header = text.slice(0, text.search(/^(?!--)/m));
        expect(header).to.match(/^-- KEYS\[1\]/m);
        expect(header).to.match(/^-- ARGV: /m);
        expect(header).to.match(/^-- Returns /m);
      });

      it('uses exactly the keys it declares', () => {
        const used = [...luaScript(name).source.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
        expect(Math.max(...used)).to.equal(luaScript(name).numberOfKeys);
      });

      it('is run by a module of api/, workers/ or shared/', () => {
        expect(sources.some((s) => s.includes(`luaScript('${name}')`))).to.equal(true);
      });
    });
  }

  it('every include is used by some script', () => {
    const texts = scripts.map((s) => fs.readFileSync(path.join(LUA_DIR, `${s}.lua`), 'utf8'));
    for (const inc of includes) expect(texts.some((t) => t.includes(`--- @include "${inc}"`))).to.equal(true, inc);
  });

  it('a call with another number of keys is refused before Redis is asked', async () => {
    // The settle step once took its idempotency entry as an optional fourth key; now it is always declared.
    const settle = luaScript('credits-settle-5');
    const noRedis = null as unknown as Redis; // never reached: the count is checked first
    let caught: unknown;
    await settle.run(noRedis, ['credits', 'result', 'outbox']).catch((err: unknown) => (caught = err));
    expect((caught as Error).message).to.equal('Lua script credits-settle-5 takes 5 keys, the call passed 3');
  });
});
