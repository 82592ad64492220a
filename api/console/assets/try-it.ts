// Owns the "Try it" pages' browser code and styles, served as content-hashed assets (the CSP allows scripts
// and styles from 'self' only). The emotion script records with MediaRecorder (a level meter from an
// AnalyserNode, a timer, a 60 s stop) and draws the intervals as SVG; the liveness script takes a webcam frame
// (or a file) and outlines the face boxes over the photo. Both post to the session routes with X-CSRF-Token.
import crypto from 'node:crypto';

interface TryItAsset {
  path: string;
  body: string;
  type: string;
}

function hashed(name: string, ext: string, body: string, type: string): TryItAsset {
  const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 10);
  return { path: `/console/assets/${name}-${hash}.${ext}`, body, type };
}

const CSS = `
.try-level { height: 12px; border-radius: 6px; background: var(--border); overflow: hidden; margin: 8px 0 6px; }
.try-level-bar { height: 100%; width: 100%; background: linear-gradient(90deg, #1c7f4d, #2f5bea 70%, #c62f3c); transform-origin: left center; transform: scaleX(0); transition: transform 60ms linear; }
.try-timer { font: 600 1.6rem/1.2 var(--mono); margin: 4px 0 12px; }
.try-recording .try-timer #timer { color: var(--danger); }
.try-plot { margin: 0 0 16px; }
.try-plot svg { max-width: 100%; height: auto; display: block; }
.try-file { margin-top: 18px; }
.try-plot .axis { stroke: #8a93a6; stroke-width: 1; }
.try-plot .grid-line { stroke: var(--border); stroke-width: 1; }
.try-plot text { font: 12px system-ui, sans-serif; fill: #4a5468; }
.try-plot .rough { fill: #c2410c; }
.try-plot .soft { fill: #2f5bea; }
.try-plot .speech { fill: #5a6478; }
.try-legend { display: flex; gap: 16px; flex-wrap: wrap; font-size: .88rem; margin: 6px 0 0; padding: 0; list-style: none; }
.try-legend li::before { content: ""; display: inline-block; width: 12px; height: 12px; border-radius: 3px; margin-right: 6px; vertical-align: -1px; }
.try-legend .l-rough::before { background: #c2410c; }
.try-legend .l-soft::before { background: #2f5bea; }
.try-legend .l-speech::before { background: #5a6478; }
.try-summary { display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: 8px 16px; margin: 0 0 16px; }
.try-summary div { background: var(--bg); border-radius: 8px; padding: 8px 12px; }
.try-summary dt { font-size: .8rem; color: var(--muted); }
.try-summary dd { margin: 0; font: 600 1.1rem/1.3 var(--mono); }
.try-camera { width: 100%; max-width: 480px; border-radius: 8px; background: #111; display: block; margin-bottom: 12px; }
.try-photo { position: relative; max-width: 100%; margin-bottom: 12px; }
.try-photo img { display: block; width: 100%; height: auto; border-radius: 8px; }
.try-photo svg { position: absolute; inset: 0; width: 100%; height: 100%; }
.try-photo rect { fill: none; stroke: #22c55e; stroke-width: 3; vector-effect: non-scaling-stroke; }
.try-photo rect.fake { stroke: #ef4444; }
.try-verdict-live { color: var(--success); }
.try-verdict-fake { color: var(--danger); }
.try-verdict-invalid { color: var(--warn); }
.try-bar { position: relative; height: 14px; border-radius: 7px; background: var(--border); margin: 6px 0 4px; }
.try-bar-fill { position: absolute; left: 0; top: 0; bottom: 0; border-radius: 7px; background: var(--primary); width: 100%; transform-origin: left center; }
.try-bar-mark { position: absolute; top: -4px; bottom: -4px; width: 2px; background: var(--text); }
#status:empty { display: none; }
#try-liveness #status { margin-top: 12px; }
#status { padding: 10px 14px; border-radius: 8px; background: var(--primary-soft); }
#status.error { background: var(--danger-soft); color: var(--danger); }
#intervals-table td.unscored { color: var(--muted); font-style: italic; }
.try-plot .unscored-mark { fill: #8a93a6; }
`;

