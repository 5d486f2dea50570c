// render.js serialises the rendered DOM for web_extract's render step
// (render.go). It runs in Gatehouse's isolated world, which shares the DOM
// with the page. Open shadow roots are flattened into their hosts (a <slot>
// shows its assigned nodes, else its fallback content); same-origin iframes
// are inlined where they stand (contentDocument is null for other origins);
// scripts other than JSON-LD, styles, <noscript> and <template> are dropped.
//
// What a sighted reader of the page would not see is dropped too: each
// element of the body is judged by visibility.judge (visibility.js, shared
// with the browser tools' snapshot); an element it leaves out is left out
// with everything in it, the text directly in an element whose text is
// hidden is left out (its child elements are judged on their own), and an
// image or field with visibility hidden is left out (no alt text or value).
// <head> is metadata and kept.
// Output stops growing at MAX characters.
function () {
  const MAX = 10 * 1024 * 1024;
  const VOID = new Set(['area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr']);
  const DROP = new Set(['script', 'style', 'noscript', 'template']);
  const out = [];
  let size = 0;
  const push = (s) => { out.push(s); size += s.length; };
  const text = (s) => s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
  const attr = (s) => s.replace(/[&"]/g, (c) => (c === '&' ? '&amp;' : '&quot;'));

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
      cst = visibility.judge(n, cs, st);
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
      if (doc && doc.body) { push('<div data-gatehouse-frame="">'); kids(doc.body, depth + 1, cst ? { ...visibility.root, op: cst.op, zoom: cst.zoom } : visibility.root); push('</div>'); }
      return;
    }
    let open = '<' + tag;
    for (const a of n.attributes) {
      // An element judged shown whose hidden attribute the page's CSS
      // overrides ([hidden]{display:block}) loses the attribute, which
      // the content pipeline would otherwise drop it for (the page's
      // styles are not serialised); hidden="until-found" keeps it.
      if (a.name === 'hidden' && cst && a.value.trim().toLowerCase() !== 'until-found') continue;
      if (/^[^\s"'>\/=]+$/.test(a.name)) open += ' ' + a.name + '="' + attr(a.value) + '"';
    }
    push(open + '>');
    if (VOID.has(tag)) return;
    if (n.shadowRoot) kids(n.shadowRoot, depth + 1, cst); // open roots only: closed ones are not reachable
    else kids(n, depth + 1, cst);
    push('</' + tag + '>');
  }
  push('<!doctype html>');
  node(document.documentElement, 0, visibility.root);
  const html = out.join('');
  const t = performance.getEntriesByType('navigation')[0] || {};
  const timing = { request: t.requestStart || 0, response: t.responseStart || 0, responseEnd: t.responseEnd || 0, interactive: t.domInteractive || 0, loaded: t.domContentLoadedEventEnd || 0 };
  return { html, url: location.href, timing };
}
