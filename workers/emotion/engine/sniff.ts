// Owns format detection from the bytes alone: the spec's six formats (and their allowed sub-types), plus Opus and
// Vorbis in Ogg and WebM/Matroska beyond the spec, are told apart by magic numbers and header fields, never by
// Content-Type or a file name. Anything else is a 400.
import { InvalidInputError } from '../../../shared/errors';
import type { PcmLayout } from './pcm';

/** The spec's format families; the exact codec is confirmed later by ffprobe. */
export type SniffedFormat = 'wav' | 'aiff' | 'aac' | 'm4a' | 'mp3' | 'wma' | 'flac' | 'ogg' | 'webm';

export interface Sniffed {
  format: SniffedFormat;
  /** WAV/AIFF sub-type read from the header, for a precise error before ffprobe runs. */
  subtype?: 'pcm' | 'gsm';
  /** Bit depth declared by a WAV/AIFF header (PCM only). */
  bitsPerSample?: number;
  /** Everything ffprobe would report, read from a canonical 16-bit PCM WAV/AIFF header (lets probe skip
   *  ffprobe), and where the samples are (lets the engine decode them without ffmpeg). */
  pcm?: PcmLayout;
  /** MP3 only: duration implied by the file size and the bit rate of the frame after the first (the first
   *  may be a Xing/Info header). Exact for CBR, rough for VBR; the engine only uses it to start decoding a
   *  long file in parallel segments while ffprobe runs, and checks it against ffprobe's duration. */
  approxSeconds?: number;
}

const ASF_GUID = Buffer.from([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]);
// KSDATAFORMAT_SUBTYPE_PCM: the sub-format of a WAVE_FORMAT_EXTENSIBLE file holding plain PCM.
const KSDATAFORMAT_PCM_TAIL = Buffer.from([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]);

const EBML_MAGIC = 0x1a45dfa3;
const OGG_PAGE_HEADER = 27;
/** Identification headers of the first packet of an Ogg logical stream (its BOS page). */
const OGG_AUDIO = [
  { magic: 'OpusHead', codec: 'opus' },
  { magic: '\x01vorbis', codec: 'vorbis' },
] as const;
const OGG_VIDEO = [
  { magic: '\x80theora', codec: 'theora' },
  { magic: 'OVP80', codec: 'vp8' },
  { magic: '\x80daala', codec: 'daala' },
] as const;

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_GSM610 = 0x0031;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

function unsupported(what: string): InvalidInputError {
  return new InvalidInputError(
    'unsupported_format',
    `${what}; accepted: wav (PCM 16-bit, GSM 6.10), aiff (PCM 16-bit), aac (ADTS, m4a), mp3, wma, flac, ogg (Opus, Vorbis), webm/mkv (Opus, Vorbis)`,
  );
}

function noAudio(what: string): InvalidInputError {
  return new InvalidInputError('no_audio', what);
}

function ascii(buf: Buffer, at: number, len: number): string {
  return buf.toString('latin1', at, at + len);
}

export function sniff(buf: Buffer): Sniffed {
  if (buf.length === 0) throw noAudio('The request body is empty');
  if (buf.length >= 12 && ascii(buf, 0, 4) === 'RIFF') {
    if (ascii(buf, 8, 4) !== 'WAVE') throw unsupported(`RIFF file of type "${ascii(buf, 8, 4)}" is not audio`);
    return sniffWave(buf);
  }
  if (buf.length >= 12 && ascii(buf, 0, 4) === 'FORM') return sniffAiff(buf);
  if (buf.length >= 4 && ascii(buf, 0, 4) === 'fLaC') return { format: 'flac' };
  if (buf.length >= 12 && ascii(buf, 4, 4) === 'ftyp') return { format: 'm4a' };
  if (buf.length >= 16 && buf.subarray(0, 16).equals(ASF_GUID)) return { format: 'wma' };
  if (buf.length >= 4 && ascii(buf, 0, 4) === 'OggS') return sniffOgg(buf);
  if (buf.length >= 4 && buf.readUInt32BE(0) === EBML_MAGIC) return sniffMatroska(buf);

  // An ID3v2 tag can precede MP3 (and, rarely, ADTS or FLAC); skip it and look at what follows.
  let start = 0;
  if (buf.length >= 10 && ascii(buf, 0, 3) === 'ID3') {
    const size = ((buf[6]! & 0x7f) << 21) | ((buf[7]! & 0x7f) << 14) | ((buf[8]! & 0x7f) << 7) | (buf[9]! & 0x7f);
    const footer = buf[5]! & 0x10 ? 10 : 0;
    start = 10 + size + footer;
    // Tag padding and a few stray bytes before the first frame are common; look a little further.
    while (start < buf.length && buf[start] === 0) start++;
    if (start >= buf.length) throw noAudio('The file holds an ID3 tag and no audio frames');
    if (ascii(buf, start, 4) === 'fLaC') return { format: 'flac' };
  }
  const found = findMpegFrames(buf, start, start === 0 ? 0 : 4096);
  if (found?.format === 'mp3' && onlyInfoFrame(buf, start)) throw noAudio('The MP3 file holds only its header (an Info/Xing frame)');
  if (found?.format === 'mp3') return { format: 'mp3', approxSeconds: mp3Seconds(buf, found.at) };
  if (found) return { format: found.format };
  if (start > 0) throw new InvalidInputError('corrupt_audio', 'An ID3 tag is followed by no valid MP3 or AAC frames');
  throw unsupported('The bytes are not a recognised audio format');
}

