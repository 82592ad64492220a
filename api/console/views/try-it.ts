// Owns the markup of the two "Try it" pages: the controls, the live regions the page scripts fill in, and
// the links to their script and stylesheet (CSP: 'self' only, so nothing inline).
import { assetUrl } from '../assets/serve';
import { html } from './html';
import { appPage, type AppContext } from './layout';

export function emotionTryPage(ctx: AppContext, o: { monthlyCap: number; maxSeconds: number }): string {
  return appPage(ctx, {
    title: 'Try the emotion API',
    nav: 'emotion-try',
    body: html`<link rel="stylesheet" href="${assetUrl('try-it.css')}">
<div class="page-head"><div><h1>Try the voice emotion API</h1>
<p>Record up to ${o.maxSeconds} seconds from your microphone, or choose an audio file. The console sends it to the same engine as <code>POST /feelings/v3/analysis</code> and draws <strong>rough</strong> and <strong>soft</strong> for every 5 s.</p></div></div>
<div class="grid" id="try-emotion" data-csrf="${ctx.csrf}" data-max-seconds="${o.maxSeconds}">
  <section class="card span-6" aria-labelledby="rec-h">
    <h2 id="rec-h">Record</h2>
    <div class="try-level" aria-hidden="true"><div class="try-level-bar" id="level-bar"></div></div>
    <p class="try-timer"><span id="timer" role="timer" aria-live="off">0:00</span> <span class="muted small">/ 1:00</span></p>
    <div class="actions">
      <button class="btn btn-primary" type="button" id="record">Start recording</button>
      <button class="btn btn-secondary" type="button" id="stop" disabled>Stop and analyse</button>
    </div>
    <p class="small muted" id="rec-hint">Your browser asks for the microphone the first time. Recording stops by itself at 1:00.</p>
  </section>
  <section class="card span-6" aria-labelledby="file-h">
    <h2 id="file-h">Or choose a file</h2>
    <div class="field"><label for="audio-file">Audio file (WAV, MP3, AAC/M4A, FLAC, WMA, AIFF, Ogg/Opus, WebM), up to 10 MB</label>
      <input id="audio-file" type="file" accept="audio/*,video/webm,.opus,.ogg,.webm,.mka"></div>
    <button class="btn btn-secondary" type="button" id="send-file" disabled>Analyse the file</button>
    <p class="small muted">Free: ${o.monthlyCap} tries a month, not counted against your plan. Audio is analysed and discarded, never stored.</p>
  </section>
  <div class="span-12" id="status" role="status" aria-live="polite"></div>
  <section class="card span-12" id="result" aria-labelledby="result-h" hidden>
    <h2 id="result-h">Result</h2>
    <figure class="try-plot">
      <div id="plot"></div>
      <figcaption class="small muted">Bars: rough and soft (0–1) per interval; faded intervals hold little speech (the grey strip shows the speech share).</figcaption>
    </figure>
    <dl class="try-summary" id="summary"></dl>
    <div class="table-wrap"><table id="intervals-table"><caption class="sr-only">Rough, soft and speech share per interval</caption>
      <thead><tr><th scope="col">Interval</th><th scope="col" class="num">Rough</th><th scope="col" class="num">Soft</th><th scope="col" class="num">Speech</th></tr></thead><tbody></tbody></table></div>
    <p class="small muted" id="meta"></p>
  </section>
</div>
<script src="${assetUrl('try-emotion.js')}" defer></script>`,
  });
}

export function livenessTryPage(ctx: AppContext, o: { monthlyCap: number; threshold: number }): string {
  return appPage(ctx, {
    title: 'Try the liveness API',
    nav: 'liveness-try',
    body: html`<link rel="stylesheet" href="${assetUrl('try-it.css')}">
<div class="page-head"><div><h1>Try the liveness API</h1>
<p>Take a photo with your camera or choose one. The console sends it to the same engine as <code>POST /v1/check/liveness</code> and shows the verdict and the face it found.</p></div></div>
<div class="grid" id="try-liveness" data-csrf="${ctx.csrf}" data-threshold="${o.threshold}">
  <section class="card span-6" aria-labelledby="cam-h">
    <h2 id="cam-h">Camera</h2>
    <video id="camera" class="try-camera" playsinline muted hidden></video>
    <div class="actions">
      <button class="btn btn-secondary" type="button" id="camera-on">Turn the camera on</button>
      <button class="btn btn-primary" type="button" id="snap" disabled>Take the photo and check</button>
    </div>
    <div class="field try-file"><label for="image-file">Or choose a photo (JPEG or PNG, up to 7.5 MB)</label>
      <input id="image-file" type="file" accept="image/jpeg,image/png"></div>
    <p class="small muted">Free: ${o.monthlyCap} tries a month, not counted against your plan. The photo is checked and discarded, never stored.</p>
    <div id="status" role="status" aria-live="polite"></div>
  </section>
  <section class="card span-6" id="result" aria-labelledby="verdict-h" hidden>
    <h2 id="verdict-h">Verdict: <span id="verdict"></span></h2>
    <div class="try-photo"><img id="photo" alt="The photo that was checked, with the detected face outlined"><svg id="boxes" aria-hidden="true" focusable="false"></svg></div>
    <div id="likelihood"></div>
    <p id="msg"></p>
    <h3 class="small">Reasons</h3>
    <ul id="reasons"></ul>
  </section>
</div>
<script src="${assetUrl('try-liveness.js')}" defer></script>`,
  });
}
