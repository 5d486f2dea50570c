// render.js serialises the rendered DOM for web_extract's render step
// (render.go). It runs in Gatehouse's isolated world, which shares the DOM
// with the page. Open shadow roots are flattened into their hosts (a <slot>
// shows its assigned nodes, else its fallback content); same-origin iframes
// are inlined where they stand (contentDocument is null for other origins);
// scripts other than JSON-LD, styles, <noscript> and <template> are dropped.
//
// What a sighted reader of the page would not see is dropped too, judged on
// the computed style and layout (hidden text is how instructions are slipped
// to agents): an element of the body with display none, content-visibility
// hidden, an opacity (its own times its ancestors') under 0.05, a
// degenerate transform (scale 0), a box lying entirely left of or above the
// page (left: -9999px), a box at most 1px wide or high that clips its
// overflow (the sr-only pattern), a clip or clip-path leaving at most 1px,
// or an iframe at most 1px wide or high, is left out with everything in it;
// the text directly in an element with visibility hidden or collapse, a
// computed font size of at most 1px or a fully transparent text colour
// (not clipped to a background) is left out, its child elements are judged
// on their own (they may be visible again); an image or field with
// visibility hidden is left out. <head> is metadata and kept. (Left of the
// page is not judged in a right-to-left page, and boxes in inlined frames
// are judged in their frame.)
// Output stops growing at MAX characters.
function () {
  const MAX = 10 * 1024 * 1024;
  const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
  // Replaced and form elements: their boxes clip by nature, and an image
  // refused by the render context is 0×0 yet keeps its alt text.
  const REPLACED = new Set(['img', 'picture', 'video', 'audio', 'canvas', 'svg', 'embed', 'object', 'input', 'select', 'textarea', 'button', 'progress', 'meter']);
  const DROP = new Set(['script', 'style', 'noscript', 'template']);
  const out = [];
  let size = 0;
  const push = (s) => { out.push(s); size += s.length; };
  const text = (s) => s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
  const attr = (s) => s.replace(/[&"]/g, (c) => (c === '&' ? '&amp;' : '&quot;'));

  // alpha returns the alpha of a computed colour ("rgb(…)", "rgba(…)",
  // "transparent", "color(srgb … / a)"); 1 when it cannot tell.
  const alpha = (c) => {
    if (c === 'transparent') return 0;
    const m = /\/\s*([\d.]+)(%?)\s*\)$/.exec(c) || /^rgba?\([^,]+,[^,]+,[^,]+,\s*([\d.]+)(%?)\s*\)$/.exec(c);
    if (!m) return 1;
    return m[2] ? parseFloat(m[1]) / 100 : parseFloat(m[1]);
  };
  // len resolves a computed length ("12px", "50%") against full (px).
  const len = (v, full) => {
    v = v.trim();
    if (v.endsWith('%')) return (parseFloat(v) / 100) * full;
    const f = parseFloat(v);
    return Number.isFinite(f) ? f : 0;
  };
  // degenerate: a transform matrix that flattens the box to a line or a point.
  const degenerate = (t) => {
    if (t === 'none' || !t) return false;
    const m = /^matrix(3d)?\(([^)]*)\)$/.exec(t);
    if (!m) return false;
    const v = m[2].split(',').map(parseFloat);
    const det = m[1] ? v[0] * v[5] - v[1] * v[4] : v[0] * v[3] - v[1] * v[2];
    return Math.abs(det) < 1e-6;
  };
  // clipped: a clip or clip-path that leaves at most 1px of the box.
  const clipped = (cs, r) => {
    const pos = cs.position;
    if ((pos === 'absolute' || pos === 'fixed') && cs.clip && cs.clip !== 'auto') {
      const m = /^rect\(([^)]*)\)$/.exec(cs.clip);
      if (m) {
        const p = m[1].split(/,\s*|\s+/);
        if (p.length === 4) {
          const top = p[0] === 'auto' ? 0 : len(p[0], r.height);
          const right = p[1] === 'auto' ? r.width : len(p[1], r.width);
          const bottom = p[2] === 'auto' ? r.height : len(p[2], r.height);
          const left = p[3] === 'auto' ? 0 : len(p[3], r.width);
          if (right - left <= 1 || bottom - top <= 1) return true;
        }
      }
    }
    const cp = cs.clipPath;
    if (!cp || cp === 'none') return false;
    let m = /^inset\(([^)]*?)(?:\s+round\s[^)]*)?\)/.exec(cp);
    if (m) {
      const p = m[1].trim().split(/\s+/);
      const [t, rt, b, l] = [p[0], p[1] || p[0], p[2] || p[0], p[3] || p[1] || p[0]];
      return r.height - len(t, r.height) - len(b, r.height) <= 1 || r.width - len(l, r.width) - len(rt, r.width) <= 1;
    }
    m = /^(circle|ellipse)\(\s*([\d.]+)(px|%)?(?:\s+([\d.]+)(px|%)?)?/.exec(cp);
    if (m) return parseFloat(m[2]) === 0 || (m[1] === 'ellipse' && m[4] !== undefined && parseFloat(m[4]) === 0);
    m = /^polygon\((?:[a-z]+,\s*)?([^)]*)\)/.exec(cp);
    if (m) {
      const pts = m[1].split(',').map((s) => s.trim().split(/\s+/));
      let area = 0;
      for (let i = 0; i < pts.length; i++) {
        const a = pts[i], b = pts[(i + 1) % pts.length];
        if (a.length < 2 || b.length < 2) return false;
        area += len(a[0], r.width) * len(b[1], r.height) - len(b[0], r.width) * len(a[1], r.height);
      }
      return Math.abs(area) / 2 <= 1;
    }
    return false;
  };
  // ownText reports whether n has a text child that is not only white
  // space (in its open shadow root when it has one), or is a slot.
  const ownText = (n) => {
    if (n.localName === 'slot') return true;
    for (let c = (n.shadowRoot || n).firstChild; c; c = c.nextSibling) {
      if (c.nodeType === 3 && /\S/.test(c.data)) return true;
    }
    return false;
  };
  // judge returns null when the element is not seen (drop it whole), else
  // what its children inherit: {op: opacity so far, hideText: its own text
  // nodes are not seen, invisible: visibility is not visible}. Each
  // computed property costs a call into the browser: the ones that only
  // matter for text are read for elements with text of their own, the
  // overflow ones for boxes at most 1px wide or high, clip for positioned
  // boxes.
  const NONE = { op: 1, hideText: false, invisible: false };
  const judge = (el, cs, op) => {
    const display = cs.display;
    if (display === 'none' || cs.contentVisibility === 'hidden') return null;
    const o = cs.opacity;
    if (o !== '1') op *= parseFloat(o);
    if (!(op >= 0.05)) return null;
    const tf = cs.transform;
    if (tf !== 'none' && degenerate(tf)) return null;
    const tag = el.localName;
    if (display !== 'contents') {
      const r = el.getBoundingClientRect();
      const win = el.ownerDocument.defaultView;
      // Left of the page: not in a right-to-left page, which scrolls there.
      const left = !rtl && el.ownerDocument === document;
      if (r.width > 0 || r.height > 0) {
        if ((left && r.right + win.scrollX <= 0) || r.bottom + win.scrollY <= 0) return null;
      } else if ((left && r.left + win.scrollX < 0) || r.top + win.scrollY < 0) return null;
      if (tag === 'iframe' || tag === 'frame') {
        if (el.clientWidth <= 1 || el.clientHeight <= 1) return null; // inside its borders
      } else if ((r.width <= 1 || r.height <= 1) && !REPLACED.has(tag) && tag !== 'body' && display !== 'inline') {
        const clips = (v) => v === 'hidden' || v === 'clip';
        if ((r.width <= 1 && clips(cs.overflowX)) || (r.height <= 1 && clips(cs.overflowY))) return null;
      }
      if (clipped(cs, r)) return null;
    }
    const isVoid = VOID.has(tag);
    if (!isVoid && !ownText(el)) return op === 1 ? NONE : { op, hideText: false, invisible: false };
    const invisible = cs.visibility !== 'visible';
    if (isVoid) return { op, hideText: invisible, invisible };
    const hideText = invisible || parseFloat(cs.fontSize) <= 1 ||
      (alpha(cs.webkitTextFillColor || cs.color) < 0.05 && cs.backgroundClip !== 'text' && cs.webkitBackgroundClip !== 'text');
    return { op, hideText, invisible };
  };
  const rtl = getComputedStyle(document.documentElement).direction === 'rtl';

  const kids = (n, depth, st) => { for (let c = n.firstChild; c && size < MAX; c = c.nextSibling) node(c, depth, st); };
  // st: null inside <head> (not judged), else what judge returned for the
  // parent element.
  function node(n, depth, st) {
    if (depth > 512 || size >= MAX) return;
    if (n.nodeType === 3) { if (!st || !st.hideText) push(text(n.data)); return; }
    if (n.nodeType === 11) { kids(n, depth + 1, st); return; } // a shadow root
    if (n.nodeType !== 1) return;
    const tag = n.localName;
    if (tag === 'script') {
      if ((n.getAttribute('type') || '').trim().toLowerCase() === 'application/ld+json') {
        push('<script type="application/ld+json">' + n.textContent.replace(/<\/script/gi, '<\\/script') + '</script>');
      }
      return;
    }
    if (DROP.has(tag)) return;
    let cst = st;
    if (tag !== 'head' && st && tag !== 'html') {
      const cs = n.ownerDocument.defaultView.getComputedStyle(n);
      cst = judge(n, cs, st.op);
      // An invisible image or field keeps no alt text or value either.
      if (!cst || (cst.invisible && VOID.has(tag))) return;
    } else if (tag === 'head') cst = null;
    if (tag === 'slot') {
      const assigned = n.assignedNodes({ flatten: true });
      if (assigned.length) { for (const a of assigned) node(a, depth + 1, cst); } else kids(n, depth + 1, cst);
      return;
    }
    if (tag === 'iframe' || tag === 'frame') {
      let doc = null;
      try { doc = n.contentDocument; } catch (e) { doc = null; }
      if (doc && doc.body) { push('<div data-gatehouse-frame="">'); kids(doc.body, depth + 1, { op: cst ? cst.op : 1, hideText: false }); push('</div>'); }
      return;
    }
    let open = '<' + tag;
    for (const a of n.attributes) {
      if (/^[^\s"'>\/=]+$/.test(a.name)) open += ' ' + a.name + '="' + attr(a.value) + '"';
    }
    push(open + '>');
    if (VOID.has(tag)) return;
    if (n.shadowRoot) kids(n.shadowRoot, depth + 1, cst); // open roots only: closed ones are not reachable
    else kids(n, depth + 1, cst);
    push('</' + tag + '>');
  }
  push('<!doctype html>');
  node(document.documentElement, 0, { op: 1, hideText: false });
  const html = out.join('');
  const t = performance.getEntriesByType('navigation')[0] || {};
  const timing = { request: t.requestStart || 0, response: t.responseStart || 0, responseEnd: t.responseEnd || 0, interactive: t.domInteractive || 0, loaded: t.domContentLoadedEventEnd || 0 };
  return { html, url: location.href, timing };
}
