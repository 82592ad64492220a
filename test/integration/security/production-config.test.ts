// Issue 29, finding 5: production mode started with SECURE_COOKIES=false and an http:// PUBLIC_BASE_URL.
// NODE_ENV=production now stops at start-up on either (exit 78, like every bad configuration), and the console
// refuses to start without the marketplace's signing secret.
import { expect } from 'chai';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { consoleConfigProblems, parseConfig } from '../../../shared/config';
import { projectRoot } from '../../../shared/paths';

const secret = () => crypto.randomBytes(36).toString('base64');
const PRODUCTION = {
  NODE_ENV: 'production',
  SECURE_COOKIES: 'true',
  PUBLIC_BASE_URL: 'https://liveness.example.com',
  APP_SECRET: secret(),
  MARKETPLACE_SECRET: secret(),
};

/** Starts a process that loads the configuration the way every entry point does, with only `env`. */
function startWith(env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', '-e', "require('./shared/config').loadConfig(); console.log('started')"], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
  });
}

describe('Production configuration (issue 29, finding 5)', function () {
  this.timeout(60_000);

  it('production refuses SECURE_COOKIES=false at start-up: exit 78 naming the key', () => {
    const run = startWith({ ...PRODUCTION, SECURE_COOKIES: 'false' });
    expect(run.status).to.equal(78);
    expect(run.stderr).to.contain('Invalid environment variables').and.contain('SECURE_COOKIES: must be true in production');
  });

  it('production refuses an http:// PUBLIC_BASE_URL at start-up: exit 78 naming the key', () => {
    const run = startWith({ ...PRODUCTION, PUBLIC_BASE_URL: 'http://liveness.example.com' });
    expect(run.status).to.equal(78);
    expect(run.stderr).to.contain('PUBLIC_BASE_URL: must be an https:// address in production');
  });

  it('production with Secure cookies and an https:// base URL starts', () => {
    const run = startWith(PRODUCTION);
    expect(run.stderr).to.equal('');
    expect(run.status).to.equal(0);
    expect(run.stdout.trim()).to.equal('started');
  });

  it('production refuses SECURE_COOKIES unset (its default is for development), and development keeps its defaults', () => {
    const { SECURE_COOKIES: _unset, ...withoutCookies } = PRODUCTION;
    void _unset;
    expect(() => parseConfig(withoutCookies)).to.throw(/SECURE_COOKIES/);
    expect(parseConfig({ PUBLIC_BASE_URL: 'http://127.0.0.1:8080' }).SECURE_COOKIES).to.equal(false);
  });

  it('the console refuses production without the marketplace signing secret', () => {
    const { MARKETPLACE_SECRET: _unset, ...withoutSecret } = PRODUCTION;
    void _unset;
    expect(consoleConfigProblems(parseConfig(withoutSecret)).join('\n')).to.contain('MARKETPLACE_SECRET');
    expect(consoleConfigProblems(parseConfig(PRODUCTION))).to.deep.equal([]);
  });
});
