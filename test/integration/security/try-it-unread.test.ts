// Issue 41: the console's try-it routes read 10 MB / 7.5 MB bodies before their throttle and monthly cap, outside
// the upload room. Like /v1 they now take both before a byte of the body is read (a refusal closes the connection
// unread) and read the body within the account's one share of the process's upload room.
import { expect } from 'chai';
import { accountShare } from '../../../api/http/upload-gate';
import { csrfOf, fullySignedIn, startConsole, type ConsoleHarness, type SignedIn } from '../console/harness';
import { partialUpload } from '../../support/partial-upload';

/** Declares `declaredBytes` to a try-it route as `user`, sends 64 KB and waits for an answer. */
async function partialTry(h: ConsoleHarness, user: SignedIn, path: string, type: string, declaredBytes: number) {
  const page = await user.client.open('/console/liveness/try');
  return partialUpload(
    h.api.port,
    path,
    { Cookie: `lc_console=${user.client.cookies.get('lc_console')}`, 'X-CSRF-Token': csrfOf(page.html), Origin: h.base, 'Content-Type': type },
    Buffer.alloc(0),
    { declaredBytes, sentBytes: 64 * 1024 },
  );
}

/** The answer, or null when none came within `ms`. */
const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

describe('Try-it bodies are refused unread once the throttle or the month’s cap says no (issue 41)', function () {
  this.timeout(120_000);
  let h: ConsoleHarness;

  before(async () => {
    h = await startConsole('try-it-unread');
  });
  after(async () => h?.stop());

  it('answers 429 before reading a 7 MB photo or a 10 MB recording once the month’s tries are used, and closes the connection', async () => {
    const user = await fullySignedIn(h, 'free');
    const month = new Date().toISOString().slice(0, 7);
    for (const service of ['liveness', 'emotion']) await h.api.deps.redis.set(`${h.config.QUEUE_PREFIX}:try-it:${service}:${user.customerId}:${month}`, '5');
    for (const [path, type, bytes] of [
      ['/console/liveness/try/check', 'image/jpeg', 7 * 1024 * 1024],
      ['/console/emotion/try/analyze', 'audio/wav', 10 * 1024 * 1024],
    ] as const) {
      const upload = await partialTry(h, user, path, type, bytes);
      const answer = await within(upload.answered, 2_000);
      upload.socket.destroy();
      expect(answer?.status, `${path}: answered before the rest of the body was sent`).to.equal(429);
      expect(answer?.connectionClose).to.equal(true);
    }
  });

  it('reads a try-it body within the account’s one share of the upload room', async () => {
    const user = await fullySignedIn(h, 'starter');
    const upload = await partialTry(h, user, '/console/liveness/try/check', 'image/jpeg', 7 * 1024 * 1024);
    try {
      const share = () => h.api.deps.uploads.inFlight(accountShare(user.customerId));
      const until = Date.now() + 2_000;
      while (share() === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(share()).to.equal(7 * 1024 * 1024);
    } finally {
      upload.socket.destroy();
    }
  });
});
