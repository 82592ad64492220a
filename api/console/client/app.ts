// The console's page script, on every page (/console/assets/app-<hash>.js; the CSP allows scripts from 'self'
// only, no inline code). Progressive enhancement: every page works without it. It adds copy, download and print
// buttons, the "I have saved my keys" gate, live password feedback, inline validation, digits-only code boxes,
// the usage chart's read-out and submit-once forms. The rules are the server's own (../validation.ts, bundled).
import { FIELD_CHECKS, PASSWORD_RULES, type FieldRule } from '../validation';

function byId<T extends HTMLElement = HTMLElement>(id: string | null): T | null {
  return id ? (document.getElementById(id) as T | null) : null;
}

function selectText(el: Element): void {
  const range = document.createRange();
  range.selectNodeContents(el);
  const sel = window.getSelection();
  sel?.removeAllRanges();
  sel?.addRange(range);
}

// Copy buttons: <button data-copy="elementId">
document.querySelectorAll<HTMLButtonElement>('[data-copy]').forEach((btn) => {
  btn.hidden = false;
  btn.addEventListener('click', () => {
    const target = byId(btn.getAttribute('data-copy'));
    if (!target) return;
    const text = (target.textContent ?? '').trim();
    const done = () => {
      const label = btn.textContent;
      btn.textContent = 'Copied';
      btn.setAttribute('aria-live', 'polite');
      setTimeout(() => (btn.textContent = label), 1800);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(done, () => selectText(target));
    } else {
      selectText(target);
      try {
        document.execCommand('copy');
        done();
      } catch {
        // the text stays selected for Ctrl+C
      }
    }
  });
});

// Download buttons: <button data-download="listId" data-filename=… data-heading=…> saves the list's codes,
// one a line, as a text file made in the browser (the server never keeps them in the clear).
document.querySelectorAll<HTMLButtonElement>('[data-download]').forEach((btn) => {
  btn.hidden = false;
  btn.addEventListener('click', () => {
    const list = byId(btn.getAttribute('data-download'));
    if (!list) return;
    const lines = Array.from(list.querySelectorAll('code'), (c) => (c.textContent ?? '').trim());
    const text = (btn.getAttribute('data-heading') ?? '') + '\n\n' + lines.join('\n') + '\n';
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    a.download = btn.getAttribute('data-filename') ?? 'download.txt';
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  });
});

document.querySelectorAll<HTMLButtonElement>('[data-print]').forEach((btn) => {
  btn.hidden = false;
  btn.addEventListener('click', () => window.print());
});

// "I have saved my keys": the continue button waits for the checkbox.
document.querySelectorAll<HTMLInputElement>('[data-enables]').forEach((box) => {
  const target = byId<HTMLButtonElement>(box.getAttribute('data-enables'));
  if (!target) return;
  const sync = () => (target.disabled = !box.checked);
  box.addEventListener('change', sync);
  sync();
});

// Live password feedback: the checklist's items name the rule they show (data-rule = PasswordRule id).
const pw = document.querySelector<HTMLInputElement>('input[data-password-rules]');
const ruleList = byId(pw?.getAttribute('data-password-rules') ?? null);
if (pw && ruleList) {
  const items = Array.from(ruleList.querySelectorAll<HTMLLIElement>('li[data-rule]'));
  const confirm = document.querySelector<HTMLInputElement>('input[data-confirms]');
  const confirmError = confirm ? byId(`${confirm.id}-error`) : null;
  const update = (): boolean => {
    let allOk = true;
    for (const li of items) {
      const rule = PASSWORD_RULES.find((r) => r.id === li.getAttribute('data-rule'));
      const ok = !!rule && rule.test(pw.value);
      li.classList.toggle('ok', ok);
      const sr = li.querySelector('.sr-only');
      if (sr) sr.textContent = ok ? ' (met)' : ' (not met yet)';
      allOk = allOk && ok;
    }
    pw.setAttribute('aria-invalid', pw.value && !allOk ? 'true' : 'false');
    if (confirm?.value) {
      const same = confirm.value === pw.value;
      confirm.setAttribute('aria-invalid', same ? 'false' : 'true');
      if (confirmError) confirmError.textContent = same ? '' : 'The two passwords do not match.';
    }
    return allOk;
  };
  pw.addEventListener('input', update);
  confirm?.addEventListener('input', update);
  pw.form?.addEventListener('submit', (e) => {
    const ok = update();
    const pwError = byId('password-error');
    if (pwError) {
      const missing = items.filter((li) => !li.classList.contains('ok')).map((li) => (li.firstChild?.textContent ?? '').trim().toLowerCase());
      pwError.textContent = missing.length ? `The password needs: ${missing.join(', ')}.` : '';
    }
    if (!ok || (confirm && confirm.value !== pw.value)) {
      e.preventDefault();
      (ok && confirm ? confirm : pw).focus();
      if (confirmError && confirm && !confirm.value) confirmError.textContent = 'Type the password again.';
    }
  });
}

function isFieldRule(name: string | null): name is FieldRule {
  return name !== null && Object.prototype.hasOwnProperty.call(FIELD_CHECKS, name);
}

// Inline validation of forms marked data-validate: each input names its rule in data-rule.
document.querySelectorAll<HTMLFormElement>('form[data-validate]').forEach((form) => {
  const inputs = Array.from(form.querySelectorAll<HTMLInputElement>('input[data-rule]'));
  const check = (input: HTMLInputElement): boolean => {
    const rule = input.getAttribute('data-rule');
    const msg = isFieldRule(rule) ? FIELD_CHECKS[rule](input.value) : '';
    const out = byId(`${input.id}-error`);
    if (out) out.textContent = msg;
    input.setAttribute('aria-invalid', msg ? 'true' : 'false');
    return !msg;
  };
  for (const input of inputs) {
    input.addEventListener('blur', () => {
      if (input.value || input.dataset.touched) check(input);
      input.dataset.touched = '1';
    });
    input.addEventListener('input', () => {
      if (input.getAttribute('aria-invalid') === 'true') check(input);
    });
  }
  form.addEventListener('submit', (e) => {
    let firstBad: HTMLInputElement | null = null;
    for (const input of inputs) if (!check(input) && !firstBad) firstBad = input;
    if (firstBad) {
      e.preventDefault();
      firstBad.focus();
    }
  });
});

// One-time code boxes keep digits only.
document.querySelectorAll<HTMLInputElement>('input[data-rule="code"]').forEach((input) => {
  input.addEventListener('input', () => (input.value = input.value.replace(/\D+/g, '').slice(0, 6)));
});

// The usage chart: tapping or hovering a bar reads its day out below the chart.
const readout = byId('chart-readout');
if (readout) {
  document.querySelectorAll<SVGRectElement>('svg.chart rect[data-day]').forEach((bar) => {
    const show = () => {
      const n = Number(bar.getAttribute('data-calls'));
      readout.textContent = `${bar.getAttribute('data-label')}: ${n.toLocaleString('en-US')}${n === 1 ? ' call' : ' calls'}`;
    };
    bar.addEventListener('click', show);
    bar.addEventListener('mouseenter', show);
  });
}

// Buttons that submit once (double clicks would regenerate twice).
document.querySelectorAll<HTMLFormElement>('form[data-once]').forEach((form) => {
  form.addEventListener('submit', (e) => {
    if (e.defaultPrevented) return;
    if (form.dataset.sent) {
      e.preventDefault();
      return;
    }
    form.dataset.sent = '1';
  });
});
