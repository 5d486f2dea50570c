// visibility.js is Gatehouse's one judgement of what a sighted reader of a
// page would not see, on the computed style and layout (hidden text is how
// instructions are slipped to agents). visibility.go splices it into both
// in-page scripts, render.js (web_extract's render step) and page.js (the
// browser tools' snapshot), as the object `visibility`, so the two cannot
// drift apart:
//
//   visibility.root              the state of the top of a walk
//   visibility.judge(el, cs, st) → null when el is not seen (leave it out
//                                with everything in it), else the state its
//                                children inherit: {op, zoom, hideText,
//                                invisible}
//
// el is judged given cs = its computed style and st = the state its parent
// element returned. Not seen, with everything in it: display none,
// content-visibility hidden, an opacity (its own times its ancestors',
// filter: opacity() included) under 0.05, a degenerate transform (scale 0),
// a box lying entirely left of or above the page (left: -9999px; left is
// not judged in a right-to-left page, which scrolls there), a box pushed
// entirely right of the viewport by a negative right offset or by its own
// transform, a box at most 1px wide or high that clips its overflow (the
// sr-only pattern, height: 0 or max-height: 0 with overflow hidden), a
// clip or clip-path leaving at most 1px, an iframe at most 1px wide or high,
// an image drawn at most 1px wide or high (its alt text shows nowhere; see
// judge for the refused images of the render context).
// The text directly in an element (hideText; its child elements are judged
// on their own and may be visible again) is not seen with visibility hidden
// or collapse, a computed font size of at most 2px after zoom (relative
// sizes, 0.1em or 5%, are computed down the cascade by the browser), a
// fully transparent text colour (color or -webkit-text-fill-color, unless
// clipped to a background: gradient text), a text colour nearly its
// background's (WCAG contrast ratio under 1.1, #fefefe on #fff: the
// background is the element's own and its ancestors' background colours
// composited, alpha included, over the white canvas; a background image
// on the way decides nothing), or when the text's own layout boxes lie
// entirely off the page (text-indent: -9999px, margin-left: -9999px) or
// outside the element's box that clips them, or SVG text that paints
// nothing (fill none or transparent and no stroke). Nothing drawn in an
// <svg> at most 1px wide or high that clips its overflow (width="0") is
// seen either. invisible: the element's own
// visibility is not visible (it takes no clicks; an image or field with it
// shows nothing).
//
// Boxes in same-origin frames are judged in their frame.
function () {
  // Replaced and form elements: their boxes clip by nature, and an image
  // refused by the render context is 0×0 yet keeps its alt text.
  const REPLACED = new Set(['img', 'picture', 'video', 'audio', 'canvas', 'svg', 'embed', 'object', 'input', 'select', 'textarea', 'button', 'progress', 'meter']);
  // SVG text paints its glyphs with fill and stroke, not color.
  const SVGNS = 'http://www.w3.org/2000/svg';
  const SVG_TEXT = new Set(['text', 'tspan', 'textPath']);
  const unpainted = (cs) => {
    const paints = (p, o) => p && p !== 'none' && alpha(p) >= 0.05 && !(parseFloat(o) < 0.05);
    return !paints(cs.fill, cs.fillOpacity) && !(paints(cs.stroke, cs.strokeOpacity) && parseFloat(cs.strokeWidth) > 0);
  };
  const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);

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
  // matrix returns the numbers of a computed transform ("matrix(…)",
  // "matrix3d(…)") as {det, tx}, or null for none.
  const matrix = (t) => {
    if (t === 'none' || !t) return null;
    const m = /^matrix(3d)?\(([^)]*)\)$/.exec(t);
    if (!m) return null;
    const v = m[2].split(',').map(parseFloat);
    return m[1] ? { det: v[0] * v[5] - v[1] * v[4], tx: v[12] } : { det: v[0] * v[3] - v[1] * v[2], tx: v[4] };
  };
  // filterOpacity returns the product of the opacity() functions of a
  // computed filter ("opacity(0) blur(2px)"), 1 for none.
  const filterOpacity = (f) => {
    if (!f || f === 'none') return 1;
    let o = 1;
    for (const m of f.matchAll(/opacity\(\s*([\d.]+)(%?)\s*\)/g)) o *= m[2] ? parseFloat(m[1]) / 100 : parseFloat(m[1]);
    return o;
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
  // rtl reports whether doc is laid out right to left (cached per document).
  const dirs = new WeakMap();
  const rtl = (doc) => {
    let d = dirs.get(doc);
    if (d === undefined) {
      d = doc.documentElement ? getComputedStyle(doc.documentElement).direction === 'rtl' : false;
      dirs.set(doc, d);
    }
    return d;
  };
  const clips = (v) => v === 'hidden' || v === 'clip';
  // textAway reports whether the layout boxes of el's content lie entirely
  // off the page (left of or above it; left not in a right-to-left page),
  // or entirely outside el's own box r when el clips its overflow.
  const textAway = (el, cs, r, win, left) => {
    const doc = el.ownerDocument;
    const range = doc.createRange();
    range.selectNodeContents(el.shadowRoot || el);
    const t = range.getBoundingClientRect();
    if (t.width === 0 && t.height === 0) return false;
    if ((left && t.right + win.scrollX <= 0) || t.bottom + win.scrollY <= 0) return true;
    const cx = clips(cs.overflowX), cy = clips(cs.overflowY);
    return (cx && (t.right <= r.left || t.left >= r.right)) || (cy && (t.bottom <= r.top || t.top >= r.bottom));
  };

  // rgb reads a computed colour ("rgb(r, g, b)", "rgba(r, g, b, a)",
  // "transparent") as [r, g, b, a] with channels 0–255, or null for a
  // form it does not read (color(), lab(), …).
  const rgb = (c) => {
    if (c === 'transparent') return [0, 0, 0, 0];
    const m = /^rgba?\(\s*([\d.]+)[,\s]+([\d.]+)[,\s]+([\d.]+)(?:\s*[,/]\s*([\d.]+)(%?))?\s*\)$/.exec(c);
    if (!m) return null;
    let a = m[4] === undefined ? 1 : parseFloat(m[4]);
    if (m[5]) a /= 100;
    return [parseFloat(m[1]), parseFloat(m[2]), parseFloat(m[3]), a];
  };
  // over composites colour c over the opaque colour below.
  const over = (c, below) => [0, 1, 2].map((i) => c[i] * c[3] + below[i] * (1 - c[3])).concat(1);
  // contrast is the WCAG 2.2 contrast ratio of two opaque colours.
  const lum = (c) => {
    const l = (v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * l(c[0]) + 0.7152 * l(c[1]) + 0.0722 * l(c[2]);
  };
  const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
  // backdrop returns the opaque colour behind el's text: its own
  // background colour composited over its ancestors' (the canvas is
  // white), or null when a background image or a colour it cannot read
  // is on the way. Memoised per element.
  const backdrops = new WeakMap();
  const backdrop = (el) => {
    if (!el || el.nodeType !== 1) return [255, 255, 255, 1];
    if (backdrops.has(el)) return backdrops.get(el);
    const cs = el.ownerDocument.defaultView.getComputedStyle(el);
    let b = null;
    const own = rgb(cs.backgroundColor);
    if (own && cs.backgroundImage === 'none') {
      if (own[3] >= 1) b = own;
      else {
        const below = backdrop(el.parentElement);
        b = below && over(own, below);
      }
    }
    backdrops.set(el, b);
    return b;
  };
  // MIN_CONTRAST: text whose contrast ratio with what is behind it is
  // under this is the colour of its background (#fefefe on #fff is 1.01).
  const MIN_CONTRAST = 1.1;
  // faintText reports whether el's text colour (cs) is nearly its
  // background's.
  const faintText = (el, cs) => {
    const fg = rgb(cs.webkitTextFillColor || cs.color);
    if (!fg || fg[3] === 0) return false;
    const bg = backdrop(el);
    return !!bg && contrast(over(fg, bg), bg) < MIN_CONTRAST;
  };
  // MAX_FONT: text drawn at a computed font size (times zoom) of at most
  // this many px is not seen.
  const MAX_FONT = 2;
  // Chromium draws text sized relative to the default (em, %, smaller,
  // keywords) at no less than its minimum logical font size, 6px, so
  // font-size: 0.1em computes to 6px where the page asked for 1.6px.
  // Text computed at SMART_MIN or under is judged by the size the page
  // asked for (specifiedPx).
  const SMART_MIN = 6;
  // rulesOf lists the style rules of doc's style sheets that apply now
  // (same-origin sheets; @media rules whose query matches), in order.
  const ruleLists = new WeakMap();
  const rulesOf = (doc) => {
    let out = ruleLists.get(doc);
    if (out) return out;
    out = [];
    const add = (rules, depth) => {
      if (depth > 8) return;
      for (const r of rules) {
        if (r.selectorText !== undefined && r.style) out.push(r);
        else if (r.cssRules && (!r.media || doc.defaultView.matchMedia(r.media.mediaText).matches)) add(r.cssRules, depth + 1);
      }
    };
    for (const sh of doc.styleSheets) {
      try { add(sh.cssRules, 0); } catch (e) { /* a cross-origin sheet */ }
    }
    ruleLists.set(doc, out);
    return out;
  };
  // declared returns el's own declaration of the property prop (a
  // CSSStyleDeclaration name: fontSize, width): its inline style's, else
  // the last matching rule's (specificity aside), or ''.
  // (At most MAX_RULES rules setting prop are matched, so that a huge
  // style sheet costs a bounded time per element asked about.)
  const MAX_RULES = 2000;
  const byProp = new WeakMap();
  const declared = (el, prop) => {
    if (el.style && el.style[prop]) return el.style[prop];
    const doc = el.ownerDocument;
    let lists = byProp.get(doc);
    if (!lists) { lists = {}; byProp.set(doc, lists); }
    if (!lists[prop]) lists[prop] = rulesOf(doc).filter((r) => r.style[prop]).slice(-MAX_RULES);
    let v = '';
    for (const r of lists[prop]) {
      try { if (el.matches(r.selectorText)) v = r.style[prop]; } catch (e) { /* a selector matches() rejects */ }
    }
    return v;
  };
  const declaredFont = (el) => declared(el, 'fontSize');
  // tinyImage reports whether img's own size (CSS width, height or their
  // maxima, else its width or height attribute) is at most 1px.
  const tinyImage = (img) => {
    const tiny = (v) => /^\s*(0|0?\.\d+|1(\.0*)?)\s*(px)?\s*$/.test(v) || /^\s*0+(\.0*)?[a-z%]+\s*$/.test(v);
    for (const [p, a] of [['width', 'width'], ['height', 'height']]) {
      const m = declared(img, p === 'width' ? 'maxWidth' : 'maxHeight');
      if (m && tiny(m)) return true;
      const v = declared(img, p);
      if (v) { if (tiny(v)) return true; continue; }
      if (img.hasAttribute(a) && tiny(img.getAttribute(a))) return true;
    }
    return false;
  };
  const KEYWORDS = { 'xx-small': 9, 'x-small': 10, small: 13, medium: 16, large: 18, 'x-large': 24, 'xx-large': 32, 'xxx-large': 48 };
  // specifiedPx returns the font size el's declarations ask for, in px,
  // computed down its ancestors from the initial 16px without Chromium's
  // minimum (an undeclared size is inherited; one it cannot read is the
  // computed one). Memoised per element.
  const specified = new WeakMap();
  const specifiedPx = (el) => {
    if (!el || el.nodeType !== 1) return 16;
    if (specified.has(el)) return specified.get(el);
    const parent = specifiedPx(el.parentElement);
    const v = declaredFont(el).trim().toLowerCase();
    let px;
    const m = /^([\d.]+)(px|em|%|rem|pt)$/.exec(v);
    if (!v || v === 'inherit' || v === 'unset') px = parent;
    else if (v in KEYWORDS) px = KEYWORDS[v];
    else if (v === 'smaller') px = parent / 1.2;
    else if (v === 'larger') px = parent * 1.2;
    else if (m) {
      const f = parseFloat(m[1]);
      px = m[2] === 'px' ? f : m[2] === 'pt' ? f * 4 / 3 : m[2] === 'em' ? f * parent : m[2] === '%' ? f * parent / 100 : f * specifiedPx(el.ownerDocument.documentElement);
    } else px = parseFloat(el.ownerDocument.defaultView.getComputedStyle(el).fontSize);
    specified.set(el, px);
    return px;
  };
  // tinyFont reports whether el's text is drawn, or asked to be drawn, at
  // MAX_FONT or under (zoom applied).
  const tinyFont = (el, cs, zoom) => {
    const px = parseFloat(cs.fontSize) * zoom;
    if (px <= MAX_FONT) return true;
    return px <= SMART_MIN * zoom + 0.01 && specifiedPx(el) * zoom <= MAX_FONT;
  };

  const root = { op: 1, zoom: 1, hideText: false, invisible: false };
  // judge: each computed property costs a call into the browser, so the
  // ones that only matter for text are read for elements with text of their
  // own, the overflow ones for boxes at most 1px wide or high, clip for
  // positioned boxes.
  const judge = (el, cs, st) => {
    let op = st.op, zoom = st.zoom;
    const display = cs.display;
    if (display === 'none' || cs.contentVisibility === 'hidden') return null;
    const o = cs.opacity;
    if (o !== '1') op *= parseFloat(o);
    const f = cs.filter;
    if (f !== 'none') op *= filterOpacity(f);
    if (!(op >= 0.05)) return null;
    const z = cs.zoom;
    if (z && z !== '1' && z !== 'normal') zoom *= parseFloat(z) || 1;
    const mx = matrix(cs.transform);
    if (mx && Math.abs(mx.det) < 1e-6) return null;
    const tag = el.localName;
    let r = null, win = null, left = false;
    if (display !== 'contents') {
      r = el.getBoundingClientRect();
      const doc = el.ownerDocument;
      win = doc.defaultView;
      left = !rtl(doc);
      if (r.width > 0 || r.height > 0) {
        if ((left && r.right + win.scrollX <= 0) || r.bottom + win.scrollY <= 0) return null;
        // Pushed off the right edge: by a negative right offset, or by the
        // element's own transform (without it, the box would be in view).
        const vw = doc.documentElement.clientWidth || win.innerWidth;
        if (left && r.left >= vw) {
          const pos = cs.position;
          if (((pos === 'absolute' || pos === 'fixed') && parseFloat(cs.right) < 0) || (mx && mx.tx > 0 && r.left - mx.tx < vw)) return null;
        }
      } else if ((left && r.left + win.scrollX < 0) || r.top + win.scrollY < 0) return null;
      if (tag === 'iframe' || tag === 'frame') {
        if (el.clientWidth <= 1 || el.clientHeight <= 1) return null; // inside its borders
      } else if ((r.width <= 1 || r.height <= 1) && !REPLACED.has(tag) && tag !== 'body' && display !== 'inline') {
        if ((r.width <= 1 && clips(cs.overflowX)) || (r.height <= 1 && clips(cs.overflowY))) return null;
      }
      // An <svg> viewport at most 1px wide or high that clips its overflow
      // (the UA sheet's svg:not(:root) { overflow: hidden }): nothing drawn
      // in it is seen. (An <svg> is replaced and inline, so the rule above
      // passes it by.)
      if (tag === 'svg' && (r.width <= 1 || r.height <= 1) && (clips(cs.overflowX) || clips(cs.overflowY))) return null;
      if (clipped(cs, r)) return null;
    }
    // An image drawn at most 1px wide or high is not seen, nor its alt
    // text (only images with alt text are judged: the others show
    // nothing either way): a loaded image by its box, one that shows its alt text
    // instead (refused by the render context, or failed to load: the
    // text then overflows the box) by the size its attributes or CSS
    // give it (tinyImage).
    if (tag === 'img' && /\S/.test(el.getAttribute('alt') || '') &&
      ((el.complete && el.naturalWidth > 0) ? r && (r.width <= 1 || r.height <= 1) : tinyImage(el))) return null;
    const isVoid = VOID.has(tag);
    if (!isVoid && !ownText(el)) return op === 1 && zoom === 1 ? root : { op, zoom, hideText: false, invisible: false };
    const invisible = cs.visibility !== 'visible';
    if (isVoid) return { op, zoom, hideText: invisible, invisible };
    const clipText = cs.backgroundClip === 'text' || cs.webkitBackgroundClip === 'text';
    let hideText = invisible || tinyFont(el, cs, zoom) ||
      (alpha(cs.webkitTextFillColor || cs.color) < 0.05 && !clipText) ||
      (SVG_TEXT.has(tag) && el.namespaceURI === SVGNS && unpainted(cs)) ||
      (!clipText && !SVG_TEXT.has(tag) && faintText(el, cs));
    if (!hideText && r) {
      // Only where the text can lie away from the page or its box: the box
      // reaches off the page, a negative text-indent reaches past its left,
      // or the box clips content that overflows it.
      const ti = cs.textIndent === '0px' ? 0 : parseFloat(cs.textIndent) || 0;
      const x = r.left + win.scrollX, y = r.top + win.scrollY;
      if (x < 0 || y < 0 || (ti < 0 && x + ti < 0) ||
        ((clips(cs.overflowX) || clips(cs.overflowY)) && (el.scrollWidth > el.clientWidth + 1 || el.scrollHeight > el.clientHeight + 1))) {
        hideText = textAway(el, cs, r, win, left);
      }
    }
    return { op, zoom, hideText, invisible };
  };
  return { root, judge };
}