/** Shared by both scripts: POST bytes with the session's CSRF token, answer parsed (or a readable error). */
const POST_FN = String.raw`
  function post(url, csrf, body, type) {
    return fetch(url, { method: 'POST', credentials: 'same-origin', headers: { 'X-CSRF-Token': csrf, 'Content-Type': type || 'application/octet-stream' }, body: body })
      .then(function (res) {
        var json = (res.headers.get('content-type') || '').indexOf('application/json') === 0;
        if (!json) throw new Error(res.status === 403 || res.status === 401 ? 'Your session has ended or the page is old: reload it and sign in again.' : 'The server answered ' + res.status + '.');
        return res.json().then(function (b) {
          if (!res.ok) throw new Error((b.error && b.error.message ? b.error.message : 'Request failed') + (b.error && b.error.code ? ' (' + b.error.code + ')' : ''));
          return b;
        });
      });
  }
  function say(text, isError) {
    var s = document.getElementById('status');
    s.textContent = text;
    s.classList.toggle('error', !!isError);
  }
  var SVGNS = 'http://www.w3.org/2000/svg';
  function svgEl(name, attrs, text) {
    var el = document.createElementNS(SVGNS, name);
    for (var k in attrs) el.setAttribute(k, String(attrs[k]));
    if (text !== undefined) el.textContent = text;
    return el;
  }
`;

