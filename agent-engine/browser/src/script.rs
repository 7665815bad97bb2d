//! The JavaScript the tools run in the page. Each returns a JSON string, which survives the
//! trip through CDP unchanged whatever the page defines.

/// Numbers the visible interactive elements (kept in `window.__tandemElements`, index 1 is the
/// first) and describes the page: URL, title, elements, viewport, page size, scroll position.
pub const STATE: &str = r#"(() => {
  const MAX = 400;
  const sel = 'a[href],button,input:not([type=hidden]),select,textarea,summary,[role=button],[role=link],[role=checkbox],[role=radio],[role=tab],[role=menuitem],[role=option],[role=switch],[role=textbox],[role=combobox],[onclick],[contenteditable=""],[contenteditable=true],[tabindex]:not([tabindex="-1"])';
  const visible = (el) => {
    const r = el.getBoundingClientRect();
    if (r.width <= 0 || r.height <= 0) return false;
    const s = getComputedStyle(el);
    return s.visibility !== 'hidden' && s.display !== 'none';
  };
  const clip = (s, n) => { s = (s || '').replace(/\s+/g, ' ').trim(); return s.length > n ? s.slice(0, n - 1) + '…' : s; };
  const all = Array.from(document.querySelectorAll(sel)).filter(visible);
  window.__tandemElements = all;
  const elements = all.slice(0, MAX).map((el, i) => {
    const tag = el.tagName.toLowerCase();
    const o = { index: i + 1, tag };
    const type = el.getAttribute('type');
    const secret = tag === 'input' && (type || '').toLowerCase() === 'password';
    let text = clip(el.innerText || el.getAttribute('aria-label') || el.getAttribute('title') || el.getAttribute('alt') || '', 100);
    if (!text && (tag === 'input' || tag === 'textarea') && !secret) text = clip(el.value, 100);
    if (text) o.text = text;
    const href = el.getAttribute('href');
    if (href) o.href = href;
    if (type) o.type = type;
    for (const a of ['name', 'id', 'placeholder', 'role']) { const v = el.getAttribute(a); if (v) o[a] = clip(v, 60); }
    if ((tag === 'input' || tag === 'textarea' || tag === 'select') && !secret && el.value) o.value = clip(el.value, 100);
    if (el.checked) o.checked = true;
    if (el.disabled) o.disabled = true;
    const r = el.getBoundingClientRect();
    if (r.bottom < 0 || r.top > innerHeight || r.right < 0 || r.left > innerWidth) o.in_viewport = false;
    return o;
  });
  const de = document.documentElement || { scrollWidth: innerWidth, scrollHeight: innerHeight };
  return JSON.stringify({
    url: location.href, title: document.title, elements, total: all.length,
    viewport: { width: innerWidth, height: innerHeight },
    page: { width: Math.max(de.scrollWidth, innerWidth), height: Math.max(de.scrollHeight, innerHeight) },
    scroll: { x: Math.round(scrollX), y: Math.round(scrollY) },
  });
})()"#;

/// The element numbered `{index}` scrolled into view: its centre in viewport CSS pixels, or
/// `{"missing":true}` when the index is unknown or the element left the page.
pub fn locate(index: i64) -> String {
    format!(
        r#"((i) => {{
  const el = (window.__tandemElements || [])[i - 1];
  if (!el || !el.isConnected) return JSON.stringify({{ missing: true }});
  el.scrollIntoView({{ block: 'center', inline: 'center' }});
  const r = el.getBoundingClientRect();
  return JSON.stringify({{ x: r.left + r.width / 2, y: r.top + r.height / 2, tag: el.tagName.toLowerCase(), href: el.href || null }});
}})({index})"#
    )
}

/// Focuses element `{index}` and selects its content so typed text replaces it. Answers
/// `{"missing":true}`, `{"not_typeable":TAG}`, `{"select":true}` (handled by [`choose`]) or
/// `{"ok":true}`.
pub fn focus_for_typing(index: i64) -> String {
    format!(
        r#"((i) => {{
  const el = (window.__tandemElements || [])[i - 1];
  if (!el || !el.isConnected) return JSON.stringify({{ missing: true }});
  const tag = el.tagName.toLowerCase();
  if (tag === 'select') return JSON.stringify({{ select: true }});
  const typeable = tag === 'textarea' || el.isContentEditable || el.getAttribute('role') === 'textbox' || el.getAttribute('role') === 'combobox'
    || (tag === 'input' && !['button', 'submit', 'reset', 'checkbox', 'radio', 'file', 'image', 'range', 'color'].includes((el.type || '').toLowerCase()));
  if (!typeable) return JSON.stringify({{ not_typeable: tag }});
  el.scrollIntoView({{ block: 'center' }});
  el.focus();
  if (typeof el.select === 'function') el.select();
  else if (el.isContentEditable) {{ const r = document.createRange(); r.selectNodeContents(el); const s = getSelection(); s.removeAllRanges(); s.addRange(r); }}
  return JSON.stringify({{ ok: true }});
}})({index})"#
    )
}

/// Picks the option of select element `{index}` whose text or value is `text`.
pub fn choose(index: i64, text: &str) -> String {
    let text = serde_json::Value::from(text);
    format!(
        r#"((i, t) => {{
  const el = (window.__tandemElements || [])[i - 1];
  if (!el || !el.isConnected) return JSON.stringify({{ missing: true }});
  const o = Array.from(el.options).find((o) => o.text.trim() === t || o.value === t);
  if (!o) return JSON.stringify({{ options: Array.from(el.options).map((o) => o.text.trim()) }});
  el.value = o.value;
  el.dispatchEvent(new Event('input', {{ bubbles: true }}));
  el.dispatchEvent(new Event('change', {{ bubbles: true }}));
  return JSON.stringify({{ ok: true }});
}})({index}, {text})"#
    )
}

