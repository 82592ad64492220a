// The programs the emotion tests drive come from one list, dev/setup.sh's `need` lines (what
// `dev/setup.sh --test` installs): Praat included, and a program outside the list is refused by name.
import { expect } from 'chai';
import { requirePrograms, setupPrograms } from '../../../dev/harness/programs';

describe('emotion tests: required programs come from dev/setup.sh', () => {
  it('lists every program the emotion fixtures call, with its Debian package', () => {
    const list = setupPrograms();
    for (const [program, pkg] of [
      ['ffmpeg', 'ffmpeg'],
      ['ffprobe', 'ffmpeg'],
      ['espeak-ng', 'espeak-ng'],
      ['sox', 'sox'],
      ['praat', 'praat'],
    ]) {
      expect(list.get(program!), program).to.equal(pkg);
    }
  });

  it('reads `need` lines, including the ones with a path variable', () => {
    const list = setupPrograms('  need "${FFMPEG_PATH:-ffmpeg}" ffmpeg\n  need praat praat\n# need nothing here\n');
    expect([...list]).to.deep.equal([
      ['ffmpeg', 'ffmpeg'],
      ['praat', 'praat'],
    ]);
  });

  it('refuses a program setup.sh does not install, naming the fix', () => {
    expect(() => requirePrograms('definitely-not-installed-tool')).to.throw(/not installed by dev\/setup\.sh/);
    expect(() => requirePrograms('praat', 'espeak-ng', 'sox')).not.to.throw();
  });
});