const EMOTION_JS = String.raw`
(function () {
  'use strict';
  var root = document.getElementById('try-emotion');
  if (!root) return;
  var csrf = root.getAttribute('data-csrf');
  var maxSeconds = Number(root.getAttribute('data-max-seconds')) || 60;
  var recordBtn = document.getElementById('record');
  var stopBtn = document.getElementById('stop');
  var fileInput = document.getElementById('audio-file');
  var sendFileBtn = document.getElementById('send-file');
  var timerEl = document.getElementById('timer');
  var levelBar = document.getElementById('level-bar');
  ${POST_FN}

  var recorder = null, stream = null, audioCtx = null, raf = 0, tick = 0, startedAt = 0, chunks = [];

  function clock(s) { s = Math.floor(s); return Math.floor(s / 60) + ':' + String(s % 60).padStart(2, '0'); }

  function pickType() {
    var types = ['audio/webm;codecs=opus', 'audio/ogg;codecs=opus', 'audio/webm'];
    for (var i = 0; i < types.length; i++) if (window.MediaRecorder && MediaRecorder.isTypeSupported(types[i])) return types[i];
    return '';
  }

  function meter(analyser) {
    var data = new Float32Array(analyser.fftSize);
    (function frame() {
      analyser.getFloatTimeDomainData(data);
      var sum = 0;
      for (var i = 0; i < data.length; i++) sum += data[i] * data[i];
      var rms = Math.sqrt(sum / data.length);
      // -60..0 dBFS onto 0..1, so quiet speech still moves the bar.
      var level = Math.max(0, Math.min(1, (20 * Math.log10(rms + 1e-9) + 60) / 60));
      levelBar.style.transform = 'scaleX(' + level.toFixed(3) + ')';
      raf = requestAnimationFrame(frame);
    })();
  }

  function start() {
    if (!navigator.mediaDevices || !window.MediaRecorder) { say('This browser cannot record audio here; choose a file instead.', true); return; }
    recordBtn.disabled = true;
    navigator.mediaDevices.getUserMedia({ audio: true }).then(function (s) {
      stream = s;
      audioCtx = new (window.AudioContext || window.webkitAudioContext)();
      var analyser = audioCtx.createAnalyser();
      analyser.fftSize = 1024;
      audioCtx.createMediaStreamSource(s).connect(analyser);
      meter(analyser);
      var type = pickType();
      recorder = type ? new MediaRecorder(s, { mimeType: type }) : new MediaRecorder(s);
      chunks = [];
      recorder.ondataavailable = function (e) { if (e.data && e.data.size) chunks.push(e.data); };
      recorder.onstop = finish;
      recorder.start(1000);
      startedAt = performance.now();
      root.classList.add('try-recording');
      root.setAttribute('data-state', 'recording');
      stopBtn.disabled = false;
      say('Recording… speak naturally. It stops by itself at ' + clock(maxSeconds) + '.');
      tick = setInterval(function () {
        var t = (performance.now() - startedAt) / 1000;
        timerEl.textContent = clock(Math.min(t, maxSeconds));
        if (t >= maxSeconds) stop();
      }, 200);
    }, function (err) {
      recordBtn.disabled = false;
      say('The microphone is not available (' + (err && err.name ? err.name : 'refused') + '). You can choose a file instead.', true);
    });
  }

  function stop() {
    if (!recorder || recorder.state === 'inactive') return;
    clearInterval(tick);
    recorder.stop();
  }

  function finish() {
    var seconds = (performance.now() - startedAt) / 1000;
    root.setAttribute('data-recorded-seconds', seconds.toFixed(2));
    cancelAnimationFrame(raf);
    levelBar.style.transform = 'scaleX(0)';
    stream.getTracks().forEach(function (t) { t.stop(); });
    if (audioCtx) audioCtx.close();
    root.classList.remove('try-recording');
    stopBtn.disabled = true;
    recordBtn.textContent = 'Record again';
    var blob = new Blob(chunks, { type: (recorder.mimeType || 'audio/webm').split(';')[0] });
    recorder = null;
    send(blob, 'your ' + clock(seconds) + ' recording');
  }

  function send(blob, what) {
    recordBtn.disabled = true;
    sendFileBtn.disabled = true;
    root.setAttribute('data-state', 'sending');
    say('Analysing ' + what + '…');
    post('/console/emotion/try/analyze', csrf, blob, blob.type || 'audio/octet-stream').then(function (body) {
      show(body);
      say('Done: ' + body.results.length + ' interval' + (body.results.length === 1 ? '' : 's') + ' analysed. ' + (body.try_it.cap - body.try_it.used) + ' free tries left today.');
      root.setAttribute('data-state', 'done');
    }, function (err) {
      say(err.message, true);
      root.setAttribute('data-state', 'error');
    }).then(function () {
      recordBtn.disabled = false;
      sendFileBtn.disabled = !fileInput.files.length;
    });
  }

  function fmt(v) { return v.toFixed(2); }
  function pct(v) { return Math.round(v * 100) + '%'; }
  // Every time on the page with one decimal ("10.0–12.2 s"), so whole and partial intervals read alike.
  function secs(v) { return v.toFixed(1); }
  // The engine scores an interval only from 0.3 s of speech (the API's speech_ratio description) and answers
  // 0/0 otherwise: such an interval is shown as not scored, never as two zeros. speech_ratio is rounded to
  // 3 decimals, hence the small allowance.
  function scored(r) { return r.rough !== 0 || r.soft !== 0 || r.speech_ratio * (r.to - r.from) >= 0.3 - 0.003; }
  function notScoredText(r) { return r.to - r.from < 1 ? 'too short to score' : 'not scored: under 0.3 s of speech'; }
  // ffprobe's format names ("matroska,webm", "mov,mp4,m4a,3gp,3g2,mj2") as people know them.
  var FORMATS = { 'matroska,webm': 'WebM', wav: 'WAV', mp3: 'MP3', ogg: 'Ogg', flac: 'FLAC', aac: 'AAC', aiff: 'AIFF', asf: 'WMA', 'mov,mp4,m4a,3gp,3g2,mj2': 'MP4/M4A' };
  function formatName(f) { return FORMATS[f] || String(f).split(',')[0].toUpperCase(); }

  // The plot: one group per interval, two bars (rough, soft), faded by the speech share, over a speech strip.
  // Drawn at the container's own width (redrawn on resize), so its labels keep their size on a phone.
  function drawPlot(body) {
    var results = body.results;
    var plot = document.getElementById('plot');
    var W = Math.max(300, Math.round(plot.clientWidth || 720)), H = W < 560 ? 210 : 260, L = 34, R = 10, T = 12, B = 56;
    var plotW = W - L - R, plotH = H - T - B;
    var duration = body.summary.duration || (results.length ? results[results.length - 1].to : 0);
    var svg = svgEl('svg', { viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, role: 'img', 'aria-labelledby': 'plot-title', 'data-intervals': results.length });
    svg.appendChild(svgEl('title', { id: 'plot-title' }, 'Rough and soft per 5-second interval over ' + secs(duration) + ' s (details in the table below)'));
    [0, 0.5, 1].forEach(function (v) {
      var y = T + plotH * (1 - v);
      svg.appendChild(svgEl('line', { class: v === 0 ? 'axis' : 'grid-line', x1: L, x2: W - R, y1: y, y2: y }));
      svg.appendChild(svgEl('text', { x: L - 6, y: y + 4, 'text-anchor': 'end' }, v.toFixed(1)));
    });
    var x = function (t) { return L + (duration > 0 ? (t / duration) * plotW : 0); };
    var every = Math.max(1, Math.ceil(results.length / Math.max(2, Math.floor(plotW / 56))));
    results.forEach(function (r, i) {
      var g = svgEl('g', { class: 'interval' + (scored(r) ? '' : ' unscored'), 'data-from': r.from, 'data-to': r.to, 'fill-opacity': (0.3 + 0.7 * r.speech_ratio).toFixed(2) });
      var x0 = x(r.from), x1 = x(r.to), w = x1 - x0, gap = Math.min(6, w * 0.12), bw = (w - 3 * gap) / 2;
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
      if (i % every === 0 && x(duration) - x0 > 72) svg.appendChild(svgEl('text', { x: x0, y: H - 22, 'text-anchor': 'start' }, secs(r.from) + ' s'));
    });
    svg.appendChild(svgEl('text', { x: W - R, y: H - 22, 'text-anchor': 'end' }, secs(duration) + ' s'));
    svg.appendChild(svgEl('text', { x: L, y: H - 4 }, 'time'));
    plot.textContent = '';
    plot.appendChild(svg);
    var legend = document.createElement('ul');
    legend.className = 'try-legend';
    [['l-rough', 'rough'], ['l-soft', 'soft'], ['l-speech', 'speech share (strip)']].forEach(function (p) {
      var li = document.createElement('li'); li.className = p[0]; li.textContent = p[1]; legend.appendChild(li);
    });
    plot.appendChild(legend);
  }

  var resizeTimer = 0;
  window.addEventListener('resize', function () {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(function () { if (shown) drawPlot(shown); }, 100);
  });

  var shown = null;

  function show(body) {
    shown = body;
    document.getElementById('result').hidden = false;
    drawPlot(body);
    var results = body.results;
    var s = body.summary;
    var dl = document.getElementById('summary');
    dl.textContent = '';
    [['Duration', secs(s.duration) + ' s'], ['Speech', pct(s.speech_ratio)], ['Rough mean', fmt(s.rough_mean)], ['Rough max', fmt(s.rough_max)], ['Soft mean', fmt(s.soft_mean)], ['Soft max', fmt(s.soft_max)]].forEach(function (p) {
      var d = document.createElement('div'), dt = document.createElement('dt'), dd = document.createElement('dd');
      dt.textContent = p[0]; dd.textContent = p[1]; d.appendChild(dt); d.appendChild(dd); dl.appendChild(d);
    });

    var tbody = document.querySelector('#intervals-table tbody');
    tbody.textContent = '';
    results.forEach(function (r) {
      var tr = document.createElement('tr');
      var th = document.createElement('th');
      th.setAttribute('scope', 'row');
      th.textContent = secs(r.from) + '–' + secs(r.to) + ' s';
      tr.appendChild(th);
      var cells = scored(r) ? [[fmt(r.rough), 1], [fmt(r.soft), 1]] : [[notScoredText(r), 2]];
      cells.concat([[pct(r.speech_ratio), 1]]).forEach(function (c) {
        var td = document.createElement('td');
        td.className = c[1] === 2 ? 'num unscored' : 'num';
        if (c[1] === 2) td.colSpan = 2;
        td.textContent = c[0]; tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    var m = body.meta;
    document.getElementById('meta').textContent = 'Read as ' + formatName(m.format_name) + ' audio, ' + m.sample_rate + ' Hz, ' + m.channels + ' channel' + (m.channels === 1 ? '' : 's') + ', ' + Math.round(m.bit_rate / 1000) + ' kbps.';
  }

  recordBtn.addEventListener('click', start);
  stopBtn.addEventListener('click', stop);
  fileInput.addEventListener('change', function () { sendFileBtn.disabled = !fileInput.files.length; });
  sendFileBtn.addEventListener('click', function () {
    var f = fileInput.files[0];
    if (f) send(f, f.name);
  });
})();
`;