function sniffWave(buf: Buffer): Sniffed {
  // Walk the RIFF chunks: 'fmt ' can be preceded by others (JUNK, LIST, bext).
  let at = 12;
  let fmt: Sniffed | undefined;
  let dataBytes: number | undefined;
  let dataOffset = 0;
  while (at + 8 <= buf.length) {
    const id = ascii(buf, at, 4);
    const size = buf.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') {
      if (body + 16 > buf.length) throw new InvalidInputError('corrupt_audio', 'WAV fmt chunk is truncated');
      fmt = waveFmt(buf, body, size);
    } else if (id === 'data') {
      dataBytes = Math.min(size, buf.length - body);
      dataOffset = body;
      break;
    }
    at = body + size + (size & 1);
  }
  if (!fmt) throw new InvalidInputError('corrupt_audio', 'WAV file has no fmt chunk');
  if (dataBytes === undefined || dataBytes === 0) throw noAudio('The WAV file has a header and no audio data');
  if (fmt.pcm && fmt.bitsPerSample === 16) {
    fmt.pcm.frames = Math.floor(dataBytes / (2 * fmt.pcm.channels));
    fmt.pcm.dataOffset = dataOffset;
  } else delete fmt.pcm;
  return fmt;
}

function waveFmt(buf: Buffer, body: number, size: number): Sniffed {
  let tag = buf.readUInt16LE(body);
  const bits = buf.readUInt16LE(body + 14);
  if (tag === WAVE_FORMAT_EXTENSIBLE && size >= 40 && body + 40 <= buf.length) {
    const sub = buf.subarray(body + 24, body + 40);
    if (sub.subarray(2).equals(KSDATAFORMAT_PCM_TAIL) && sub.readUInt16LE(0) === WAVE_FORMAT_PCM) tag = WAVE_FORMAT_PCM;
  }
  if (tag === WAVE_FORMAT_GSM610) return { format: 'wav', subtype: 'gsm' };
  if (tag === WAVE_FORMAT_PCM) {
    const channels = buf.readUInt16LE(body + 2);
    const sampleRate = buf.readUInt32LE(body + 4);
    // Canonical only: interleaved 16-bit frames (block align = 2 bytes × channels); anything odd is left to ffmpeg.
    const canonical = channels > 0 && buf.readUInt16LE(body + 12) === 2 * channels;
    const pcm = canonical ? { sampleRate, channels, frames: 0, dataOffset: 0, bigEndian: false } : undefined;
    return { format: 'wav', subtype: 'pcm', bitsPerSample: bits, pcm };
  }
  throw unsupported(`WAV with format tag 0x${tag.toString(16).padStart(4, '0')} (only PCM and GSM 6.10 are accepted)`);
}