/// Scrolls by most of a screen; `sign` is 1 for down, -1 for up. Answers the new position.
pub fn scroll(sign: i32) -> String {
    format!(
        r#"(() => {{
  const before = scrollY;
  window.scrollBy(0, {sign} * Math.round(innerHeight * 0.8));
  const de = document.documentElement;
  return JSON.stringify({{ moved: scrollY !== before, y: Math.round(scrollY), height: de ? de.scrollHeight : innerHeight, viewport: innerHeight }});
}})()"#
    )
}

/// `document.readyState`.
pub const READY_STATE: &str = "document.readyState";

/// The page's main content as Markdown; with `links` true, links keep their targets.
pub fn markdown(links: bool) -> String {
    format!(
        r#"((links) => {{
  const skip = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'SVG', 'TEMPLATE', 'IFRAME', 'CANVAS', 'HEAD', 'META', 'LINK']);
  const out = [];
  const inline = (node) => {{
    let s = '';
    for (const c of node.childNodes) {{
      if (c.nodeType === 3) s += c.textContent.replace(/\s+/g, ' ');
      else if (c.nodeType === 1 && !skip.has(c.tagName)) {{
        const st = getComputedStyle(c);
        if (st.display === 'none' || st.visibility === 'hidden') continue;
        const t = c.tagName;
        if (t === 'BR') s += '\n';
        else if (t === 'A' && links && c.getAttribute('href')) s += '[' + inline(c).trim() + '](' + c.href + ')';
        else if (t === 'STRONG' || t === 'B') s += '**' + inline(c).trim() + '**';
        else if (t === 'EM' || t === 'I') s += '*' + inline(c).trim() + '*';
        else if (t === 'CODE') s += '`' + c.textContent + '`';
        else if (t === 'IMG') s += c.alt ? '![' + c.alt + ']' : '';
        else if (t === 'INPUT' || t === 'TEXTAREA' || t === 'SELECT') s += '';
        else if (st.display.startsWith('inline')) s += inline(c);
        else s += ' ' + inline(c) + ' ';
      }}
    }}
    return s;
  }};
  const block = (node, prefix) => {{
    for (const c of node.childNodes) {{
      if (c.nodeType === 3) {{ const t = c.textContent.replace(/\s+/g, ' ').trim(); if (t) out.push(prefix + t); continue; }}
      if (c.nodeType !== 1 || skip.has(c.tagName)) continue;
      const st = getComputedStyle(c);
      if (st.display === 'none' || st.visibility === 'hidden') continue;
      const t = c.tagName;
      const h = /^H([1-6])$/.exec(t);
      if (h) out.push('', '#'.repeat(+h[1]) + ' ' + inline(c).trim(), '');
      else if (t === 'P' || t === 'BLOCKQUOTE') out.push('', (t === 'BLOCKQUOTE' ? '> ' : '') + inline(c).trim(), '');
      else if (t === 'PRE') out.push('```', c.textContent.replace(/\n$/, ''), '```');
      else if (t === 'UL' || t === 'OL') {{ let n = 1; for (const li of c.children) out.push(prefix + (t === 'OL' ? (n++) + '. ' : '- ') + inline(li).trim()); }}
      else if (t === 'TR') out.push('| ' + Array.from(c.children).map((td) => inline(td).trim()).join(' | ') + ' |');
      else if (st.display.startsWith('inline') && !c.querySelector('div,p,h1,h2,h3,h4,h5,h6,ul,ol,table,pre')) {{ const s = inline({{ childNodes: [c] }}).trim(); if (s) out.push(prefix + s); }}
      else block(c, prefix);
    }}
  }};
  const root = document.querySelector('main, article, [role=main]') || document.body || document.documentElement;
  if (root) block(root, '');
  const md = out.join('\n').replace(/[ \t]+\n/g, '\n').replace(/\n{{3,}}/g, '\n\n').trim();
  const html = document.documentElement ? document.documentElement.outerHTML.length : 0;
  return JSON.stringify({{ url: location.href, title: document.title, markdown: md, html }});
}})({links})"#
    )
}

/// Local and session storage of the current origin.
pub const STORAGE: &str = r#"(() => {
  const dump = (s) => { try { return Object.keys(s).map((k) => ({ name: k, value: s.getItem(k) })); } catch (e) { return []; } };
  return JSON.stringify({ origin: location.origin, localStorage: dump(localStorage), sessionStorage: dump(sessionStorage) });
})()"#;

/// Writes `{items}` (`{"localStorage":[{name,value}],"sessionStorage":[...]}`) into the
/// current origin's storage.
pub fn set_storage(items: &serde_json::Value) -> String {
    format!(
        r#"((o) => {{
  let n = 0;
  for (const [key, s] of [['localStorage', localStorage], ['sessionStorage', sessionStorage]]) {{
    for (const it of (o[key] || [])) {{ if (it && typeof it.name === 'string') {{ s.setItem(it.name, String(it.value ?? '')); n++; }} }}
  }}
  return JSON.stringify({{ set: n }});
}})({items})"#
    )
}
