// Owns the console's only browser script, served as /console/assets/app-<hash>.js (the CSP allows
// scripts from 'self' only, no inline code). Progressive enhancement: every page works without it;
// it adds copy, download and print buttons, live password feedback and inline validation. Rules mirror validation.ts
// and passwords.ts, which the server enforces regardless.
export const CLIENT_JS = String.raw`
(function () {
  'use strict';

  // Copy buttons: <button data-copy="elementId">
  document.querySelectorAll('[data-copy]').forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      var target = document.getElementById(btn.getAttribute('data-copy'));
      if (!target) return;
      var text = target.textContent.trim();
      var done = function () {
        var label = btn.textContent;
        btn.textContent = 'Copied';
        btn.setAttribute('aria-live', 'polite');
        setTimeout(function () { btn.textContent = label; }, 1800);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { selectText(target); });
      } else {
        selectText(target);
        try { document.execCommand('copy'); done(); } catch (e) { /* the text stays selected for Ctrl+C */ }
      }
    });
  });
  // Download buttons: <button data-download="listId" data-filename=… data-heading=…> saves the list's codes,
  // one a line, as a text file made in the browser (the server never keeps them in the clear).
  document.querySelectorAll('[data-download]').forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      var list = document.getElementById(btn.getAttribute('data-download'));
      if (!list) return;
      var lines = Array.prototype.map.call(list.querySelectorAll('code'), function (c) { return c.textContent.trim(); });
      var text = (btn.getAttribute('data-heading') || '') + '\n\n' + lines.join('\n') + '\n';
      var a = document.createElement('a');
      a.href = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
      a.download = btn.getAttribute('data-filename') || 'download.txt';
      document.body.appendChild(a);
      a.click();
      a.remove();
      setTimeout(function () { URL.revokeObjectURL(a.href); }, 10000);
    });
  });
  document.querySelectorAll('[data-print]').forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () { window.print(); });
  });
  function selectText(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // "I have saved my keys": the continue button waits for the checkbox.
  document.querySelectorAll('[data-enables]').forEach(function (box) {
    var target = document.getElementById(box.getAttribute('data-enables'));
    if (!target) return;
    var sync = function () { target.disabled = !box.checked; };
    box.addEventListener('change', sync);
    sync();
  });

  // Live password feedback.
  var RULES = {
    length: function (p) { return p.length >= 8; },
    upper: function (p) { return /\p{Lu}/u.test(p); },
    lower: function (p) { return /\p{Ll}/u.test(p); },
    digit: function (p) { return /\p{Nd}/u.test(p); },
    symbol: function (p) { return /[^\p{L}\p{N}\s]/u.test(p); }
  };
  var pw = document.querySelector('input[data-password-rules]');
  if (pw) {
    var list = document.getElementById(pw.getAttribute('data-password-rules'));
    var confirm = document.querySelector('input[data-confirms]');
    var confirmError = confirm && document.getElementById(confirm.id + '-error');
    var update = function () {
      var allOk = true;
      list.querySelectorAll('li[data-rule]').forEach(function (li) {
        var ok = RULES[li.getAttribute('data-rule')](pw.value);
        li.classList.toggle('ok', ok);
        li.querySelector('.sr-only').textContent = ok ? ' (met)' : ' (not met yet)';
        allOk = allOk && ok;
      });
      pw.setAttribute('aria-invalid', pw.value && !allOk ? 'true' : 'false');
      if (confirm && confirm.value) {
        var same = confirm.value === pw.value;
        confirm.setAttribute('aria-invalid', same ? 'false' : 'true');
        if (confirmError) confirmError.textContent = same ? '' : 'The two passwords do not match.';
      }
      return allOk;
    };
    pw.addEventListener('input', update);
    if (confirm) confirm.addEventListener('input', update);
    pw.form.addEventListener('submit', function (e) {
      var ok = update();
      var pwError = document.getElementById('password-error');
      if (pwError) {
        var missing = [];
        list.querySelectorAll('li[data-rule]').forEach(function (li) { if (!li.classList.contains('ok')) missing.push(li.firstChild.textContent.trim().toLowerCase()); });
        pwError.textContent = missing.length ? 'The password needs: ' + missing.join(', ') + '.' : '';
      }
      if (!ok || (confirm && confirm.value !== pw.value)) {
        e.preventDefault();
        (ok ? confirm : pw).focus();
        if (confirmError && !confirm.value) confirmError.textContent = 'Type the password again.';
      }
    });
  }

  // Inline validation of forms marked data-validate: each input names its rule in data-rule.
  var CHECKS = {
    required: function (v) { return v.trim() ? '' : 'This field is required.'; },
    name: function (v) { return !v.trim() ? 'This field is required.' : v.trim().length > 100 ? 'Use at most 100 characters.' : ''; },
    company: function (v) { return !v.trim() ? 'Enter your company name.' : v.trim().length > 200 ? 'Use at most 200 characters.' : ''; },
    email: function (v) {
      if (!v.trim()) return 'Enter your work e-mail address.';
      return /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/.test(v.trim()) ? '' : 'Enter an e-mail address like name@company.com.';
    },
    website: function (v) {
      var site = v.trim();
      if (!site) return 'Enter your company website.';
      if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(site)) site = 'https://' + site;
      return /^https:\/\/([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\/?$/i.test(site) ? '' : 'Enter the domain only, like example.com or https://example.com.';
    },
    code: function (v) { return /^\d{6}$/.test(v.replace(/\s+/g, '')) ? '' : 'Enter the 6-digit code from your authenticator app.'; }
  };
  document.querySelectorAll('form[data-validate]').forEach(function (form) {
    var inputs = Array.prototype.slice.call(form.querySelectorAll('input[data-rule]'));
    var check = function (input) {
      var msg = CHECKS[input.getAttribute('data-rule')](input.value);
      var out = document.getElementById(input.id + '-error');
      if (out) out.textContent = msg;
      input.setAttribute('aria-invalid', msg ? 'true' : 'false');
      return !msg;
    };
    inputs.forEach(function (input) {
      input.addEventListener('blur', function () { if (input.value || input.dataset.touched) check(input); input.dataset.touched = '1'; });
      input.addEventListener('input', function () { if (input.getAttribute('aria-invalid') === 'true') check(input); });
    });
    form.addEventListener('submit', function (e) {
      var firstBad = null;
      inputs.forEach(function (input) { if (!check(input) && !firstBad) firstBad = input; });
      if (firstBad) { e.preventDefault(); firstBad.focus(); }
    });
  });

  // One-time code boxes keep digits only.
  document.querySelectorAll('input[data-rule="code"]').forEach(function (input) {
    input.addEventListener('input', function () { input.value = input.value.replace(/\D+/g, '').slice(0, 6); });
  });

  // The usage chart: tapping or hovering a bar reads its day out below the chart.
  var readout = document.getElementById('chart-readout');
  if (readout) {
    document.querySelectorAll('svg.chart rect[data-day]').forEach(function (bar) {
      var show = function () {
        var n = Number(bar.getAttribute('data-calls'));
        readout.textContent = bar.getAttribute('data-label') + ': ' + n.toLocaleString('en-US') + (n === 1 ? ' call' : ' calls');
      };
      bar.addEventListener('click', show);
      bar.addEventListener('mouseenter', show);
    });
  }

  // Buttons that submit once (double clicks would regenerate twice).
  document.querySelectorAll('form[data-once]').forEach(function (form) {
    form.addEventListener('submit', function (e) {
      if (e.defaultPrevented) return;
      if (form.dataset.sent) { e.preventDefault(); return; }
      form.dataset.sent = '1';
    });
  });
})();
`;
