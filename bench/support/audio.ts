// Audio inputs the benchmarks make with ffmpeg.

/** ffmpeg arguments that encode `input` (looped without end when `loop`) as a 44.1 kHz stereo MP3 of `seconds` at `kbps`. */
export function mp3Args(o: { input: string; seconds: string; kbps: number; out: string; loop?: boolean }): string[] {
  const loop = o.loop ? ['-stream_loop', '-1'] : [];
  return [
    '-nostdin',
    '-v',
    'error',
    '-y',
    ...loop,
    '-i',
    o.input,
    '-t',
    o.seconds,
    '-ar',
    '44100',
    '-ac',
    '2',
    '-c:a',
    'libmp3lame',
    '-b:a',
    `${o.kbps}k`,
    o.out,
  ];
}
