// The "Try the liveness API" page's script (/console/liveness/try): takes a webcam frame (or a file), posts it to
// the session route, and shows the verdict, the spoof likelihood against the threshold and the face boxes drawn
// over the photo (shown from memory as a data: URL; the server keeps nothing).
import { post, required, say, svgEl, triesLeft } from './try-it-common';

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
/** The answer of POST /console/liveness/try/check (the public API's result plus threshold and allowance). */
interface CheckAnswer {
  isValidFace: boolean;
  isFakeFace: boolean;
  isFakeLikelihood: number;
  threshold: number;
  msg?: string;
  reasons: string[];
  vFaceRect?: Box[];
  faceRectArea?: Box;
  try_it: { used: number; cap: number };
}

const root = document.getElementById('try-liveness');
if (root) setUp(root);

function setUp(root: HTMLElement): void {
  const csrf = root.getAttribute('data-csrf') ?? '';
  const video = required<HTMLVideoElement>('camera');
  const onBtn = required<HTMLButtonElement>('camera-on');
  const snapBtn = required<HTMLButtonElement>('snap');
  const fileInput = required<HTMLInputElement>('image-file');

  onBtn.addEventListener('click', () => {
    if (!navigator.mediaDevices) {
      say('This browser cannot use a camera here; choose a photo instead.', true);
      return;
    }
    onBtn.disabled = true;
    navigator.mediaDevices
      .getUserMedia({ video: { width: { ideal: 1280 }, height: { ideal: 720 } } })
      .then((s) => {
        video.srcObject = s;
        video.hidden = false;
        return video.play();
      })
      .then(
        () => {
          snapBtn.disabled = false;
          say('Camera on. Look at it and take the photo.');
        },
        (err: unknown) => {
          onBtn.disabled = false;
          say(`The camera is not available (${err instanceof Error && err.name ? err.name : 'refused'}). You can choose a photo instead.`, true);
        },
      );
  });

  snapBtn.addEventListener('click', () => {
    const c = document.createElement('canvas');
    c.width = video.videoWidth;
    c.height = video.videoHeight;
    c.getContext('2d')?.drawImage(video, 0, 0);
    c.toBlob((blob) => blob && check(blob), 'image/jpeg', 0.92);
  });

  fileInput.addEventListener('change', () => {
    const f = fileInput.files?.[0];
    if (f) check(f);
  });

  function check(blob: Blob): void {
    snapBtn.disabled = true;
    root.setAttribute('data-state', 'sending');
    say('Checking the photo…');
    post<CheckAnswer>('/console/liveness/try/check', csrf, blob, blob.type || 'image/jpeg')
      .then(
        (body) => {
          show(blob, body);
          say(`Done. ${triesLeft(body.try_it)}`);
          root.setAttribute('data-state', 'done');
        },
        (err: Error) => {
          // The previous photo's verdict, likelihood and face box must not stand beside this photo's error.
          required('result').hidden = true;
          root.removeAttribute('data-verdict');
          root.removeAttribute('data-boxes');
          say(err.message, true);
          root.setAttribute('data-state', 'error');
        },
      )
      .finally(() => (snapBtn.disabled = !video.srcObject));
  }

  function show(blob: Blob, r: CheckAnswer): void {
    required('result').hidden = false;
    const verdict = required('verdict');
    const kind = !r.isValidFace ? 'invalid' : r.isFakeFace ? 'fake' : 'live';
    verdict.textContent = kind === 'invalid' ? 'no usable face' : kind === 'fake' ? 'looks like a spoof' : 'live person';
    verdict.className = `try-verdict-${kind}`;
    root.setAttribute('data-verdict', kind);

    const img = required<HTMLImageElement>('photo');
    const boxes = document.getElementById('boxes');
    img.onload = () => {
      if (!boxes) return;
      boxes.setAttribute('viewBox', `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
      boxes.setAttribute('preserveAspectRatio', 'none');
      boxes.textContent = '';
      const rects = r.vFaceRect?.length ? r.vFaceRect : r.faceRectArea?.width ? [r.faceRectArea] : [];
      for (const b of rects)
        boxes.appendChild(svgEl('rect', { class: 'face' + (r.isFakeFace ? ' fake' : ''), x: b.x, y: b.y, width: b.width, height: b.height }));
      root.setAttribute('data-boxes', String(rects.length));
    };
    // Shown from memory as a data: URL (the CSP allows data: images, not blob:); the server keeps nothing.
    const reader = new FileReader();
    reader.onload = () => {
      if (typeof reader.result === 'string') img.src = reader.result;
    };
    reader.readAsDataURL(blob);

    const lk = required('likelihood');
    lk.textContent = '';
    const p = document.createElement('p');
    p.textContent = `Spoof likelihood ${r.isFakeLikelihood.toFixed(3)} against the threshold ${r.threshold} (above it: spoof).`;
    const bar = document.createElement('div');
    bar.className = 'try-bar';
    bar.setAttribute('role', 'img');
    bar.setAttribute('aria-label', `Likelihood ${r.isFakeLikelihood.toFixed(3)}, threshold ${r.threshold}`);
    const fill = document.createElement('div');
    fill.className = 'try-bar-fill';
    fill.style.transform = `scaleX(${Math.max(0, Math.min(1, r.isFakeLikelihood)).toFixed(3)})`;
    const mark = document.createElement('div');
    mark.className = 'try-bar-mark';
    mark.style.left = `${(r.threshold * 100).toFixed(1)}%`;
    bar.appendChild(fill);
    bar.appendChild(mark);
    lk.appendChild(p);
    lk.appendChild(bar);
    required('msg').textContent = r.msg ?? '';
    const ul = required('reasons');
    ul.textContent = '';
    for (const x of r.reasons.length ? r.reasons : ['none: the face is usable']) {
      const li = document.createElement('li');
      li.textContent = x;
      ul.appendChild(li);
    }
  }
}