const LIVENESS_JS = String.raw`
(function () {
  'use strict';
  var root = document.getElementById('try-liveness');
  if (!root) return;
  var csrf = root.getAttribute('data-csrf');
  var video = document.getElementById('camera');
  var onBtn = document.getElementById('camera-on');
  var snapBtn = document.getElementById('snap');
  var fileInput = document.getElementById('image-file');
  ${POST_FN}

  onBtn.addEventListener('click', function () {
    if (!navigator.mediaDevices) { say('This browser cannot use a camera here; choose a photo instead.', true); return; }
    onBtn.disabled = true;
    navigator.mediaDevices.getUserMedia({ video: { width: { ideal: 1280 }, height: { ideal: 720 } } }).then(function (s) {
      video.srcObject = s;
      video.hidden = false;
      return video.play();
    }).then(function () {
      snapBtn.disabled = false;
      say('Camera on. Look at it and take the photo.');
    }, function (err) {
      onBtn.disabled = false;
      say('The camera is not available (' + (err && err.name ? err.name : 'refused') + '). You can choose a photo instead.', true);
    });
  });

  snapBtn.addEventListener('click', function () {
    var c = document.createElement('canvas');
    c.width = video.videoWidth; c.height = video.videoHeight;
    c.getContext('2d').drawImage(video, 0, 0);
    c.toBlob(function (blob) { if (blob) check(blob); }, 'image/jpeg', 0.92);
  });

  fileInput.addEventListener('change', function () { if (fileInput.files[0]) check(fileInput.files[0]); });

  function check(blob) {
    snapBtn.disabled = true;
    root.setAttribute('data-state', 'sending');
    say('Checking the photo…');
    post('/console/liveness/try/check', csrf, blob, blob.type || 'image/jpeg').then(function (body) {
      show(blob, body);
      say('Done. ' + (body.try_it.cap - body.try_it.used) + ' free tries left today.');
      root.setAttribute('data-state', 'done');
    }, function (err) {
      // The previous photo's verdict, likelihood and face box must not stand beside this photo's error.
      document.getElementById('result').hidden = true;
      root.removeAttribute('data-verdict');
      root.removeAttribute('data-boxes');
      say(err.message, true);
      root.setAttribute('data-state', 'error');
    }).then(function () { snapBtn.disabled = !video.srcObject; });
  }

  function show(blob, r) {
    document.getElementById('result').hidden = false;
    var verdict = document.getElementById('verdict');
    var kind = !r.isValidFace ? 'invalid' : r.isFakeFace ? 'fake' : 'live';
    verdict.textContent = kind === 'invalid' ? 'no usable face' : kind === 'fake' ? 'looks like a spoof' : 'live person';
    verdict.className = 'try-verdict-' + kind;
    root.setAttribute('data-verdict', kind);

    var img = document.getElementById('photo');
    var boxes = document.getElementById('boxes');
    img.onload = function () {
      boxes.setAttribute('viewBox', '0 0 ' + img.naturalWidth + ' ' + img.naturalHeight);
      boxes.setAttribute('preserveAspectRatio', 'none');
      boxes.textContent = '';
      var rects = r.vFaceRect && r.vFaceRect.length ? r.vFaceRect : (r.faceRectArea && r.faceRectArea.width ? [r.faceRectArea] : []);
      rects.forEach(function (b) {
        boxes.appendChild(svgEl('rect', { class: 'face' + (r.isFakeFace ? ' fake' : ''), x: b.x, y: b.y, width: b.width, height: b.height }));
      });
      root.setAttribute('data-boxes', String(rects.length));
    };
    // Shown from memory as a data: URL (the CSP allows data: images, not blob:); the server keeps nothing.
    var reader = new FileReader();
    reader.onload = function () { img.src = reader.result; };
    reader.readAsDataURL(blob);

    var lk = document.getElementById('likelihood');
    lk.textContent = '';
    var p = document.createElement('p');
    p.textContent = 'Spoof likelihood ' + r.isFakeLikelihood.toFixed(3) + ' against the threshold ' + r.threshold + ' (above it: spoof).';
    var bar = document.createElement('div'); bar.className = 'try-bar';
    bar.setAttribute('role', 'img');
    bar.setAttribute('aria-label', 'Likelihood ' + r.isFakeLikelihood.toFixed(3) + ', threshold ' + r.threshold);
    var fill = document.createElement('div'); fill.className = 'try-bar-fill';
    fill.style.transform = 'scaleX(' + Math.max(0, Math.min(1, r.isFakeLikelihood)).toFixed(3) + ')';
    var mark = document.createElement('div'); mark.className = 'try-bar-mark';
    mark.style.left = (r.threshold * 100).toFixed(1) + '%';
    bar.appendChild(fill); bar.appendChild(mark);
    lk.appendChild(p); lk.appendChild(bar);
    document.getElementById('msg').textContent = r.msg || '';
    var ul = document.getElementById('reasons');
    ul.textContent = '';
    (r.reasons.length ? r.reasons : ['none: the face is usable']).forEach(function (x) { var li = document.createElement('li'); li.textContent = x; ul.appendChild(li); });
  }
})();
`;

export const TRY_IT_ASSETS = {
  css: hashed('try-it', 'css', CSS, 'text/css; charset=utf-8'),
  emotion: hashed('try-emotion', 'js', EMOTION_JS, 'text/javascript; charset=utf-8'),
  liveness: hashed('try-liveness', 'js', LIVENESS_JS, 'text/javascript; charset=utf-8'),
};
