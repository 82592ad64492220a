// The "Try the emotion API" page's script (/console/emotion/try): records with MediaRecorder (a level meter from
// an AnalyserNode, a timer, a stop at the page's limit) or takes a file, posts it to the session route, and draws
// rough and soft per interval as SVG with a summary and a table.
import { post, required, say, svgEl, triesLeft } from './try-it-common';

/** The answer of POST /console/emotion/try/analyze (the public API's body plus the try-it allowance). */
interface Interval {
  from: number;
  to: number;
  rough: number;
  soft: number;
  speech_ratio: number;
}
interface AnalyzeAnswer {
  results: Interval[];
  summary: { duration: number; speech_ratio: number; rough_mean: number; rough_max: number; soft_mean: number; soft_max: number };
  meta: { format_name: string; sample_rate: number; channels: number; bit_rate: number };
  try_it: { used: number; cap: number };
}

const root = document.getElementById('try-emotion');
if (root) setUp(root);

function setUp(root: HTMLElement): void {
  const csrf = root.getAttribute('data-csrf') ?? '';
  const maxSeconds = Number(root.getAttribute('data-max-seconds')) || 60;
  const recordBtn = required<HTMLButtonElement>('record');
  const stopBtn = required<HTMLButtonElement>('stop');
  const fileInput = required<HTMLInputElement>('audio-file');
  const sendFileBtn = required<HTMLButtonElement>('send-file');
  const timerEl = required('timer');
  const levelBar = required('level-bar');

  let recorder: MediaRecorder | null = null;
  let stream: MediaStream | null = null;
  let audioCtx: AudioContext | null = null;
  let raf = 0;
  let tick = 0;
  let startedAt = 0;
  let chunks: Blob[] = [];
  let shown: AnalyzeAnswer | null = null;

  const clock = (seconds: number) => {
    const s = Math.floor(seconds);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  };

  function pickType(): string {
    for (const t of ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm']) if (window.MediaRecorder && MediaRecorder.isTypeSupported(t)) return t;
    return '';
  }

  function meter(analyser: AnalyserNode): void {
    const data = new Float32Array(analyser.fftSize);
    const frame = () => {
      analyser.getFloatTimeDomainData(data);
      let sum = 0;
      for (const v of data) sum += v * v;
      const rms = Math.sqrt(sum / data.length);
      // -60..0 dBFS onto 0..1, so quiet speech still moves the bar.
      const level = Math.max(0, Math.min(1, (20 * Math.log10(rms + 1e-9) + 60) / 60));
      levelBar.style.transform = `scaleX(${level.toFixed(3)})`;
      raf = requestAnimationFrame(frame);
    };
    frame();
  }

  function start(): void {
    if (!navigator.mediaDevices || !window.MediaRecorder) {
      say('This browser cannot record audio here; choose a file instead.', true);
      return;
    }
    recordBtn.disabled = true;
    navigator.mediaDevices.getUserMedia({ audio: true }).then(
      (s) => {
        stream = s;
        audioCtx = new AudioContext();
        const analyser = audioCtx.createAnalyser();
        analyser.fftSize = 1024;
        audioCtx.createMediaStreamSource(s).connect(analyser);
        meter(analyser);
        const type = pickType();
        const r = type ? new MediaRecorder(s, { mimeType: type }) : new MediaRecorder(s);
        recorder = r;
        chunks = [];
        r.ondataavailable = (e) => {
          if (e.data?.size) chunks.push(e.data);
        };
        r.onstop = () => finish(r);
        r.start(1000);
        startedAt = performance.now();
        root.classList.add('try-recording');
        root.setAttribute('data-state', 'recording');
        stopBtn.disabled = false;
        say(`Recording… speak naturally. It stops by itself at ${clock(maxSeconds)}.`);
        tick = window.setInterval(() => {
          const t = (performance.now() - startedAt) / 1000;
          timerEl.textContent = clock(Math.min(t, maxSeconds));
          if (t >= maxSeconds) stop();
        }, 200);
      },
      (err: unknown) => {
        recordBtn.disabled = false;
        say(`The microphone is not available (${err instanceof Error && err.name ? err.name : 'refused'}). You can choose a file instead.`, true);
      },
    );
  }

  function stop(): void {
    if (!recorder || recorder.state === 'inactive') return;
    clearInterval(tick);
    recorder.stop();
  }

  function finish(r: MediaRecorder): void {
    const seconds = (performance.now() - startedAt) / 1000;
    root.setAttribute('data-recorded-seconds', seconds.toFixed(2));
    cancelAnimationFrame(raf);
    levelBar.style.transform = 'scaleX(0)';
    stream?.getTracks().forEach((t) => t.stop());
    void audioCtx?.close();
    root.classList.remove('try-recording');
    stopBtn.disabled = true;
    recordBtn.textContent = 'Record again';
    const blob = new Blob(chunks, { type: (r.mimeType || 'audio/webm').split(';')[0] });
    recorder = null;
    send(blob, `your ${clock(seconds)} recording`);
  }

  function send(blob: Blob, what: string): void {
    recordBtn.disabled = true;
    sendFileBtn.disabled = true;
    root.setAttribute('data-state', 'sending');
    say(`Analysing ${what}…`);
    post<AnalyzeAnswer>('/console/emotion/try/analyze', csrf, blob, blob.type || 'audio/octet-stream')
      .then(
        (body) => {
          show(body);
          const n = body.results.length;
          say(`Done: ${n} interval${n === 1 ? '' : 's'} analysed. ${triesLeft(body.try_it)}`);
          root.setAttribute('data-state', 'done');
        },
        (err: Error) => {
          say(err.message, true);
          root.setAttribute('data-state', 'error');
        },
      )
      .finally(() => {
        recordBtn.disabled = false;
        sendFileBtn.disabled = !fileInput.files?.length;
      });
  }

  const fmt = (v: number) => v.toFixed(2);
  const pct = (v: number) => `${Math.round(v * 100)}%`;
  // Every time on the page with one decimal ("10.0–12.2 s"), so whole and partial intervals read alike.
  const secs = (v: number) => v.toFixed(1);
  // The engine scores an interval only from 0.3 s of speech (the API's speech_ratio description) and answers
  // 0/0 otherwise: such an interval is shown as not scored, never as two zeros. speech_ratio is rounded to
  // 3 decimals, hence the small allowance.
  const scored = (r: Interval) => r.rough !== 0 || r.soft !== 0 || r.speech_ratio * (r.to - r.from) >= 0.3 - 0.003;
  const notScoredText = (r: Interval) => (r.to - r.from < 1 ? 'too short to score' : 'not scored: under 0.3 s of speech');
  // ffprobe's format names ("matroska,webm", "mov,mp4,m4a,3gp,3g2,mj2") as people know them.
  const FORMATS: Record<string, string> = {
    'matroska,webm': 'WebM',
    wav: 'WAV',
    mp3: 'MP3',
    ogg: 'Ogg',
    flac: 'FLAC',
    aac: 'AAC',
    aiff: 'AIFF',
    asf: 'WMA',
    'mov,mp4,m4a,3gp,3g2,mj2': 'MP4/M4A',
  };
  const formatName = (f: string) => FORMATS[f] ?? (String(f).split(',')[0] ?? '').toUpperCase();

  // The plot: one group per interval, two bars (rough, soft), faded by the speech share, over a speech strip.
  // Drawn at the container's own width (redrawn on resize), so its labels keep their size on a phone.
  function drawPlot(body: AnalyzeAnswer): void {
    const results = body.results;
    const plot = required('plot');
    const W = Math.max(300, Math.round(plot.clientWidth || 720));
    const H = W < 560 ? 210 : 260;
    const L = 34;
    const R = 10;
    const T = 12;
    const B = 56;
    const plotW = W - L - R;
    const plotH = H - T - B;
    const duration = body.summary.duration || (results.length ? results[results.length - 1]!.to : 0);
    const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-labelledby': 'plot-title', 'data-intervals': results.length });
    svg.appendChild(svgEl('title', { id: 'plot-title' }, `Rough and soft per 5-second interval over ${secs(duration)} s (details in the table below)`));
    for (const v of [0, 0.5, 1]) {
      const y = T + plotH * (1 - v);
      svg.appendChild(svgEl('line', { class: v === 0 ? 'axis' : 'grid-line', x1: L, x2: W - R, y1: y, y2: y }));
      svg.appendChild(svgEl('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' }, v.toFixed(1)));
    }
    const x = (t: number) => L + (duration > 0 ? (t / duration) * plotW : 0);
    const every = Math.max(1, Math.ceil(results.length / Math.max(2, Math.floor(plotW / 56))));
    results.forEach((r, i) => {
      const g = svgEl('g', {
        class: 'interval' + (scored(r) ? '' : ' unscored'),
        'data-from': r.from,
        'data-to': r.to,
        'fill-opacity': (0.3 + 0.7 * r.speech_ratio).toFixed(2),
      });
      const x0 = x(r.from);
      const x1 = x(r.to);
      const w = x1 - x0;
      const gap = Math.min(6, w * 0.12);
      const bw = (w - 3 * gap) / 2;
      if (scored(r)) {
        g.appendChild(svgEl('rect', { class: 'rough', x: x0 + gap, y: T + plotH * (1 - r.rough), width: Math.max(1, bw), height: plotH * r.rough }));
        g.appendChild(svgEl('rect', { class: 'soft', x: x0 + 2 * gap + bw, y: T + plotH * (1 - r.soft), width: Math.max(1, bw), height: plotH * r.soft }));
      } else if (w >= 24) {
        // No bars for an unscored interval: a dash says "nothing measured" where zero-height bars would say 0.
        g.appendChild(svgEl('text', { class: 'unscored-mark', x: (x0 + x1) / 2, y: T + plotH - 6, 'text-anchor': 'middle' }, '–'));
      }
      g.appendChild(svgEl('rect', { class: 'speech', x: x0 + gap, y: T + plotH + 8, width: Math.max(1, (w - 2 * gap) * r.speech_ratio), height: 6 }));
      svg.appendChild(g);
      // Start labels, thinned out to fit, and never on top of the end label.
      if (i % every === 0 && x(duration) - x0 > 72) svg.appendChild(svgEl('text', { x: x0, y: H - 22, 'text-anchor': 'start' }, `${secs(r.from)} s`));
    });
    svg.appendChild(svgEl('text', { x: W - R, y: H - 22, 'text-anchor': 'end' }, `${secs(duration)} s`));
    svg.appendChild(svgEl('text', { x: L, y: H - 4 }, 'time'));
    plot.textContent = '';
    plot.appendChild(svg);
    const legend = document.createElement('ul');
    legend.className = 'try-legend';
    for (const [cls, label] of [
      ['l-rough', 'rough'],
      ['l-soft', 'soft'],
      ['l-speech', 'speech share (strip)'],
    ] as const) {
      const li = document.createElement('li');
      li.className = cls;
      li.textContent = label;
      legend.appendChild(li);
    }
    plot.appendChild(legend);
  }

  let resizeTimer = 0;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => {
      if (shown) drawPlot(shown);
    }, 100);
  });

  function show(body: AnalyzeAnswer): void {
    shown = body;
    required('result').hidden = false;
    drawPlot(body);
    const s = body.summary;
    const dl = required('summary');
    dl.textContent = '';
    for (const [term, value] of [
      ['Duration', `${secs(s.duration)} s`],
      ['Speech', pct(s.speech_ratio)],
      ['Rough mean', fmt(s.rough_mean)],
      ['Rough max', fmt(s.rough_max)],
      ['Soft mean', fmt(s.soft_mean)],
      ['Soft max', fmt(s.soft_max)],
    ]) {
      const d = document.createElement('div');
      const dt = document.createElement('dt');
      const dd = document.createElement('dd');
      dt.textContent = term ?? '';
      dd.textContent = value ?? '';
      d.appendChild(dt);
      d.appendChild(dd);
      dl.appendChild(d);
    }

    const tbody = document.querySelector('#intervals-table tbody');
    if (tbody) {
      tbody.textContent = '';
      for (const r of body.results) {
        const tr = document.createElement('tr');
        const th = document.createElement('th');
        th.setAttribute('scope', 'row');
        th.textContent = `${secs(r.from)}–${secs(r.to)} s`;
        tr.appendChild(th);
        const cells: Array<[string, 1 | 2]> = scored(r)
          ? [
              [fmt(r.rough), 1],
              [fmt(r.soft), 1],
            ]
          : [[notScoredText(r), 2]];
        for (const [text, span] of [...cells, [pct(r.speech_ratio), 1] as [string, 1]]) {
          const td = document.createElement('td');
          td.className = span === 2 ? 'num unscored' : 'num';
          if (span === 2) td.colSpan = 2;
          td.textContent = text;
          tr.appendChild(td);
        }
        tbody.appendChild(tr);
      }
    }
    const m = body.meta;
    required('meta').textContent =
      `Read as ${formatName(m.format_name)} audio, ${m.sample_rate} Hz, ${m.channels} channel${m.channels === 1 ? '' : 's'}, ${Math.round(m.bit_rate / 1000)} kbps.`;
  }

  recordBtn.addEventListener('click', start);
  stopBtn.addEventListener('click', stop);
  fileInput.addEventListener('change', () => (sendFileBtn.disabled = !fileInput.files?.length));
  sendFileBtn.addEventListener('click', () => {
    const f = fileInput.files?.[0];
    if (f) send(f, f.name);
  });
}