function sniffAiff(buf: Buffer): Sniffed {
  const kind = ascii(buf, 8, 4);
  if (kind !== 'AIFF' && kind !== 'AIFC') throw unsupported(`IFF file of type "${kind}" is not audio`);
  let at = 12;
  let comm: Sniffed | undefined;
  let frames = 0;
  let ssndBytes: number | undefined;
  let ssndOffset = 0;
  let channels = 0;
  let sampleRate = 0;
  let bigEndian = true;
  while (at + 8 <= buf.length) {
    const id = ascii(buf, at, 4);
    const size = buf.readUInt32BE(at + 4);
    const body = at + 8;
    if (id === 'COMM') {
      if (body + 18 > buf.length) throw new InvalidInputError('corrupt_audio', 'AIFF COMM chunk is truncated');
      channels = buf.readUInt16BE(body);
      frames = buf.readUInt32BE(body + 2);
      const bits = buf.readUInt16BE(body + 6);
      sampleRate = extended80(buf, body + 8);
      if (kind === 'AIFC') {
        // Only uncompressed AIFF-C: 'NONE' (big-endian) and 'sowt' (little-endian) PCM.
        const compression = body + 22 <= buf.length ? ascii(buf, body + 18, 4) : '';
        if (compression !== 'NONE' && compression !== 'sowt') {
          throw unsupported(`AIFF-C with compression "${compression}" (only PCM is accepted)`);
        }
        bigEndian = compression === 'NONE';
      }
      comm = { format: 'aiff', subtype: 'pcm', bitsPerSample: bits };
    } else if (id === 'SSND') {
      // SSND starts with an 8-byte offset/blockSize header before the samples.
      ssndBytes = Math.max(0, Math.min(size, buf.length - body) - 8);
      // The offset field skips block-alignment padding before the first sample.
      const skip = body + 8 <= buf.length ? buf.readUInt32BE(body) : 0;
      ssndOffset = body + 8 + skip;
      ssndBytes = Math.max(0, ssndBytes - skip);
    }
    at = body + size + (size & 1);
  }
  if (!comm) throw new InvalidInputError('corrupt_audio', 'AIFF file has no COMM chunk');
  if (frames === 0 || !ssndBytes) throw noAudio('The AIFF file has a header and no audio data');
  if (comm.bitsPerSample === 16 && channels > 0 && Number.isInteger(sampleRate) && sampleRate > 0) {
    comm.pcm = { sampleRate, channels, frames: Math.floor(ssndBytes / (2 * channels)), dataOffset: ssndOffset, bigEndian };
  }
  return comm;
}

/** An IEEE 754 80-bit extended float (AIFF's sample rate); NaN when it is not a finite positive number. */
function extended80(buf: Buffer, at: number): number {
  if (at + 10 > buf.length) return Number.NaN;
  const se = buf.readUInt16BE(at);
  const exp = se & 0x7fff;
  if (se & 0x8000 || exp === 0x7fff) return Number.NaN;
  const mantissa = buf.readUInt32BE(at + 2) * 2 ** 32 + buf.readUInt32BE(at + 6);
  return mantissa * 2 ** (exp - 16383 - 63);
}

// MPEG audio header tables, enough to compute a frame's length and check that the next frame follows it.
const MPEG_BITRATES_V1_L3 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const MPEG_BITRATES_V2_L3 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const MPEG_RATES: Record<number, number[]> = { 3: [44100, 48000, 32000], 2: [22050, 24000, 16000], 0: [11025, 12000, 8000] };

function mp3FrameLength(buf: Buffer, at: number): number {
  return mp3Frame(buf, at)?.length ?? 0;
}

function mp3Frame(buf: Buffer, at: number): { length: number; kbps: number } | undefined {
  if (at + 4 > buf.length) return undefined;
  const b1 = buf[at + 1]!;
  const b2 = buf[at + 2]!;
  if (buf[at] !== 0xff || (b1 & 0xe0) !== 0xe0) return undefined;
  const version = (b1 >> 3) & 3; // 3 = MPEG-1, 2 = MPEG-2, 0 = MPEG-2.5, 1 = reserved
  const layer = (b1 >> 1) & 3; // 1 = Layer III
  if (version === 1 || layer !== 1) return undefined;
  const brIndex = b2 >> 4;
  const srIndex = (b2 >> 2) & 3;
  if (brIndex === 0 || brIndex === 15 || srIndex === 3) return undefined;
  const kbps = (version === 3 ? MPEG_BITRATES_V1_L3 : MPEG_BITRATES_V2_L3)[brIndex]!;
  const rate = MPEG_RATES[version]![srIndex]!;
  const padding = (b2 >> 1) & 1;
  const coef = version === 3 ? 144 : 72;
  return { length: Math.floor((coef * kbps * 1000) / rate) + padding, kbps };
}

/** Seconds implied by the bytes from the first frame on and the bit rate of the second frame. */
function mp3Seconds(buf: Buffer, at: number): number | undefined {
  const first = mp3Frame(buf, at);
  const next = first ? (mp3Frame(buf, at + first.length) ?? first) : undefined;
  return next ? ((buf.length - at) * 8) / (next.kbps * 1000) : undefined;
}

function adtsFrameLength(buf: Buffer, at: number): number {
  if (at + 7 > buf.length) return 0;
  if (buf[at] !== 0xff || (buf[at + 1]! & 0xf6) !== 0xf0) return 0; // sync 0xFFF, layer 00
  if (((buf[at + 2]! >> 2) & 0xf) > 12) return 0; // sampling-frequency index
  const len = ((buf[at + 3]! & 0x03) << 11) | (buf[at + 4]! << 3) | (buf[at + 5]! >> 5);
  return len >= 7 ? len : 0;
}

