import { expect } from 'chai';
import { escapeHtml, html, raw, SafeHtml } from '../../../api/console/views/html';

describe('Console HTML building (views/html.ts)', () => {
  it('escapes the five HTML specials and the backtick', () => {
    expect(escapeHtml(`<a href="x" onclick='y'>&\`</a>`)).to.equal('&#60;a href=&#34;x&#34; onclick=&#39;y&#39;&#62;&#38;&#96;&#60;/a&#62;');
    expect(escapeHtml('plain text, ünïcödé 123')).to.equal('plain text, ünïcödé 123');
  });

  it('escapes every interpolated value, so user input cannot become markup or leave an attribute', () => {
    const name = '"><script>alert(1)</script>';
    const out = html`<input value="${name}">`.value;
    expect(out).to.equal('<input value="&#34;&#62;&#60;script&#62;alert(1)&#60;/script&#62;">');
    expect(out).to.not.include('<script>');
  });

  it('keeps SafeHtml (nested templates, raw markup from our own code) as it is', () => {
    const item = (s: string) => html`<li>${s}</li>`;
    const list = html`<ul>${['a<b', 'c&d'].map(item)}</ul>`;
    expect(list).to.be.instanceOf(SafeHtml);
    expect(list.value).to.equal('<ul><li>a&#60;b</li><li>c&#38;d</li></ul>');
    expect(html`<div>${raw('<svg></svg>')}</div>`.value).to.equal('<div><svg></svg></div>');
    expect(String(html`<p>${'x'}</p>`)).to.equal('<p>x</p>');
  });

  it('renders nothing for null, undefined and false, and text for numbers and true', () => {
    expect(html`[${null}|${undefined}|${false}|${0}|${true}|${12.5}]`.value).to.equal('[|||0|true|12.5]');
  });
});
