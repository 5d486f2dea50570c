// Gatehouse's in-page script. It runs in an isolated JavaScript world (shared
// DOM, private globals), called as fn(op, arg). State lives in
// globalThis.__gh, one per document: the ref registry (element → ref and
// ref → WeakRef(element)) and the time of the last DOM mutation.
//
// Ref contract: a ref names one element of one document; the same element keeps
// its ref across snapshots of that document; numbering continues from the
// tab-wide counter the caller passes (arg.base), so a ref of an earlier document
// is unknown here and resolves to nothing (stale_ref), never to another element.
function (op, arg) {
  arg = arg || {};
  let G = globalThis.__gh;
  if (!G) {
    G = globalThis.__gh = {
      prefix: typeof arg.prefix === 'string' ? arg.prefix : 'e',
      next: Math.max(1, arg.base | 0),
      byEl: new WeakMap(),
      byRef: new Map(),
      lastMut: performance.now(),
    };
    try {
      new MutationObserver(() => { G.lastMut = performance.now(); })
        .observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
    } catch (e) {}
  }
  const refOf = (el) => {
    let r = G.byEl.get(el);
    if (!r) {
      r = G.prefix + (G.next++);
      G.byEl.set(el, r);
      G.byRef.set(r, new WeakRef(el));
    }
    return r;
  };
  // An element is live when it is connected and every document on its way up
  // to the top is still the current document of its frame element.
  const live = (el) => {
    if (!el || !el.isConnected) return false;
    let d = el.ownerDocument;
    while (d && d !== document) {
      const w = d.defaultView;
      const fe = w && w.frameElement;
      if (!fe || !fe.isConnected || fe.contentDocument !== d) return false;
      d = fe.ownerDocument;
    }
    return d === document;
  };
  const resolve = (ref) => {
    const w = G.byRef.get(ref);
    const el = w && w.deref();
    if (!el || !live(el)) {
      if (w) G.byRef.delete(ref);
      return null;
    }
    return el;
  };

  const IMPLICIT = {
    A: (e) => e.hasAttribute('href') ? 'link' : '',
    AREA: (e) => e.hasAttribute('href') ? 'link' : '',
    BUTTON: () => 'button', SUMMARY: () => 'button',
    TEXTAREA: () => 'textbox',
    SELECT: (e) => (e.multiple || e.size > 1) ? 'listbox' : 'combobox',
    OPTION: () => 'option',
    H1: () => 'heading', H2: () => 'heading', H3: () => 'heading', H4: () => 'heading', H5: () => 'heading', H6: () => 'heading',
    IMG: (e) => e.getAttribute('alt') === '' ? '' : 'img',
    NAV: () => 'navigation', MAIN: () => 'main', ASIDE: () => 'complementary', SEARCH: () => 'search',
    HEADER: (e) => e.closest('article,aside,main,nav,section') ? '' : 'banner',
    FOOTER: (e) => e.closest('article,aside,main,nav,section') ? '' : 'contentinfo',
    FORM: () => 'form', SECTION: (e) => (e.hasAttribute('aria-label') || e.hasAttribute('aria-labelledby')) ? 'region' : '',
    DIALOG: () => 'dialog', UL: () => 'list', OL: () => 'list', MENU: () => 'list', LI: () => 'listitem',
    TABLE: () => 'table', TR: () => 'row', TD: () => 'cell', TH: () => 'columnheader',
    P: () => 'paragraph', BLOCKQUOTE: () => 'blockquote', PRE: () => 'code', HR: () => 'separator',
    IFRAME: () => 'iframe', FRAME: () => 'iframe', LABEL: () => '', FIELDSET: () => 'group', LEGEND: () => '',
    DETAILS: () => 'group', PROGRESS: () => 'progressbar', METER: () => 'meter', OUTPUT: () => 'status',
    INPUT: (e) => {
      const t = (e.getAttribute('type') || 'text').toLowerCase();
      switch (t) {
        case 'hidden': return '';
        case 'checkbox': return 'checkbox';
        case 'radio': return 'radio';
        case 'button': case 'submit': case 'reset': case 'image': return 'button';
        case 'range': return 'slider';
        case 'number': return 'spinbutton';
        case 'search': return 'searchbox';
        case 'file': return 'button';
        default: return 'textbox';
      }
    },
  };
  const INTERACTIVE = new Set(['button', 'link', 'textbox', 'searchbox', 'checkbox', 'radio', 'combobox', 'listbox',
    'option', 'menuitem', 'menuitemcheckbox', 'menuitemradio', 'tab', 'switch', 'slider', 'spinbutton', 'treeitem']);
  const LANDMARK = new Set(['banner', 'navigation', 'main', 'contentinfo', 'complementary', 'search', 'form', 'region',
    'dialog', 'alertdialog', 'iframe']);
  const STRUCTURE = new Set(['list', 'listitem', 'table', 'row', 'cell', 'columnheader', 'rowheader', 'paragraph',
    'blockquote', 'code', 'group', 'separator', 'progressbar', 'meter', 'status', 'alert']);

  const ROLEWORD = new Set([...INTERACTIVE, ...LANDMARK, ...STRUCTURE, 'heading', 'img', 'generic', 'text', 'iframe',
    'article', 'note', 'tooltip', 'tablist', 'tabpanel', 'menu', 'menubar', 'toolbar', 'tree', 'grid', 'gridcell',
    'radiogroup', 'log', 'marquee', 'timer', 'figure', 'definition', 'term', 'math', 'application', 'document', 'feed']);
  const roleOf = (el) => {
    const ex = (el.getAttribute('role') || '').trim().split(/\s+/)[0].toLowerCase();
    if (ex && ex !== 'none' && ex !== 'presentation') return ex;
    if (ex === 'none' || ex === 'presentation') return '';
    const f = IMPLICIT[el.tagName];
    if (f) return f(el);
    if (el.isContentEditable && (!el.parentElement || !el.parentElement.isContentEditable)) return 'textbox';
    return '';
  };
  const squash = (s) => (s || '').replace(/\s+/g, ' ').trim();
  // cap cuts s to n UTF-16 units, '…' last, never between the halves of a
  // surrogate pair.
  const cap = (s, n) => {
    if (s.length <= n) return s;
    let k = n - 1;
    const c = s.charCodeAt(k - 1);
    if (c >= 0xd800 && c <= 0xdbff) k--;
    return s.slice(0, k) + '…';
  };
  // jsonQuote writes s as a JSON string literal, each lone UTF-16 surrogate of
  // the page's text as U+FFFD: JSON.stringify writes one as a "\ud83d"
  // escape, six characters the agent would read as text.
  const LONE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
  const jsonQuote = (s) => JSON.stringify(s.toWellFormed ? s.toWellFormed() : s.replace(LONE, '\ufffd'));
  // seen returns visibility.judge's state for el judged alone (its
  // ancestors' opacity not counted), or null when it is not seen.
  const seen = (el) => visibility.judge(el, el.ownerDocument.defaultView.getComputedStyle(el), visibility.root);
  // boxOf is how an element's text meets its neighbours' on screen: 'inline'
  // (glued: "<b>H</b>ello"), 'gap' (a box on the same line, a space: table
  // cells, inline-blocks) or 'block' (a line of its own), from its computed
  // display; <br> is a line break.
  const INLINE_TAGS = /^(A|ABBR|B|BDI|BDO|CITE|CODE|DATA|DFN|EM|I|KBD|MARK|Q|S|SAMP|SMALL|SPAN|STRONG|SUB|SUP|TIME|U|VAR|WBR|DEL|INS|FONT|TT|STRIKE|LABEL)$/;
  const boxOf = (el) => {
    if (el.tagName === 'BR') return 'block';
    let d = '';
    try { d = getComputedStyle(el).display; } catch (e) {}
    if (!d) return INLINE_TAGS.test(el.tagName) ? 'inline' : 'block';
    if (d === 'inline' || d === 'contents' || d === 'none' || d.startsWith('ruby')) return 'inline';
    if (d.startsWith('inline') || d === 'table-cell' || d === 'table-caption') return 'gap';
    return 'block';
  };
  // closedDetails: the text directly in a closed <details> (outside its
  // <summary>) is in the skipped content slot, as its elements are
  // (boxed); a text node has no checkVisibility of its own.
  const closedDetails = (node) => node.tagName === 'DETAILS' && !node.open;
  // textOf returns the text of el's content a sighted reader sees: vs is
  // el's visibility state (visibility.judge; judged alone when omitted),
  // descendants are judged on their own.
  // The text is cut once it passes TEXT_MAX chars (a name is capped far
  // below that) or the snapshot's time is up (late): a control wrapping a
  // huge subtree costs no more than its name needs.
  const TEXT_MAX = 4000;
  const textOf = (el, depth, vs) => {
    if (depth > 20) return '';
    if (vs === undefined) vs = seen(el);
    if (!vs) return '';
    let s = '';
    for (const n of el.childNodes) {
      if (s.length > TEXT_MAX || late()) break;
      if (n.nodeType === 3) { if (!vs.hideText && !closedDetails(el)) s += n.data; }
      else if (n.nodeType === 1) {
        if (n.getAttribute('aria-hidden') === 'true' || n.tagName === 'SCRIPT' || n.tagName === 'STYLE') continue;
        const c = visibility.judge(n, n.ownerDocument.defaultView.getComputedStyle(n), vs);
        if (!c) continue;
        if (n.tagName === 'IMG') { if (!c.invisible) s += ' ' + (n.getAttribute('alt') || '') + ' '; }
        else {
          const sep = boxOf(n) === 'inline' ? '' : ' ';
          s += sep + textOf(n, depth + 1, c) + sep;
        }
      }
    }
    return s;
  };
  const byIds = (el, attr) => {
    const ids = (el.getAttribute(attr) || '').trim();
    if (!ids) return '';
    const root = el.getRootNode();
    return squash(ids.split(/\s+/).map((id) => {
      const t = root.getElementById ? root.getElementById(id) : el.ownerDocument.getElementById(id);
      return t ? textOf(t, 0, visibility.root) : ''; // named, as in the accessibility tree, even when hidden
    }).join(' '));
  };
  // nameOf: vs is el's visibility state (textOf).
  const nameOf = (el, role, vs) => {
    let n = byIds(el, 'aria-labelledby') || squash(el.getAttribute('aria-label'));
    if (n) return n;
    const tag = el.tagName;
    if (tag === 'INPUT' || tag === 'TEXTAREA' || tag === 'SELECT') {
      const t = (el.getAttribute('type') || '').toLowerCase();
      if (t === 'submit' || t === 'button' || t === 'reset') return squash(el.value) || (t === 'submit' ? 'Submit' : t === 'reset' ? 'Reset' : '');
      if (t === 'image') return squash(el.getAttribute('alt')) || 'Submit';
      if (el.labels && el.labels.length) return squash([...el.labels].map((l) => textOf(l, 0)).join(' '));
      return squash(el.getAttribute('placeholder')) || squash(el.getAttribute('title'));
    }
    if (tag === 'IMG' || tag === 'AREA') return squash(el.getAttribute('alt')) || squash(el.getAttribute('title'));
    if (tag === 'IFRAME') return squash(el.getAttribute('title')) || squash(el.getAttribute('name'));
    if (tag === 'FIELDSET') { const lg = el.querySelector('legend'); return lg ? squash(textOf(lg, 0)) : ''; }
    if (tag === 'TABLE') { const c = el.querySelector('caption'); return c ? squash(textOf(c, 0)) : ''; }
    if (INTERACTIVE.has(role) || role === 'heading' || role === 'cell' || role === 'columnheader') {
      return squash(textOf(el, 0, vs)) || squash(el.getAttribute('title'));
    }
    return squash(el.getAttribute('title'));
  };
  // boxed: el is rendered at all (not aria-hidden, has a box and is not in
  // a skipped subtree such as a closed <details>); whether a sighted reader
  // sees it is then visibility.judge's. The hidden attribute is judged by
  // the computed style, as it hides only through the UA sheet's
  // [hidden]{display:none}, which any author display rule beats (CSS
  // Cascade 4 §6.1): a page that shows it shows it. hidden="until-found"
  // (content-visibility hidden, shown only by find-in-page) stays hidden.
  const boxed = (el) => {
    if (el.getAttribute('aria-hidden') === 'true') return false;
    if (el.hidden === 'until-found' || (el.getAttribute('hidden') || '').trim().toLowerCase() === 'until-found') return false;
    if (el.checkVisibility) {
      if (el.checkVisibility()) return true;
      // display: contents has no box but its children do.
      return el.ownerDocument.defaultView.getComputedStyle(el).display === 'contents';
    }
    const r = el.getClientRects();
    return r.length > 0;
  };
  // A native form control that is not seen (an opacity-0 file input over a
  // styled button, an sr-only checkbox beside its drawn box) still works
  // and is often the only handle on a styled control: it is listed, marked
  // [visually hidden], without its value.
  const CONTROL = new Set(['INPUT', 'SELECT', 'TEXTAREA']);
  const hiddenControl = (el) => CONTROL.has(el.tagName) && (el.getAttribute('type') || '').toLowerCase() !== 'hidden' &&
    el.ownerDocument.defaultView.getComputedStyle(el).visibility === 'visible';
  const BLOCK = /^(DIV|P|LI|BR|TR|H[1-6]|SECTION|ARTICLE|UL|OL|TABLE|BLOCKQUOTE|PRE|DT|DD|svg|math)$/;
  const focusable = (el) => {
    if (el.hasAttribute('tabindex') && el.tabIndex >= 0) return true;
    if (el.hasAttribute('onclick')) return true;
    return false;
  };

  // The snapshot's budget (snapshot(full, budget)): the walk stops when it
  // has examined budget.nodes elements, spent budget.ms milliseconds of
  // wall time or written budget.chars chars of lines, whichever comes
  // first; what it listed so far is returned with walk.stopped naming the
  // budget ('nodes', 'time', 'size'). A ref is only given to an element
  // listed, so every ref shown names its element (the ref contract). B is
  // null outside a snapshot (no budget).
  let B = null;
  const spent = () => {
    if (!B) return false;
    if (B.stopped) return true;
    if (performance.now() > B.end) B.stopped = 'time';
    else if (B.walked >= B.nodes) B.stopped = 'nodes';
    else if (B.chars > B.maxChars) B.stopped = 'size';
    return !!B.stopped;
  };
  // late reports whether the snapshot's time budget is spent.
  const late = () => {
    if (!B) return false;
    if (!B.stopped && performance.now() > B.end) B.stopped = 'time';
    return B.stopped === 'time';
  };
  // above: in a page of more elements than the node budget (B.windowed), a
  // box lying entirely above the viewport of the top document was scrolled
  // past; it is left out with everything in it, so a snapshot taken after
  // scrolling lists the part of a huge page in view and below it.
  const above = (el) => {
    if (!B || !B.windowed || el.ownerDocument !== document) return false;
    const r = el.getBoundingClientRect();
    return r.height > 0 && r.bottom < 0;
  };

  const snapshot = (full, budget) => {
    const lines = [];
    let refs = 0;
    budget = budget || {};
    const num = (v, d) => (typeof v === 'number' && v > 0 ? v : d);
    B = {
      end: performance.now() + num(budget.ms, 5000), nodes: num(budget.nodes, 30000), maxChars: num(budget.chars, 2000000),
      walked: 0, chars: 0, above: 0, stopped: '', windowed: false, total: 0,
    };
    B.total = document.getElementsByTagName('*').length;
    B.windowed = B.total > B.nodes && scrollY > 0;
    const emit = (depth, s) => { lines.push('  '.repeat(depth) + s); B.chars += s.length + depth * 2 + 1; };
    const q = jsonQuote;
    const childrenOf = (node) => {
      if (node.shadowRoot) return node.shadowRoot.childNodes;
      if (node.tagName === 'SLOT') {
        const a = node.assignedNodes({ flatten: true });
        return a.length ? a : node.childNodes;
      }
      return node.childNodes;
    };
    // text accumulates loose text per output parent until the next element line.
    // walk lists node's children; vs is node's visibility state
    // (visibility.judge): elements a sighted reader does not see are left
    // out with everything in them (their native controls excepted:
    // hiddenControl), text whose element hides it is left out.
    const walk = (node, depth, st, vs) => {
      for (const n of childrenOf(node)) {
        if (spent()) return;
        if (n.nodeType === 3) {
          if (!vs.hideText && !closedDetails(node)) st.text += n.data;
          continue;
        }
        if (n.nodeType !== 1) continue;
        const el = n;
        const tag = el.tagName;
        if (tag === 'SCRIPT' || tag === 'STYLE' || tag === 'NOSCRIPT' || tag === 'TEMPLATE' || tag === 'HEAD') continue;
        if (!boxed(el)) continue;
        if (above(el)) { B.above++; continue; }
        B.walked++;
        const cs = el.ownerDocument.defaultView.getComputedStyle(el);
        const block = BLOCK.test(tag) || !/^(inline|contents|ruby)/.test(cs.display);
        const cvs = visibility.judge(el, cs, vs);
        if (!cvs) {
          const ctl = CONTROL.has(tag) ? [el] : (el.querySelectorAll ? el.querySelectorAll('input,select,textarea') : []);
          for (const c of ctl) {
            if (spent()) break;
            B.walked++;
            if (!hiddenControl(c) || !boxed(c)) continue;
            flush(st, depth);
            elementLine(c, c.tagName, roleOf(c), depth, visibility.root, true);
          }
          if (block) flush(st, depth);
          continue;
        }
        const role = roleOf(el);
        const interactive = INTERACTIVE.has(role) || (!role && focusable(el)) || tag === 'IFRAME';
        let show = interactive || role === 'heading' || LANDMARK.has(role) || (role === 'img' && el.getAttribute('alt')) ||
          (full && (STRUCTURE.has(role) || role));
        // An element with visibility hidden shows nothing and takes no
        // clicks; its children may be visible again.
        if (show && cs.visibility !== 'visible') show = false;
        if (!show) {
          // A label that names a shown control: its text is that control's
          // name already, so it is not repeated as a text line.
          const c = tag === 'LABEL' && el.control;
          if (c && !c.hasAttribute('aria-label') && !c.hasAttribute('aria-labelledby') && boxed(c) && (seen(c) || hiddenControl(c))) {
            flush(st, depth);
            walk(el, depth, { text: '', drop: true }, cvs);
            continue;
          }
          // A block is a line of its own, before and after; a cell or
          // inline-block is set off by spaces ("<td>x</td><td>y</td>" is
          // "x y", never "xy").
          // (An <svg> or <math> is a line of its own whatever its display.)
          const box = /^(svg|math)$/.test(tag) ? 'block' : boxOf(el);
          if (box === 'block') flush(st, depth);
          else if (box === 'gap') st.text += ' ';
          walk(el, depth, st, cvs);
          if (box === 'block') flush(st, depth);
          else if (box === 'gap') st.text += ' ';
          continue;
        }
        flush(st, depth);
        elementLine(el, tag, role, depth, cvs, false);
      }
    };
    // elementLine lists el (role role, visibility state vs) and what is in
    // it; away: el is a native control a sighted reader does not see.
    const elementLine = (el, tag, role, depth, vs, away) => {
      const interactive = INTERACTIVE.has(role) || (!role && focusable(el)) || tag === 'IFRAME';
      const name = nameOf(el, role, vs);
      let line = '- ' + (role || 'generic');
      if (name) line += ' ' + q(cap(name, full ? 400 : 150));
      if (role === 'heading') {
        const lv = el.getAttribute('aria-level') || (/^H([1-6])$/.exec(tag) || [])[1];
        if (lv) line += ' [level=' + lv + ']';
      }
      if (role === 'checkbox' || role === 'radio' || role === 'switch' || role === 'menuitemcheckbox') {
        const c = el.checked !== undefined ? el.checked : el.getAttribute('aria-checked') === 'true';
        if (c) line += ' [checked]';
      }
      if (el.disabled || el.getAttribute('aria-disabled') === 'true') line += ' [disabled]';
      else if (((tag === 'INPUT' || tag === 'TEXTAREA') && el.readOnly) || el.getAttribute('aria-readonly') === 'true') line += ' [readonly]';
      if (el.getAttribute('aria-expanded')) line += ' [expanded=' + el.getAttribute('aria-expanded') + ']';
      if (tag === 'OPTION' && el.selected) line += ' [selected]';
      if (full && role === 'link' && el.getAttribute('href')) line += ' [url=' + cap(el.href || el.getAttribute('href'), 300) + ']';
      if (away) line += ' [visually hidden]';
      if (interactive || full || away) { line += ' [ref=' + refOf(el) + ']'; refs++; }
      let value = '';
      if (away) {
        // No value: it is not seen.
      } else if ((role === 'textbox' || role === 'searchbox' || role === 'spinbutton' || role === 'combobox' || role === 'slider') &&
        'value' in el && tag !== 'BUTTON') {
        value = tag === 'SELECT' ? (el.selectedOptions[0] ? squash(el.selectedOptions[0].textContent) : '') :
          ((el.getAttribute('type') || '').toLowerCase() === 'password' ? (el.value ? '••••' : '') : el.value);
      } else if (role === 'textbox' && el.isContentEditable) value = squash(textOf(el, 0, vs));
      // Children: containers, frames and structure are walked; named leaf
      // controls (their text is their name), fields (their text is their
      // value) and hidden controls are not.
      const sub = { text: '' };
      const start = lines.length;
      const leaf = away || tag === 'TEXTAREA' || tag === 'INPUT' ||
        (INTERACTIVE.has(role) && role !== 'listbox' && role !== 'combobox' && name) || role === 'heading' || role === 'img';
      lines.push('');
      if (tag === 'IFRAME' || tag === 'FRAME') {
        let doc = null;
        try { doc = el.contentDocument; } catch (e) {}
        if (doc && doc.body) walk(doc.body, depth + 1, sub, { ...visibility.root, op: vs.op, zoom: vs.zoom });
        else if (!doc) line += ' (cross-origin: not expanded)';
      } else if (!leaf) {
        walk(el, depth + 1, sub, vs);
      }
      flush(sub, depth + 1);
      if (value) line += ': ' + q(cap(squash(value), 200));
      else if (lines.length > start + 1) line += ':';
      lines[start] = '  '.repeat(depth) + line;
      B.chars += line.length + depth * 2 + 1;
    };
    // Text is a bare list item ("- Plain text"), unquoted as YAML allows,
    // and quoted when it needs quoting to stay one scalar or could be read as
    // an element line (it starts with a role word or carries a ref marker).
    const flush = (st, depth) => {
      const t = squash(st.text);
      st.text = '';
      if (t && !st.drop) {
        const v = full ? t : cap(t, 300);
        const w = /^([a-z]+)(?=[\s:\[]|$)/.exec(v);
        const quote = /^[-\[\]{}"'#&*!|>%@`?:,]|: | #|^\s|\s$|\[ref=|^[a-z]+ ["\[]/.test(v) || (w && ROLEWORD.has(w[1]));
        emit(depth, '- ' + (quote ? q(v) : v));
      }
    };
    const st = { text: '' };
    try {
      if (document.body) walk(document.body, 0, st, visibility.root);
      flush(st, 0);
      const walked = { stopped: B.stopped, elements: B.walked, total: B.total, above: B.above };
      return { snapshot: lines.join('\n'), refs, next: G.next, title: document.title, url: location.href, walk: walked };
    } finally {
      B = null;
    }
  };

  // frameOffset returns the offset of el's document's viewport within the top
  // viewport (same-origin frames only).
  const frameOffset = (el) => {
    let x = 0, y = 0, d = el.ownerDocument;
    while (d !== document) {
      const fe = d.defaultView.frameElement;
      const r = fe.getBoundingClientRect();
      x += r.left + fe.clientLeft; y += r.top + fe.clientTop;
      d = fe.ownerDocument;
    }
    return { x, y };
  };
  const hitAt = (x, y) => {
    let d = document, ox = 0, oy = 0, e = null;
    for (let i = 0; i < 10; i++) {
      e = d.elementFromPoint(x - ox, y - oy);
      while (e && e.shadowRoot) {
        const inner = e.shadowRoot.elementFromPoint(x - ox, y - oy);
        if (!inner || inner === e) break;
        e = inner;
      }
      if (e && (e.tagName === 'IFRAME' || e.tagName === 'FRAME')) {
        let cd = null;
        try { cd = e.contentDocument; } catch (err) {}
        if (!cd) return e;
        const r = e.getBoundingClientRect();
        ox += r.left + e.clientLeft; oy += r.top + e.clientTop;
        d = cd;
        continue;
      }
      return e;
    }
    return e;
  };
  const contains = (outer, n) => {
    for (let c = n; c; c = c.parentNode || c.host) if (c === outer) return true;
    return false;
  };
  const describe = (el) => {
    const r = roleOf(el);
    const n = nameOf(el, r) || squash(textOf(el, 0));
    return (r || el.tagName.toLowerCase()) + (n ? ' ' + jsonQuote(cap(n, 80)) : '');
  };

  switch (op) {
    case 'snapshot':
      return snapshot(!!arg.full, arg.budget);
    case 'point': {
      const el = resolve(arg.ref);
      if (!el) return { stale: true, next: G.next };
      // A disabled control (also through a disabled <fieldset>) gets no
      // click from the browser: clicking it would report success while
      // nothing happened.
      if (el.matches && el.matches(':disabled')) return { disabled: true, by: describe(el), next: G.next };
      const vw = innerWidth, vh = innerHeight;
      let rs = el.getClientRects();
      if (!rs.length) return { hidden: true, next: G.next };
      const off0 = frameOffset(el);
      let r = rs[0];
      if (r.top + off0.y < 0 || r.bottom + off0.y > vh || r.left + off0.x < 0 || r.right + off0.x > vw) {
        el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
        rs = el.getClientRects();
        if (!rs.length) return { hidden: true, next: G.next };
        r = rs[0];
      }
      const off = frameOffset(el);
      const x = off.x + r.left + r.width / 2, y = off.y + r.top + r.height / 2;
      if (r.width === 0 || r.height === 0) return { hidden: true, next: G.next };
      const hit = hitAt(x, y);
      let ok = !!hit && contains(el, hit);
      if (!ok && hit) {
        // A label forwards its click to its control.
        const lab = hit.closest && hit.closest('label');
        if (lab && lab.control === el) ok = true;
      }
      if (!ok && hit) return { intercepted: refOf(hit), by: describe(hit), next: G.next };
      return { x, y, next: G.next };
    }
    case 'focus': {
      const el = resolve(arg.ref);
      if (!el) return { stale: true };
      const tag = el.tagName;
      const t = (el.getAttribute('type') || 'text').toLowerCase();
      const textual = (tag === 'INPUT' && !['checkbox', 'radio', 'button', 'submit', 'reset', 'image', 'file', 'range', 'color', 'hidden'].includes(t)) || tag === 'TEXTAREA';
      if (!textual && !el.isContentEditable) return { editable: false, what: describe(el) };
      // A disabled (also through a disabled <fieldset>) or read-only field
      // takes no typing: inserting text would report success and leave
      // the value unchanged.
      if (textual && (el.matches(':disabled') || el.readOnly)) return { editable: false, what: describe(el), why: el.matches(':disabled') ? 'disabled' : 'read-only' };
      el.scrollIntoView({ block: 'center', inline: 'center', behavior: 'instant' });
      el.focus();
      if (textual) {
        try { el.select(); } catch (e) {}
        if (arg.clear) {
          el.value = '';
          el.dispatchEvent(new Event('input', { bubbles: true }));
        }
      } else {
        const s = el.ownerDocument.getSelection();
        const range = el.ownerDocument.createRange();
        range.selectNodeContents(el);
        s.removeAllRanges(); s.addRange(range);
      }
      return { editable: true, focused: el.ownerDocument.activeElement === el };
    }
    case 'changed': {
      const el = resolve(arg.ref);
      if (el) el.dispatchEvent(new Event('change', { bubbles: true }));
      return true;
    }
    case 'frameref': {
      // this = an <iframe> element: its ref and the top-viewport offset of its
      // content box (frames of another origin are snapshotted separately).
      const r = this.getBoundingClientRect();
      const o = frameOffset(this);
      return { ref: refOf(this), x: o.x + r.left + this.clientLeft, y: o.y + r.top + this.clientTop, next: G.next };
    }
    case 'quiet':
      return { since: performance.now() - G.lastMut, ready: document.readyState };
    case 'scroll':
      scrollBy(0, arg.dy);
      return { y: scrollY };
    case 'images':
      return [...document.images].map((i) => ({ src: i.currentSrc || i.src, alt: i.getAttribute('alt') || '', width: i.naturalWidth || i.width, height: i.naturalHeight || i.height }))
        .filter((i) => i.src && !i.src.startsWith('data:'));
    case 'annotate': {
      const host = document.createElement('div');
      host.id = '__gh_annot';
      host.style.cssText = 'position:fixed;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none';
      const root = host.attachShadow({ mode: 'closed' });
      const out = [];
      for (const [ref, w] of G.byRef) {
        const el = w.deref();
        if (!el || !live(el)) continue;
        const r = el.getBoundingClientRect();
        const o = frameOffset(el);
        if (r.width === 0 || r.bottom + o.y < 0 || r.top + o.y > innerHeight) continue;
        const b = document.createElement('div');
        b.style.cssText = `position:fixed;left:${r.left + o.x}px;top:${r.top + o.y}px;width:${r.width}px;height:${r.height}px;outline:2px solid #e11;`;
        const l = document.createElement('span');
        l.textContent = ref;
        l.style.cssText = 'position:absolute;left:0;top:-14px;font:bold 11px monospace;background:#e11;color:#fff;padding:0 2px';
        b.appendChild(l);
        root.appendChild(b);
        out.push({ ref, label: describe(el) });
      }
      document.documentElement.appendChild(host);
      return out;
    }
    case 'unannotate': {
      const h = document.getElementById('__gh_annot');
      if (h) h.remove();
      return true;
    }
  }
  return null;
}