/** An encoder that got no samples writes one Xing/Info frame (its header) and nothing after it. */
function onlyInfoFrame(buf: Buffer, start: number): boolean {
  let at = start;
  while (at < buf.length && buf[at] !== 0xff) at++;
  const len = mp3FrameLength(buf, at);
  if (len === 0 || at + len < buf.length) return false;
  const frame = buf.subarray(at, at + len).toString('latin1');
  return frame.includes('Info') || frame.includes('Xing');
}

/**
 * Finds the first MPEG audio or ADTS frame at or after `start` (searching `slack` bytes) whose successor
 * also parses, so that random bytes that happen to contain 0xFFF are not taken for audio.
 */
function findMpegFrames(buf: Buffer, start: number, slack: number): { format: 'mp3' | 'aac'; at: number } | undefined {
  const end = Math.min(buf.length - 4, start + slack);
  for (let at = start; at <= end; at++) {
    if (buf[at] !== 0xff) continue;
    const mp3 = mp3FrameLength(buf, at);
    if (mp3 > 0 && (at + mp3 >= buf.length || mp3FrameLength(buf, at + mp3) > 0)) return { format: 'mp3', at };
    const aac = adtsFrameLength(buf, at);
    if (aac > 0 && (at + aac >= buf.length || adtsFrameLength(buf, at + aac) > 0)) return { format: 'aac', at };
  }
  return undefined;
}

/**
 * Ogg: walks every page (27-byte header, segment table, body) so that a cut-off upload is named precisely
 * (ffmpeg decodes a truncated Ogg without complaint, to less audio and a wrong duration), and reads the
 * beginning-of-stream pages to name the codecs: Opus or Vorbis are accepted, a video stream or another codec is not.
 */
function sniffOgg(buf: Buffer): Sniffed {
  const codecs: string[] = [];
  let at = 0;
  let page = 0;
  let audioPages = 0;
  while (at < buf.length) {
    if (at + 4 > buf.length || ascii(buf, at, 4) !== 'OggS') {
      throw new InvalidInputError('corrupt_audio', `Ogg page ${page + 1} at byte ${at} does not start with "OggS": the stream is damaged`);
    }
    if (at + OGG_PAGE_HEADER > buf.length) {
      throw new InvalidInputError('corrupt_audio', `The Ogg stream is truncated: page ${page + 1} at byte ${at} has an incomplete header`);
    }
    const segments = buf[at + 26]!;
    if (at + OGG_PAGE_HEADER + segments > buf.length) {
      throw new InvalidInputError('corrupt_audio', `The Ogg stream is truncated: page ${page + 1} at byte ${at} has an incomplete segment table`);
    }
    let bodyBytes = 0;
    for (let i = 0; i < segments; i++) bodyBytes += buf[at + OGG_PAGE_HEADER + i]!;
    const body = at + OGG_PAGE_HEADER + segments;
    if (body + bodyBytes > buf.length) {
      throw new InvalidInputError(
        'corrupt_audio',
        `The Ogg stream is truncated: page ${page + 1} at byte ${at} declares ${bodyBytes} bytes and ${buf.length - body} follow`,
      );
    }
    // A granule position above zero marks a page that completes audio; header pages carry 0 (or -1).
    const granule = buf.readBigInt64LE(at + 6);
    if (granule > 0n) audioPages++;
    const beginsStream = (buf[at + 5]! & 0x02) !== 0;
    if (beginsStream) {
      const head = ascii(buf, body, Math.min(bodyBytes, 8));
      const video = OGG_VIDEO.find((v) => head.startsWith(v.magic));
      if (video) throw new InvalidInputError('unsupported_format', `This is a video file (an Ogg ${video.codec} video stream); send the audio only`);
      codecs.push(OGG_AUDIO.find((a) => head.startsWith(a.magic))?.codec ?? 'unknown');
    }
    at = body + bodyBytes;
    page++;
  }
  if (codecs.length === 0) throw new InvalidInputError('corrupt_audio', 'The Ogg stream has no beginning-of-stream page');
  if (!codecs.some((c) => c !== 'unknown')) throw unsupported('An Ogg file carrying neither Opus nor Vorbis audio');
  if (audioPages === 0) throw noAudio('The Ogg file holds only its stream headers and no audio');
  return { format: 'ogg' };
}

/** Matroska/WebM: the EBML header's DocType names the variant; tracks and codecs are ffprobe's to read. */
function sniffMatroska(buf: Buffer): Sniffed {
  const head = ascii(buf, 0, Math.min(buf.length, 64));
  if (!head.includes('webm') && !head.includes('matroska')) throw unsupported('An EBML file that is neither WebM nor Matroska');
  return { format: 'webm' };
}
