// The liveness API's own thread time per body (`npx tsx bench/body-parse.ts [-- --runs 15]`), issue 41's "the
// front-end's own work is free": a 10 MB JSON body whose last Base64 character is bad, read the old way (the whole
// body parsed once it has arrived: the plain reading fails, JSON.parse and the schema answer) against the streaming
// pass (api/liveness/plain-body-scan.ts over the 64 KiB chunks a socket delivers), and what the pass would add to a
// phone photo's body (264 KB JPEG; the API runs it on bodies of 1 MiB and more only). Prints median milliseconds and the fair-use tokens each body costs at the shipped
// THROTTLE_BYTES_PER_TOKEN and THROTTLE_PARSE_MS_PER_TOKEN. No engines: the parse runs in this process.
import { parseArgs } from 'node:util';
import { phonePhoto } from '../dev/harness/sample-images';
import { parseLivenessJson, processCpuMs } from '../api/liveness/route';
import { PlainBodyScan } from '../api/liveness/plain-body-scan';
import { loadConfig } from '../shared/config';
import { median } from './timing';
import { loadAvg, runMain } from './support/main';

const CHUNK = 64 * 1024;

/** Median CPU ms (this process, what the API charges) and wall ms of `runs` calls, after 3 warm-up calls. */
function timeCpu(runs: number, fn: () => unknown): { cpu: number; wall: number } {
  for (let i = 0; i < 3; i++) fn();
  const cpu: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const [c0, w0] = [processCpuMs(), performance.now()];
    fn();
    cpu.push(processCpuMs() - c0);
    wall.push(performance.now() - w0);
  }
  return { cpu: median(cpu), wall: median(wall) };
}
const fmt = (t: { cpu: number; wall: number }, digits = 1) => `${t.cpu.toFixed(digits)} ms CPU (${t.wall.toFixed(digits)} ms wall)`;

/** The body as a socket hands it over. */
const chunksOf = (body: Buffer) => Array.from({ length: Math.ceil(body.length / CHUNK) }, (_, i) => body.subarray(i * CHUNK, (i + 1) * CHUNK));

function fullParse(body: Buffer): void {
  try {
    parseLivenessJson(body);
  } catch {
    // The refusal is the point: its cost is what is measured.
  }
}

function streamingPass(chunks: Buffer[]): boolean {
  const scan = new PlainBodyScan();
  for (const c of chunks) if (scan.push(c)) return true;
  return false;
}

runMain(async () => {
  const { values } = parseArgs({ options: { runs: { type: 'string', default: '15' } } });
  const runs = Number(values.runs);
  const config = loadConfig({});
  const bad = Buffer.from(JSON.stringify({ image_format: 'jpeg', image: 'A'.repeat(10 * 1024 * 1024 - 1) + '!' }));
  const photo = Buffer.from(JSON.stringify({ image_format: 'jpeg', image: (await phonePhoto()).toString('base64') }));
  const badChunks = chunksOf(bad);
  const photoChunks = chunksOf(photo);
  if (!streamingPass(badChunks) || streamingPass(photoChunks)) throw new Error('the streaming pass did not answer as expected');
  console.log(`load ${loadAvg()}, node ${process.version}, ${runs} runs each (medians)`);
  const tokens = (bytes: number, ms: number) => Math.ceil(bytes / config.THROTTLE_BYTES_PER_TOKEN) + Math.floor(ms / config.THROTTLE_PARSE_MS_PER_TOKEN);
  const oldBad = timeCpu(runs, () => fullParse(bad));
  const newBad = timeCpu(runs, () => streamingPass(badChunks));
  console.log(
    `10 MB body, bad last character (${bad.length} B): whole-body parse ${fmt(oldBad)}, 1 token before issue 41; ` +
      `streaming pass ${fmt(newBad)} -> ${tokens(bad.length, newBad.cpu)} tokens now`,
  );
  const photoParse = timeCpu(runs * 10, () => fullParse(photo));
  const photoPass = timeCpu(runs * 10, () => streamingPass(photoChunks));
  console.log(
    `phone photo body (${photo.length} B): parse ${fmt(photoParse, 2)} -> ${tokens(photo.length, photoParse.cpu)} token(s); ` +
      `the pass (not run below 1 MiB) would add ${fmt(photoPass, 2)}`,
  );
});
